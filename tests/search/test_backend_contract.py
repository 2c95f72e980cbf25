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
from tests.opensearch_node_support import fresh_alias, index_blocked

TEXTS = [
    ("wcag22", "2.5.8", "Target size minimum: pointer targets need two dozen CSS pixels each way"),
    ("wcag22", "1.4.3", "Contrast minimum: words need a high enough contrast ratio against their background"),
    ("eaa", "Article 4(1)", "Sellers may offer on the market only products that meet the rules"),
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
        self.requests = count_requests(self.client)
        self.alias = fresh_alias()
        self.store = OpenSearchStore(self.client, self.alias)
        self.index = OpenSearchIndex(self.client, self.alias)

    def build(self, embedder, texts=TEXTS, meta=None):
        chunks = chunks_of(texts)
        build = self.store.begin(model_id=embedder.model_id, dimension=embedder.dimension)
        build.add(chunks, embedder.embed([c.text for c in chunks]))
        build.commit(meta or {"source_hashes": "{}"})
        return build

    def serving(self):
        """What a reader is served now: the index behind the alias, or the file a swap renamed in."""
        if self.kind == "embedded":
            st = self.store.path.stat()
            return st.st_ino, st.st_mtime_ns
        return sorted(self.client.indices.get_alias(name=self.alias))

    def close(self):
        if self.kind == "opensearch":
            self.client.indices.delete(index=f"{self.alias}-*", ignore_unavailable=True)


def count_requests(client):
    """The requests a client sends, as (method, path): the node's own answers are not altered."""
    sent = []
    perform = client.transport.perform_request

    def recording(method, url, *args, **kwargs):
        sent.append((method, url.split("?")[0]))
        return perform(method, url, *args, **kwargs)

    client.transport.perform_request = recording
    return sent


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


def test_on_the_node_the_three_searches_are_one_msearch(backend):
    if backend.kind != "opensearch":
        pytest.skip("the embedded index answers in process")
    embedder = WordHashEmbedder()
    backend.build(embedder)
    SearchService(backend.index, embedder).search("pointer targets")  # the model id is read once
    backend.requests.clear()
    legs = backend.index.legs("contrast ratio", embedder.embed_query("contrast ratio"), 3, None,
                              ["bm25", "vector", ROWS])
    assert [len(legs[n]) for n in ("bm25", "vector", ROWS)] == [1, 3, 1]
    assert backend.requests == [("POST", f"/{backend.alias}/_msearch")]


def test_a_source_filter_holds_in_each_leg_on_its_own(backend):
    embedder = WordHashEmbedder()
    backend.build(embedder)
    query = "products on the market, contrast ratio, pointer targets, cost per run"
    vector = embedder.embed_query(query)
    only_eaa = backend.index.legs(query, vector, 5, ["eaa"], ["bm25", "vector"])
    assert [h.chunk.section for h in only_eaa["bm25"]] == ["Article 4(1)"]
    assert [h.chunk.section for h in only_eaa["vector"]] == ["Article 4(1)"]
    two = backend.index.legs(query, vector, 5, ["wcag22", "docs"], ["bm25", "vector"])
    assert sorted(h.chunk.section for h in two["bm25"]) == ["1.4.3", "2.5.8", "guide.md > Costs"]
    assert sorted(h.chunk.section for h in two["vector"]) == ["1.4.3", "2.5.8", "guide.md > Costs"]


def test_a_swap_to_an_index_of_another_model_is_refused_by_a_reader_that_served_the_old(backend):
    """A serving process keeps its index object across a re-ingest; the model it checks must be the
    one of the index it is served now, not the one it read first."""
    old, new = WordHashEmbedder("model-a"), WordHashEmbedder("model-b")
    backend.build(old)
    assert SearchService(backend.index, old).search("contrast ratio").outcome == "hit"
    backend.build(new)
    stale = SearchService(backend.index, old).search("contrast ratio")
    assert (stale.outcome, stale.reason) == ("unavailable", "embedding_model_mismatch")
    fresh = SearchService(backend.index, new).search("contrast ratio")
    assert fresh.outcome == "hit" and fresh.passages[0].section == "1.4.3"


def docs_source(tmp_path, guide: str):
    """A docs folder of one page, and the ingest's one source spec that reads it."""
    from groundchat.search.ingest import manifest

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(guide)
    return docs, [s for s in manifest(tmp_path / "no-corpus", docs) if s.name == "docs"]


class CountingEmbedder(WordHashEmbedder):
    def __init__(self):
        super().__init__()
        self.texts = 0

    def embed(self, texts):
        self.texts += len(texts)
        return super().embed(texts)


def test_re_ingesting_unchanged_sources_does_no_work_and_a_change_embeds_only_the_new_chunk(backend, tmp_path):
    from groundchat.search.ingest import run_ingest

    docs, specs = docs_source(tmp_path, "# Guide\n\nfocus order of controls\n\n## Costs\n\nthe price of a run\n")
    embedder = CountingEmbedder()
    first = run_ingest(specs, backend.store, embedder, use_vector_cache=False)
    assert (first.changed, first.total_chunks, embedder.texts) == (True, 2, 2)
    serving = backend.serving()

    again = run_ingest(specs, backend.store, embedder, use_vector_cache=False)
    assert again.changed is False and embedder.texts == 2
    assert backend.serving() == serving

    (docs / "guide.md").write_text("# Guide\n\nfocus order of controls\n\n## Costs\n\nwhat a checklist run costs\n")
    third = run_ingest(specs, backend.store, embedder, use_vector_cache=False)
    [change] = third.sources
    assert (change.status, change.added, change.removed, change.embedded) == ("converted", 1, 1, 1)
    assert embedder.texts == 3  # the unchanged chunk's vector came back from the serving index
    assert backend.serving() != serving
    service = SearchService(backend.index, embedder)
    assert [p.section for p in service.search("checklist", leg="bm25").passages] == ["guide.md > Guide > Costs"]
    assert service.search("price", leg="bm25").outcome == "empty"


def test_an_ingest_whose_converter_fails_leaves_the_serving_index(backend, tmp_path):
    import dataclasses

    from groundchat.search.ingest import run_ingest

    _, specs = docs_source(tmp_path, "# Guide\n\nfocus order of controls\n")
    embedder = WordHashEmbedder()
    run_ingest(specs, backend.store, embedder)
    serving = backend.serving()

    def broken(path):
        raise RuntimeError("converter failed half-way")

    with pytest.raises(RuntimeError, match="half-way"):
        run_ingest([dataclasses.replace(s, convert=broken) for s in specs], backend.store, embedder, force=True)
    assert backend.serving() == serving
    if backend.kind == "opensearch":  # the half-built index is gone too
        assert sorted(backend.client.indices.get(index=f"{backend.alias}-*")) == serving
    assert [p.section for p in SearchService(backend.index, embedder).search("focus order", leg="bm25").passages] \
        == ["guide.md > Guide"]


def test_on_the_node_a_blocked_index_is_unavailable_and_named_by_its_status(backend):
    """What a node does that no fake of ours decides: an index whose reads are blocked answers 403,
    and the search says so rather than finding nothing."""
    if backend.kind != "opensearch":
        pytest.skip("the embedded index has no index blocks")
    embedder = WordHashEmbedder()
    backend.build(embedder)
    [serving] = backend.serving()
    with index_blocked(backend.client, serving, "read"):
        result = SearchService(backend.index, embedder).search("contrast ratio")
    assert (result.outcome, result.reason, result.passages) == ("unavailable", "upstream_403", [])
    assert SearchService(backend.index, embedder).search("contrast ratio").outcome == "hit"


def test_on_the_node_a_full_disk_keeps_the_serving_index_searchable_and_a_rebuild_changes_nothing(backend):
    """The disk's flood stage puts `read_only_allow_delete` on the node's indices: searches still
    answer, and a re-ingest cannot move the alias off the blocked index (429), so it fails as an
    aborted build does, and the index it had begun is not left behind."""
    if backend.kind != "opensearch":
        pytest.skip("the embedded index has no disk watermark")
    from opensearchpy.exceptions import TransportError

    embedder = WordHashEmbedder()
    backend.build(embedder)
    [serving] = backend.serving()
    with index_blocked(backend.client, serving, "read_only_allow_delete"):
        assert SearchService(backend.index, embedder).search("contrast ratio").outcome == "hit"
        with pytest.raises(TransportError) as refused:
            backend.build(embedder, texts=TEXTS[:1])
        assert refused.value.status_code == 429
        assert backend.serving() == [serving]
        assert sorted(backend.client.indices.get(index=f"{backend.alias}-*")) == [serving]


# "in" and "check" are in every passage; the phrase "check in" is in one, "kiosk" in two. FTS5
# weighs a phrase by the passages that hold it, so the one with the phrase leads; a Lucene phrase
# query would sum its words' idfs (both near nothing here) and put it behind the kiosks. The node's
# shingle subfields give the phrase its own idf.
PHRASES = [
    ("eaa", "P", "Travellers check in at the desk in the hall and check the board"),
    ("eaa", "K", "A kiosk in the hall: check the screen"),
    ("eaa", "Q", "A kiosk sells papers in the station, check the price of each one first"),
    ("eaa", "A", "Check the lift in the morning"),
    ("eaa", "B", "Check the ramp in the evening"),
    ("eaa", "C", "In winter, check the doors"),
]


@pytest.mark.parametrize("query, first", [("check-in kiosk", "P"), ("check-in", "P"), ("kiosk", "K")])
def test_a_phrase_weighs_as_rare_as_the_passages_that_hold_it(backend, query, first):
    backend.build(WordHashEmbedder(), texts=PHRASES)
    hits = backend.index.legs(query, None, 6, ["eaa"], ["bm25"])["bm25"]
    assert hits[0].chunk.section == first
    if query == "check-in kiosk":
        assert [h.chunk.section for h in hits] == ["P", "K", "Q"]


def test_a_phrase_of_three_tokens_is_one_criterion_number(backend):
    texts = [("wcag22", "1.4.3", "Contrast 1.4.3 of text"), ("wcag22", "4.1.3", "Status messages 4 1 3 1"),
             ("wcag22", "1.3.1", "Info 1 3 1 4 and relationships 1.3.1"), ("wcag22", "3.1.4", "Abbreviations 3 1 4")]
    backend.build(WordHashEmbedder(), texts=texts)
    hits = backend.index.legs("1.4.3", None, 4, ["wcag22"], ["bm25"])["bm25"]
    assert [h.chunk.section for h in hits] == ["1.4.3"]


def test_an_index_of_another_layout_is_built_again_with_its_vectors_reused(backend, tmp_path):
    """A new field or analyzer in the template (or the embedded schema) reaches the serving index at
    the next ingest, though no source changed; the stored vectors are reused."""
    from groundchat.search.ingest import run_ingest

    _, specs = docs_source(tmp_path, "# Guide\n\nfocus order of controls\n\n## Costs\n\nthe price of a run\n")
    embedder = CountingEmbedder()
    assert run_ingest(specs, backend.store, embedder, use_vector_cache=False).changed
    serving = backend.serving()
    assert backend.store.serving_meta()["layout"] == type(backend.store).layout
    backend.store.layout = "an-older-layout"
    again = run_ingest(specs, backend.store, embedder, use_vector_cache=False)
    assert again.changed is True and embedder.texts == 2
    assert backend.serving() != serving
    assert backend.store.serving_meta()["layout"] == "an-older-layout"
    assert run_ingest(specs, backend.store, embedder, use_vector_cache=False).changed is False


def test_the_graph_is_stored_with_the_index_and_its_passages_hydrate_by_id(backend):
    from groundchat.search.graph_build import build_graph

    embedder = WordHashEmbedder()
    chunks = chunks_of(TEXTS)
    build = backend.store.begin(model_id=embedder.model_id, dimension=embedder.dimension)
    build.add(chunks, embedder.embed([c.text for c in chunks]))
    graph = build_graph(chunks, rule_criteria={"target-size": ["2.5.8"]})
    build.add_graph(graph)
    build.commit({"source_hashes": "{}"})
    served = backend.index.graph()
    assert served is not None and served.nodes == graph.nodes and sorted(served.edges) == sorted(graph.edges)
    assert ("wcag22:2.5.8", "axe:target-size", "tested_by") in served.edges
    wanted = [chunks[2].id, chunks[0].id, "not-a-chunk"]
    assert sorted(c.section for c in backend.index.chunks_by_id(wanted)) == ["2.5.8", "Article 4(1)"]
    # The graph is no passage: no leg finds it, whatever the question.
    result = SearchService(backend.index, embedder).search("graph nodes edges tested_by target-size")
    assert all(p.source in ("wcag22", "eaa", "docs") for p in result.passages)


def test_an_index_built_without_a_graph_serves_none(backend):
    backend.build(WordHashEmbedder())
    assert backend.index.graph() is None


def test_an_ingest_from_the_official_source_records_its_check_on_either_backend_and_a_reader_sees_it(backend, tmp_path):
    import dataclasses

    from groundchat.corpus.source_checks import checked_sources
    from groundchat.search.index_meta import serving_meta
    from groundchat.search.ingest import run_ingest

    docs, specs = docs_source(tmp_path, "# Guide\n\nfocus order of controls\n")
    official = [dataclasses.replace(s, official=True) for s in specs]
    run_ingest(official, backend.store, WordHashEmbedder(), use_vector_cache=False)
    first = checked_sources(serving_meta(backend.index))
    assert list(first) == ["docs"] and first["docs"].changed is False
    # A later check that read a changed text, whose build then failed, is recorded on the serving index.
    (docs / "guide.md").write_text("# Guide\n\nfocus order of controls, amended\n")

    def broken(path):
        raise RuntimeError("converter failed")

    with pytest.raises(RuntimeError):
        run_ingest([dataclasses.replace(s, convert=broken) for s in official], backend.store, WordHashEmbedder(),
                   use_vector_cache=False)
    assert checked_sources(serving_meta(backend.index))["docs"].changed is True
