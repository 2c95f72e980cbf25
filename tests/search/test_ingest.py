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
    # The version follows from the notes, the vocabulary and the derivation's code (never bumped by hand).
    from groundchat.corpus.index_text import contents_version

    assert store.serving_meta()["index_text"] == ingest_module.INDEX_TEXT_VERSION == contents_version()
    # Same files, a converter that now writes different chunks: the source is converted again.
    bumped = [dataclasses.replace(s, version=s.version + "-next") for s in specs]
    again = run_ingest(bumped, store, WordHashEmbedder("m1"))
    assert again.changed and again.sources[0].status == "converted"
    assert again.sources[0].embedded == 0  # same chunk ids, same derived text: vectors reused
    # The text derived for the index changed: no vector is reused from the index by chunk id. Here
    # the derived text is in fact the same, so the vector cache has both (keyed by the exact text).
    monkeypatch.setattr(ingest_module, "INDEX_TEXT_VERSION", "test-next")
    third = run_ingest(bumped, store, WordHashEmbedder("m1"))
    assert third.changed and (third.sources[0].embedded, third.sources[0].cached) == (0, 2)
    assert store.serving_meta()["index_text"] == "test-next"
    monkeypatch.setattr(ingest_module, "INDEX_TEXT_VERSION", "test-next-again")
    fourth = run_ingest(bumped, store, WordHashEmbedder("m1"), use_vector_cache=False)
    assert (fourth.sources[0].embedded, fourth.sources[0].cached) == (2, 0)


class _Counting:
    def __init__(self, inner):
        self.inner, self.texts = inner, 0
        self.model_id, self.dimension = inner.model_id, inner.dimension

    def embed(self, texts):
        self.texts += len(texts)
        return self.inner.embed(texts)


# -- the vector cache beside a local index ---------------------------------------------------------

def _two_sources(tmp_path):
    """Our docs twice over, as two sources with different texts (no corpus needed)."""
    first, second = tmp_path / "docs-a", tmp_path / "docs-b"
    for folder in (first, second):
        folder.mkdir()
    (first / "a.md").write_text("# Alpha\n\nshort\n\n## Beta\n\n" + "a much longer section about focus order " * 6 + "\n")
    (second / "b.md").write_text("# Gamma\n\nmiddle length text about contrast\n\n## Delta\n\ntiny\n")
    [docs] = [s for s in manifest(tmp_path / "no-corpus", first) if s.name == "docs"]
    return [docs, dataclasses.replace(docs, name="more-docs", path=second)]


class _Recording:
    """Records the texts of each embed call (an embedder without batches of its own, like Titan)."""

    def __init__(self, model_id="m1"):
        self.inner = WordHashEmbedder(model_id)
        self.model_id, self.dimension = model_id, self.inner.dimension
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        return self.inner.embed(texts)


def test_texts_of_every_source_are_embedded_together_shortest_first_with_progress(tmp_path):
    specs = _two_sources(tmp_path)
    embedder, events = _Recording(), []
    summary = run_ingest(specs, EmbeddedStore(tmp_path / "i.sqlite"), embedder, progress=lambda *e: events.append(e))
    sent = [t for call in embedder.calls for t in call]
    assert len(sent) == summary.total_chunks == 4
    assert [len(t) for t in sent] == sorted(len(t) for t in sent)  # one order across both sources
    assert {s.source: s.embedded for s in summary.sources} == {"docs": 2, "more-docs": 2}
    assert [e for e in events if e[0] == "embed"][-1] == ("embed", 4, 4)


def test_a_rebuilt_index_takes_known_texts_from_the_cache_and_embeds_only_new_ones(tmp_path):
    specs = _two_sources(tmp_path)
    index = tmp_path / "i.sqlite"
    first = run_ingest(specs, EmbeddedStore(index), WordHashEmbedder("m1"))
    before = {c.id: v.tolist() for c, v in EmbeddedStore(index).serving_chunks("docs")}
    assert (tmp_path / "i.sqlite.vectors").exists()
    index.unlink()  # the index is gone; its vectors are not
    (tmp_path / "docs-b" / "b.md").write_text("# Gamma\n\nmiddle length text about contrast\n\n## Delta\n\nnew words\n")
    counting = _Recording()
    again = run_ingest(specs, EmbeddedStore(index), counting, force=True)
    assert first.total_chunks == again.total_chunks == 4
    assert [t for call in counting.calls for t in call] == [t for t in counting.calls[0] if "new words" in t]
    assert sum(s.embedded for s in again.sources) == 1 and sum(s.cached for s in again.sources) == 3
    assert "1 from the vector cache" in "\n".join(again.lines())
    after = {c.id: v.tolist() for c, v in EmbeddedStore(index).serving_chunks("docs")}  # both sources' chunks
    kept = set(before) & set(after)
    assert len(kept) == 3 and all(after[i] == before[i] for i in kept)  # the same vectors, from the cache


