"""The OpenSearch backend against a local fake HTTP server: exact request bodies, recorded responses,
and the failures that must become `unavailable`."""
from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from opensearchpy import OpenSearch

from groundchat.corpus.notes import FAILURES, load as load_notes
from groundchat.corpus.chunk import make_chunk
from groundchat.search.embeddings import QueryVector
from groundchat.search.opensearch import OpenSearchBuild, OpenSearchIndex, load_template
from groundchat.search.service import SearchService
from tests.corpus_support import WordHashEmbedder

ALIAS = "groundchat-corpus"
CHUNK = make_chunk(source="wcag22", section="1.4.3", title="1.4.3 Contrast (Minimum)", text="contrast ratio 4.5:1",
                   url="https://www.w3.org/TR/WCAG22/#contrast-minimum", updated_at="2024-12-12T00:00:00Z")


class FakeOpenSearch:
    """Records every request; answers from a script of (method, path prefix) → (status, body)."""

    def __init__(self):
        self.requests: list[tuple[str, str, bytes]] = []
        self.routes: dict[tuple[str, str], tuple[int, object]] = {}
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                fake.requests.append((self.command, self.path, body))
                status, payload = fake.answer(self.command, self.path)
                data = b"" if payload is None else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = _serve

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def answer(self, method, path):
        for (m, prefix), response in self.routes.items():
            if m == method and path.split("?")[0].startswith(prefix):
                return response
        return 200, {"acknowledged": True}

    def client(self):
        return OpenSearch(hosts=[{"host": "127.0.0.1", "port": self.server.server_address[1]}], max_retries=0, timeout=5)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake():
    server = FakeOpenSearch()
    yield server
    server.close()


def _mapping(model_id="test-hash-64"):
    return 200, {f"{ALIAS}-20250101": {"mappings": {"_meta": {"model_id": model_id, "dimension": "64"}}}}


def _recorded_msearch():
    # A real `_msearch` response's shape: one entry per search, each a search response.
    hit = {"_index": f"{ALIAS}-20250101", "_id": CHUNK.id, "_score": 7.25, "_source": CHUNK.model_dump()}
    one = {"took": 3, "timed_out": False, "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
           "hits": {"total": {"value": 1, "relation": "eq"}, "max_score": 7.25, "hits": [hit]}, "status": 200}
    # The third search, the question bank's nearest questions: none in this index.
    none = {**one, "hits": {"total": {"value": 0, "relation": "eq"}, "max_score": None, "hits": []}}
    return 200, {"took": 5, "responses": [one, {**one, "hits": {**one["hits"], "hits": [{**hit, "_score": 0.83}]}}, none]}


def test_both_legs_and_the_nearest_questions_in_one_msearch_with_the_exact_body(fake):
    fake.routes[("GET", f"/{ALIAS}/_mapping")] = _mapping()
    fake.routes[("POST", f"/{ALIAS}/_msearch")] = _recorded_msearch()
    svc = SearchService(OpenSearchIndex(fake.client(), ALIAS), WordHashEmbedder())
    result = svc.search("contrast ratio", sources=["wcag22"], k=5)
    assert result.outcome == "hit"
    assert [(p.ref, p.section) for p in result.passages] == [(CHUNK.ref, "1.4.3")]
    assert result.debug.record()["backend"] == "opensearch"
    # A WCAG passage leads, so the criterion leg (search/criterion_leg.py) is fused too.
    assert result.debug.record()["legs"] == {"bm25": {"hits": 1, "top": [CHUNK.ref]}, "vector": {"hits": 1, "top": [CHUNK.ref]},
                                    "criterion": {"hits": 1, "top": [CHUNK.ref]}}
    msearches = [r for r in fake.requests if r[1].startswith(f"/{ALIAS}/_msearch")]
    assert len(msearches) == 1
    lines = [json.loads(x) for x in msearches[0][2].decode().strip().split("\n")]
    vector = [float(x) for x in WordHashEmbedder().embed(["contrast ratio"])[0]]
    fields = ["id", "ref", "source", "section", "title", "text", "url", "updated_at", "meta"]
    assert lines == [
        {},
        {"size": 30, "_source": fields, "query": {"bool": {
            "should": [{"match_phrase": {"keyword_text": "contrast"}}, {"match_phrase": {"keyword_text": "ratio"}}],
            "minimum_should_match": 1,
            "filter": [{"terms": {"source": ["wcag22"]}}]}}},
        {},
        {"size": 30, "_source": fields, "query": {"knn": {"embedding": {
            "vector": vector, "k": 100, "filter": {"bool": {"filter": [{"terms": {"source": ["wcag22"]}}]}}}}}},
        {},
        {"size": 120, "_source": fields, "query": {"knn": {"embedding": {
            "vector": vector, "k": 120, "filter": {"bool": {"filter": [{"terms": {"source": ["questions"]}}]}}}}}},
    ]


