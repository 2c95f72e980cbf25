"""One contract, two backends: the embedded index and a real OpenSearch node answer the same calls
the same way. The fake HTTP server of test_opensearch.py is kept for what a node cannot be made to
do (the exact request bodies as documentation, an item-level 5xx inside `_msearch`)."""
from __future__ import annotations

import numpy as np
import pytest

from groundchat.corpus.chunk import QUESTIONS, make_chunk
from groundchat.search.embedded import EmbeddedIndex, EmbeddedStore

from groundchat.search.question_leg import ROWS
from groundchat.search.service import SearchService
from tests.corpus_support import WordHashEmbedder
from tests.opensearch_node_support import fresh_alias

TEXTS = [
    ("wcag22", "2.5.8", "Target size minimum: pointer targets are at least 24 by 24 CSS pixels"),
    ("wcag22", "1.4.3", "Contrast minimum: text needs a contrast ratio of 4.5 to 1 against its background"),
    ("eaa", "Article 4(1)", "Member States shall ensure that economic operators place on the market only products that comply"),
    ("docs", "guide.md > Costs", "The cost per run of each context level is measured in dollars"),
    (QUESTIONS, "q-1", "how large should a button be for a finger"),
]


def chunks_of(texts):
    return [make_chunk(source=s, section=sec, title=sec, text=t, url=f"https://x/#{sec}",
                       updated_at="2024-12-12T00:00:00Z") for s, sec, t in texts]


class Backend:
    """One backend's store (what the ingest writes) and index (what a search reads)."""

    def __init__(self, kind, tmp_path, node):
        self.kind = kind
        if kind == "embedded":
            path = tmp_path / "index.sqlite"
            self.store, self.index = EmbeddedStore(path), EmbeddedIndex(path)
            return
        from opensearchpy import OpenSearch

        from groundchat.search.opensearch import OpenSearchIndex, OpenSearchStore

        self.client = OpenSearch(hosts=[node.endpoint], timeout=30, max_retries=0)
        self.alias = fresh_alias()
        self.store = OpenSearchStore(self.client, self.alias)
        self.index = OpenSearchIndex(self.client, self.alias)

    def build(self, embedder, texts=TEXTS, meta=None):
        chunks = chunks_of(texts)
        build = self.store.begin(model_id=embedder.model_id, dimension=embedder.dimension)
        build.add(chunks, embedder.embed([c.text for c in chunks]))
        build.commit(meta or {"source_hashes": "{}"})
        return build

    def close(self):
        if self.kind == "opensearch":
            self.client.indices.delete(index=f"{self.alias}-*", ignore_unavailable=True)


@pytest.fixture(params=["embedded", "opensearch"])
def backend(request, tmp_path):
    node = request.getfixturevalue("opensearch_node") if request.param == "opensearch" else None
    made = Backend(request.param, tmp_path, node)
    yield made
    made.close()


def test_both_legs_and_the_question_rows_come_from_one_call(backend):
    embedder = WordHashEmbedder()
    backend.build(embedder)
    vector = embedder.embed_query("pointer targets in CSS pixels")
    legs = backend.index.legs("pointer targets CSS pixels", vector, 3, ["wcag22", "eaa", "docs"],
                              ["bm25", "vector", ROWS])
    assert set(legs) == {"bm25", "vector", ROWS}
    assert legs["bm25"][0].chunk.section == "2.5.8"
    assert legs["vector"][0].chunk.section == "2.5.8"
    assert all(h.chunk.source != QUESTIONS for h in legs["bm25"] + legs["vector"])
    assert [h.chunk.section for h in legs[ROWS]] == ["q-1"]
    # Vector scores are cosines on both backends (the node's k-NN scores are mapped back).
    top = legs["vector"][0].score
    expected = float(np.dot(vector.vector, embedder.embed([TEXTS[0][2]])[0]))
    assert top == pytest.approx(expected, abs=1e-4)