def test_the_cache_is_per_model_bounded_and_an_unreadable_file_is_started_again(tmp_path):
    import numpy as np

    from groundchat.search.vector_cache import VectorCache

    path = tmp_path / "cache"
    one = VectorCache(path, model_id="m1", dimension=2, max_rows=3)
    one.put_many([("a", np.array([1, 0])), ("b", np.array([0, 1]))])
    assert VectorCache(path, model_id="m2", dimension=2).get_many(["a", "b"]) == {}  # another model's vectors
    assert VectorCache(path, model_id="m1", dimension=3).get_many(["a"]) == {}  # another size is not served
    assert np.array_equal(one.get_many(["a"])["a"], [1, 0])  # "a" is now the most recently used
    one.put_many([("c", np.array([1, 1])), ("d", np.array([2, 2]))])
    assert one.count() == 3 and set(one.get_many(["a", "b", "c", "d"])) == {"a", "c", "d"}  # "b" went first
    path.write_bytes(b"this is not a database" * 100)
    fresh = VectorCache(path, model_id="m1", dimension=2)
    assert fresh.get_many(["a"]) == {} and fresh.rebuilt
    fresh.put_many([("a", np.array([3, 4]))])
    assert np.array_equal(fresh.get_many(["a"])["a"], [3, 4])


def test_an_unreadable_cache_does_not_fail_the_ingest(tmp_path):
    specs = _two_sources(tmp_path)
    (tmp_path / "i.sqlite.vectors").write_bytes(b"garbage" * 1000)
    summary = run_ingest(specs, EmbeddedStore(tmp_path / "i.sqlite"), WordHashEmbedder("m1"))
    assert summary.total_chunks == 4 and sum(s.embedded for s in summary.sources) == 4
    (tmp_path / "i.sqlite").unlink()
    again = run_ingest(specs, EmbeddedStore(tmp_path / "i.sqlite"), WordHashEmbedder("m1"))
    assert sum(s.cached for s in again.sources) == 4  # the cache was started again and filled


def test_a_killed_build_leaves_nothing_behind_once_the_next_build_starts(tmp_path):
    """kill -9 half-way through a build: its file is never renamed over the serving one, so the next
    build removes it (and leaves alone the file of a build whose process still runs)."""
    import os
    import signal
    import subprocess
    import sys

    target = tmp_path / "index.sqlite"
    script = ("import sys, time; from pathlib import Path; from groundchat.search.embedded import EmbeddedBuild;"
              "b = EmbeddedBuild(Path(sys.argv[1]), model_id='m', dimension=4); print(b.path, flush=True); time.sleep(60)")
    killed = subprocess.Popen([sys.executable, "-c", script, str(target)], stdout=subprocess.PIPE, text=True)
    half_built = killed.stdout.readline().strip()
    running = subprocess.Popen([sys.executable, "-c", script, str(target)], stdout=subprocess.PIPE, text=True)
    still_building = running.stdout.readline().strip()
    try:
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait(timeout=10)
        (tmp_path / "index.sqlite.building-3f2a9c1e").write_text("an older build's leftover, no pid in its name")
        assert len(list(tmp_path.glob("index.sqlite.building-*"))) == 3

        from groundchat.search.embedded import EmbeddedBuild

        build = EmbeddedBuild(target, model_id="m", dimension=4)
        build.commit({})
        assert sorted(p.name for p in tmp_path.glob("index.sqlite.building-*")) == [os.path.basename(still_building)]
        assert not os.path.exists(half_built) and target.exists()
    finally:
        running.kill()
        running.wait(timeout=10)