def test_a_5xx_is_unavailable_not_empty(fake):
    fake.routes[("GET", f"/{ALIAS}/_mapping")] = _mapping()
    fake.routes[("POST", f"/{ALIAS}/_msearch")] = (503, {"error": {"type": "unavailable_shards_exception"}, "status": 503})
    result = SearchService(OpenSearchIndex(fake.client(), ALIAS), WordHashEmbedder()).search("contrast")
    assert (result.outcome, result.reason, result.passages) == ("unavailable", "upstream_5xx", [])


def test_an_item_level_5xx_inside_msearch_is_unavailable(fake):
    fake.routes[("GET", f"/{ALIAS}/_mapping")] = _mapping()
    fake.routes[("POST", f"/{ALIAS}/_msearch")] = (200, {"responses": [
        {"error": {"type": "search_phase_execution_exception"}, "status": 500},
        {"error": {"type": "search_phase_execution_exception"}, "status": 500}]})
    result = SearchService(OpenSearchIndex(fake.client(), ALIAS), WordHashEmbedder()).search("contrast")
    assert (result.outcome, result.reason) == ("unavailable", "upstream_5xx")


def test_a_connection_error_is_unavailable():
    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = OpenSearch(hosts=[{"host": "127.0.0.1", "port": port}], max_retries=0, timeout=2)
    result = SearchService(OpenSearchIndex(client, ALIAS), WordHashEmbedder()).search("contrast", leg="bm25")
    assert (result.outcome, result.reason, result.passages) == ("unavailable", "upstream_unreachable", [])


def test_an_index_built_by_another_model_refuses_the_query(fake):
    fake.routes[("GET", f"/{ALIAS}/_mapping")] = _mapping("bedrock:amazon.titan-embed-text-v2:0:1024")
    result = SearchService(OpenSearchIndex(fake.client(), ALIAS), WordHashEmbedder()).search("contrast")
    assert (result.outcome, result.reason) == ("unavailable", "embedding_model_mismatch")
    assert not [r for r in fake.requests if "_msearch" in r[1]]


def test_build_template_bulk_and_alias_swap_exact_requests(fake):
    fake.routes[("HEAD", f"/_alias/{ALIAS}")] = (200, None)
    fake.routes[("GET", f"/_alias/{ALIAS}")] = (200, {f"{ALIAS}-old": {"aliases": {ALIAS: {}}}})
    fake.routes[("POST", "/_bulk")] = (200, {"took": 1, "errors": False, "items": [
        {"index": {"_index": f"{ALIAS}-new", "_id": CHUNK.id, "status": 201}}]})
    build = OpenSearchBuild(fake.client(), ALIAS, model_id="m", dimension=3, stamp="new")
    build.add([CHUNK], np.array([[0.5, 0.25, 0.125]], dtype=np.float32))
    build.commit({"source_hashes": "{}"})
    calls = [(m, p.split("?")[0], json.loads(b) if b and p.split("?")[0] != "/_bulk" else b) for m, p, b in fake.requests]

    template = load_template(3)
    template["index_patterns"] = [f"{ALIAS}-*"]
    assert calls[0] == ("PUT", f"/_index_template/{ALIAS}", template)
    assert template["template"]["mappings"]["properties"]["embedding"]["type"] == "knn_vector"
    assert template["template"]["mappings"]["properties"]["text"]["analyzer"] == "english"
    assert template["template"]["mappings"]["properties"]["keyword_text"]["analyzer"] == "porter_unicode"
    assert calls[1] == ("PUT", f"/{ALIAS}-new", {"mappings": {"_meta": {"model_id": "m", "dimension": "3"}}})
    assert calls[2][:2] == ("POST", "/_bulk")
    bulk = [json.loads(x) for x in calls[2][2].decode().strip().split("\n")]
    assert bulk == [{"index": {"_index": f"{ALIAS}-new", "_id": CHUNK.id}},
                    {**CHUNK.model_dump(), "keyword_text": [f"1.4.3 Contrast (Minimum). {load_notes().get(FAILURES, '1.4.3')}"] * 3
                     + ["1.4.3"] * 2 + ["contrast ratio 4.5:1"], "embedding": [0.5, 0.25, 0.125]}]
    assert calls[3] == ("PUT", f"/{ALIAS}-new/_mapping",
                        {"_meta": {"model_id": "m", "dimension": "3", "source_hashes": "{}"}})
    assert calls[4][:2] == ("POST", f"/{ALIAS}-new/_refresh")
    assert calls[-1] == ("POST", "/_aliases", {"actions": [
        {"remove": {"index": f"{ALIAS}-old", "alias": ALIAS}},
        {"add": {"index": f"{ALIAS}-new", "alias": ALIAS}}]})


