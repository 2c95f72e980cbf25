"""The ingest: the real corpus once, a no-op re-ingest, and a failure that leaves search answering."""
from __future__ import annotations

import dataclasses

import pytest

from groundchat.search.ingest import manifest, run_ingest
from groundchat.search.embedded import EmbeddedIndex, EmbeddedStore
from groundchat.search.service import SearchService
from tests.corpus_support import WordHashEmbedder


def test_full_corpus_indexed_then_reingest_is_a_no_op(real_index):
    store = EmbeddedStore(real_index["path"])
    meta = store.serving_meta()
    assert int(meta["chunks"]) > 450
    assert meta["model_id"] == real_index["embedder"].model_id
    again = run_ingest(real_index["specs"], store, real_index["embedder"])
    assert again.changed is False
    assert again.lines() == ["nothing changed (every source hash and the model match); the serving index was kept"]
    assert store.serving_meta()["built_at"] == meta["built_at"]


def test_changed_docs_reconvert_only_docs_and_reuse_vectors(index_copy, real_index, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "contexts.md").write_text("# Context levels\n\nWhich context level costs least per run.\n")
    specs = [s if s.name != "docs" else dataclasses.replace(s, path=docs) for s in real_index["specs"]]
    counting = _Counting(real_index["embedder"])
    summary = run_ingest(specs, EmbeddedStore(index_copy), counting)
    status = {s.source: (s.status, s.added, s.embedded) for s in summary.sources}
    assert status["wcag22"][0] == status["eaa"][0] == "unchanged"
    assert status["docs"] == ("converted", 1, 1)
    assert counting.texts == 1  # one new chunk embedded, nothing else
    svc = SearchService(EmbeddedIndex(index_copy), real_index["embedder"])
    assert svc.search("context level cost per run", sources=["docs"]).passages[0].section == "contexts.md > Context levels"


def test_a_converter_failing_half_way_leaves_the_serving_index(index_copy, real_index, tmp_path):
    svc = SearchService(EmbeddedIndex(index_copy), real_index["embedder"])
    before = [p.ref for p in svc.search("contrast ratio of text").passages]
    assert before

    def broken(path):
        raise RuntimeError("converter failed half-way")

    specs = [dataclasses.replace(s, convert=broken) if s.name == "eaa" else s for s in real_index["specs"]]
    with pytest.raises(RuntimeError, match="half-way"):
        run_ingest(specs, EmbeddedStore(index_copy), real_index["embedder"], force=True)
    assert [p.ref for p in svc.search("contrast ratio of text").passages] == before
    assert not list(tmp_path.glob("index.sqlite.building-*"))  # the half-built index was thrown away


def test_another_model_rebuilds_everything(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nalpha\n\n## B\n\nbeta\n")
    specs = [s for s in manifest(tmp_path / "no-corpus", docs) if s.name == "docs"]
    store = EmbeddedStore(tmp_path / "i.sqlite")
    events = []
    first = run_ingest(specs, store, WordHashEmbedder("m1"), progress=lambda *e: events.append(e))
    assert first.changed and first.total_chunks == 2
    assert ("embed", 2, 2) in events and ("convert:docs", 1, 1) in events
    assert run_ingest(specs, store, WordHashEmbedder("m1")).changed is False
    second = run_ingest(specs, store, WordHashEmbedder("m2"))
    assert second.changed and second.sources[0].embedded == 2
    assert store.serving_meta()["model_id"] == "m2"


def test_a_new_converter_version_reconverts_and_new_index_text_reembeds(tmp_path, monkeypatch):
    import groundchat.search.ingest as ingest_module

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nalpha\n\n## B\n\nbeta\n")
    specs = [s for s in manifest(tmp_path / "no-corpus", docs) if s.name == "docs"]
    store = EmbeddedStore(tmp_path / "i.sqlite")
    run_ingest(specs, store, WordHashEmbedder("m1"))
    assert store.serving_meta()["index_text"] == ingest_module.INDEX_TEXT_VERSION
    # Same files, a converter that now writes different chunks: the source is converted again.
    bumped = [dataclasses.replace(s, version=s.version + "-next") for s in specs]
    again = run_ingest(bumped, store, WordHashEmbedder("m1"))
    assert again.changed and again.sources[0].status == "converted"
    assert again.sources[0].embedded == 0  # same chunk ids, same derived text: vectors reused
    # The text derived for the index changed: every vector is computed again, none reused.
    monkeypatch.setattr(ingest_module, "INDEX_TEXT_VERSION", "test-next")
    third = run_ingest(bumped, store, WordHashEmbedder("m1"))
    assert third.changed and third.sources[0].embedded == 2
    assert store.serving_meta()["index_text"] == "test-next"


class _Counting:
    def __init__(self, inner):
        self.inner, self.texts = inner, 0
        self.model_id, self.dimension = inner.model_id, inner.dimension

    def embed(self, texts):
        self.texts += len(texts)
        return self.inner.embed(texts)
