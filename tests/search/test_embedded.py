"""The embedded backend and the search service on a small index built with a deterministic embedder."""
from __future__ import annotations

import numpy as np
import pytest

from groundchat.corpus.chunk import make_chunk
from groundchat.search.embedded import EmbeddedIndex, EmbeddedStore
from groundchat.search.service import SearchService
from tests.corpus_support import WordHashEmbedder

TEXTS = [
    ("wcag22", "2.5.8", "Target size minimum: pointer targets need two dozen CSS pixels each way", "2024-12-12T00:00:00Z"),
    ("wcag22", "1.4.3", "Contrast minimum: words need a high enough contrast ratio against their background", "2024-12-12T00:00:00Z"),
    ("eaa", "Article 4(1)", "Sellers may offer on the market only products that meet the rules", "2019-06-07T00:00:00Z"),
    ("docs", "guide.md > Costs", "The cost per run of each context level is measured in dollars " * 40, None),
]


def _build(path, embedder, texts=TEXTS):
    chunks = [make_chunk(source=s, section=sec, title=sec, text=t, url=f"https://x/#{sec}", updated_at=u)
              for s, sec, t, u in texts]
    build = EmbeddedStore(path).begin(model_id=embedder.model_id, dimension=embedder.dimension)
    build.add(chunks, embedder.embed([c.text for c in chunks]))
    build.commit({"source_hashes": "{}"})
    return chunks


@pytest.fixture
def service(tmp_path):
    embedder = WordHashEmbedder()
    _build(tmp_path / "index.sqlite", embedder)
    return SearchService(EmbeddedIndex(tmp_path / "index.sqlite"), embedder, max_excerpts=3, max_excerpt_chars=200)


def test_hit_with_debug_info_per_leg(service):
    result = service.search("how big must pointer targets be in CSS pixels")
    assert result.outcome == "hit"
    assert result.passages[0].section == "2.5.8"
    d = result.debug.record()
    assert d["fusion"] == "scores+rrf" and d["rrf_k"] == 60 and d["score_share"] == 0.7 and d["weights"] == {"bm25": 1.0, "vector": 1.0, "questions": 1.0}
    assert d["rerank"] == "none" and d["backend"] == "embedded" and d["embedding_model"] == "test-hash-64"
    assert d["legs"]["bm25"]["hits"] >= 1 and d["legs"]["vector"]["hits"] == 4
    # Every step of the pipeline is timed under its name (search/pipeline.py).
    assert set(d["timings_ms"]) >= {"expand", "embed", "backend", "legs", "fuse", "place", "rank", "spread", "excerpts", "total"}
    # Seed 002's names: per-leg enablement, the fusion method, the weights, the confidence threshold.
    assert (d["vector_enabled"], d["sparse_enabled"], d["graph_enabled"], d["fusion_method"]) == (True, True, False, "scores+rrf")
    assert d["legs_enabled"] == {"bm25": True, "vector": True, "questions": True, "criterion": True, "graph": False}
    assert (d["vector_weight"], d["sparse_weight"]) == (1.0, 1.0) and "confidence_threshold" in d


def test_stemming_matches_other_word_forms(service):
    result = service.search("contrasting ratios", leg="bm25")
    assert [p.section for p in result.passages] == ["1.4.3"]
    assert result.debug.record()["fusion"] == "none"


def test_empty_is_not_unavailable(service):
    result = service.search("zzzqqq", leg="bm25")
    assert (result.outcome, result.reason, result.passages) == ("empty", None, [])


def test_missing_index_is_unavailable_with_a_reason_and_no_passages(tmp_path):
    svc = SearchService(EmbeddedIndex(tmp_path / "absent.sqlite"), WordHashEmbedder())
    result = svc.search("contrast")
    assert (result.outcome, result.reason, result.passages) == ("unavailable", "index_missing", [])


def test_a_query_embedded_by_another_model_is_refused(tmp_path):
    _build(tmp_path / "index.sqlite", WordHashEmbedder("model-a"))
    svc = SearchService(EmbeddedIndex(tmp_path / "index.sqlite"), WordHashEmbedder("model-b"))
    result = svc.search("contrast")
    assert (result.outcome, result.reason) == ("unavailable", "embedding_model_mismatch")
    assert result.passages == []
    # The BM25 leg alone does not compare vectors, so it still answers.
    assert svc.search("contrast", leg="bm25").outcome == "hit"


def test_source_filter(service):
    result = service.search("products market contrast targets", sources=["eaa"])
    assert {p.source for p in result.passages} == {"eaa"}
    with pytest.raises(ValueError):
        service.search("x", sources=["nope"])


def test_ceilings_report_what_was_dropped(service):
    result = service.search("cost per run context level contrast targets products", k=10)
    assert len(result.passages) == 3  # max_excerpts, whatever k asks
    assert result.dropped["passages"] == 1
    long = next(p for p in result.passages if p.section == "guide.md > Costs")
    assert long.truncated and len(long.text) <= 202
    assert result.dropped["chars"] == len(TEXTS[3][2]) - 200


def test_freshness_oldest_date_and_undated_count(service):
    result = service.search("cost per run context level contrast targets products", k=10)
    dated = [p.updated_at for p in result.passages if p.updated_at]
    assert result.freshness.oldest_updated_at == min(dated)
    assert result.freshness.undated == sum(1 for p in result.passages if p.updated_at is None) == 1


def test_reader_sees_a_swapped_index_and_a_failed_build_changes_nothing(tmp_path):
    embedder = WordHashEmbedder()
    path = tmp_path / "index.sqlite"
    _build(path, embedder, TEXTS[:1])
    svc = SearchService(EmbeddedIndex(path), embedder)
    assert [p.section for p in svc.search("contrast ratio", leg="bm25").passages] == []
    failed = EmbeddedStore(path).begin(model_id=embedder.model_id, dimension=embedder.dimension)
    failed.add([make_chunk(source="docs", section="x", title="x", text="contrast ratio", url="u")],
               embedder.embed(["contrast ratio"]))
    failed.abort()
    assert not failed.path.exists()
    assert svc.search("contrast ratio", leg="bm25").outcome == "empty"
    _build(path, embedder, TEXTS)
    assert svc.search("contrast ratio", leg="bm25").passages[0].section == "1.4.3"


def test_vectors_of_the_wrong_shape_are_refused(tmp_path):
    build = EmbeddedStore(tmp_path / "i.sqlite").begin(model_id="m", dimension=4)
    with pytest.raises(ValueError):
        build.add([make_chunk(source="docs", section="x", title="x", text="t", url="u")], np.zeros((1, 3), np.float32))
    build.abort()


def test_get_section_exact_lookup(service):
    chunk = service.get_section("wcag22", "2.5.8")
    assert chunk is not None and chunk.text.startswith("Target size minimum")
    assert service.get_section("wcag22", "9.9.9") is None