def test_an_aborted_build_deletes_its_index_and_leaves_the_alias(fake):
    build = OpenSearchBuild(fake.client(), ALIAS, model_id="m", dimension=3, stamp="broken")
    build.abort()
    methods = [(m, p.split("?")[0]) for m, p, _ in fake.requests]
    assert methods[-1] == ("DELETE", f"/{ALIAS}-broken")
    assert not [p for _, p in methods if p == "/_aliases"]


def test_msearch_vector_leg_only_when_a_vector_is_given():
    from groundchat.search.opensearch import msearch_body

    body = msearch_body("q", QueryVector("m", np.array([1.0], dtype=np.float32)), 3, None, ["vector"])
    assert body == [{}, {"size": 3, "_source": ["id", "ref", "source", "section", "title", "text", "url", "updated_at", "meta"],
                         "query": {"knn": {"embedding": {"vector": [1.0], "k": 100}}}}]


def test_the_packaged_template_is_the_deployable_one():
    """The code reads the template from package data (there inside a Lambda); infra/ keeps the copy
    that is deployed. They must not drift apart."""
    from groundchat.search.opensearch import TEMPLATE_PATH
    from tests.corpus_support import REPO_ROOT

    assert TEMPLATE_PATH.is_relative_to(REPO_ROOT / "layers" / "core" / "groundchat")
    assert TEMPLATE_PATH.read_bytes() == (REPO_ROOT / "infra" / "opensearch" / "index-template.json").read_bytes()


def test_the_bm25_leg_searches_topic_words_not_the_question_frame():
    from groundchat.search.opensearch import msearch_body

    body = msearch_body("Which criterion covers the contrast of text?", None, 3, None, ["bm25"])
    words = [clause["match_phrase"]["keyword_text"] for clause in body[1]["query"]["bool"]["should"]]
    assert words == ["covers", "contrast", "text"]


def test_the_template_is_declared_package_data():
    import fnmatch
    import tomllib

    from groundchat.search.opensearch import TEMPLATE_PATH
    from tests.corpus_support import REPO_ROOT

    globs = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["groundchat"]
    relative = TEMPLATE_PATH.relative_to(REPO_ROOT / "layers" / "core" / "groundchat").as_posix()
    assert any(fnmatch.fnmatch(relative, g) for g in globs)


def test_a_word_of_two_or_three_tokens_is_one_shingle_and_longer_ones_stay_phrases():
    from groundchat.search.opensearch import msearch_body

    body = msearch_body("kiosk check-in 1.4.3 a-b-c-d", None, 3, None, ["bm25"])
    assert body[1]["query"]["bool"]["should"] == [
        {"match_phrase": {"keyword_text": "kiosk"}},
        {"match": {"keyword_text.pairs": "check-in"}},
        {"match": {"keyword_text.triples": "1.4.3"}},
        {"match_phrase": {"keyword_text": "a-b-c-d"}},
    ]