def test_a_source_filter_holds_in_both_legs(backend):
    embedder = WordHashEmbedder()
    backend.build(embedder)
    service = SearchService(backend.index, embedder)
    result = service.search("products market contrast targets", sources=["eaa"])
    assert result.outcome == "hit"
    assert {p.source for p in result.passages} == {"eaa"}
    assert result.passages[0].section == "Article 4(1)"


def test_hit_empty_and_exact_lookup(backend):
    embedder = WordHashEmbedder()
    backend.build(embedder)
    service = SearchService(backend.index, embedder)
    assert service.search("contrasting ratios", leg="bm25").passages[0].section == "1.4.3"  # stemmed
    empty = service.search("zzzqqq", leg="bm25")
    assert (empty.outcome, empty.reason, empty.passages) == ("empty", None, [])
    chunk = service.get_section("wcag22", "2.5.8")
    assert chunk is not None and chunk.text.startswith("Target size minimum")
    assert service.get_section("wcag22", "9.9.9") is None


def test_a_missing_index_is_unavailable_not_empty(backend):
    service = SearchService(backend.index, WordHashEmbedder())
    result = service.search("contrast")
    assert (result.outcome, result.reason, result.passages) == ("unavailable", "index_missing", [])


def test_an_index_built_by_another_model_refuses_the_vector_leg(backend):
    backend.build(WordHashEmbedder("model-a"))
    service = SearchService(backend.index, WordHashEmbedder("model-b"))
    result = service.search("contrast")
    assert (result.outcome, result.reason) == ("unavailable", "embedding_model_mismatch")
    assert service.search("contrast", leg="bm25").outcome == "hit"


def test_a_swap_is_seen_at_once_and_an_aborted_build_changes_nothing(backend):
    embedder = WordHashEmbedder()
    backend.build(embedder, TEXTS[:1])
    service = SearchService(backend.index, embedder)
    assert service.search("contrast ratio", leg="bm25").outcome == "empty"
    failed = backend.store.begin(model_id=embedder.model_id, dimension=embedder.dimension)
    extra = chunks_of([("docs", "x", "contrast ratio")])
    failed.add(extra, embedder.embed(["contrast ratio"]))
    failed.abort()
    assert service.search("contrast ratio", leg="bm25").outcome == "empty"
    backend.build(embedder, TEXTS)
    assert service.search("contrast ratio", leg="bm25").passages[0].section == "1.4.3"
    assert backend.store.serving_meta()["model_id"] == embedder.model_id


def test_the_serving_chunks_come_back_with_their_vectors_for_a_no_op_re_ingest(backend):
    embedder = WordHashEmbedder()
    backend.build(embedder)
    stored = backend.store.serving_chunks("wcag22")
    assert sorted(c.section for c, _ in stored) == ["1.4.3", "2.5.8"]
    for chunk, vector in stored:
        assert np.allclose(vector, embedder.embed([chunk.text])[0], atol=1e-5)


def test_a_node_that_does_not_answer_is_unavailable(tmp_path):
    """A closed port stands for a node that stopped: the same client error either way."""
    from opensearchpy import OpenSearch

    from groundchat.search.opensearch import OpenSearchIndex
    from groundchat_cli.stack_address import free_port

    client = OpenSearch(hosts=[f"http://127.0.0.1:{free_port()}"], timeout=2, max_retries=0)
    result = SearchService(OpenSearchIndex(client, "gone"), WordHashEmbedder()).search("contrast")
    assert (result.outcome, result.reason) == ("unavailable", "upstream_unreachable")


def test_an_index_deleted_under_a_running_search_is_unavailable(backend, tmp_path):
    embedder = WordHashEmbedder()
    backend.build(embedder)
    service = SearchService(backend.index, embedder)
    assert service.search("contrast ratio").outcome == "hit"
    if backend.kind == "embedded":
        for path in tmp_path.glob("index.sqlite*"):
            path.unlink()
    else:
        backend.client.indices.delete(index=f"{backend.alias}-*")
    result = SearchService(backend.index, embedder).search("contrast ratio")
    assert (result.outcome, result.reason, result.passages) == ("unavailable", "index_missing", [])
