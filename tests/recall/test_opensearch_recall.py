"""The recall index on OpenSearch: every search and delete it sends carries the owner's term filter,
taken from the caller, and the model's words never reach the filter."""
from __future__ import annotations

import json

import pytest

from groundchat.recall.entries import make_entry
from groundchat.recall.opensearch import OpenSearchRecallIndex, index_body
from tests.corpus_support import WordHashEmbedder
from tests.search.test_opensearch import FakeOpenSearch

INDEX = "groundchat-recall"


@pytest.fixture
def fake():
    server = FakeOpenSearch()
    yield server
    server.close()


def bodies(fake, method, suffix):
    return [json.loads(body) for m, path, body in fake.requests if m == method and path.split("?")[0].endswith(suffix)]


def test_the_mapping_keeps_the_owner_a_keyword():
    mapping = index_body(64)["mappings"]["properties"]
    assert mapping["owner"] == {"type": "keyword"} and mapping["embedding"]["dimension"] == 64


def test_a_search_filters_by_the_callers_id_in_both_legs(fake):
    fake.routes[("POST", f"/{INDEX}/_search")] = (200, {"hits": {"hits": [
        {"_score": 2.0, "_source": {"owner": "alice", "conversation_id": "c1", "run_id": "r1", "question": "q", "answer": "a",
                                    "created_at": 1.0}},
        # A document of someone else in a reply is dropped as well (the filter should never let one through).
        {"_score": 1.0, "_source": {"owner": "bob", "conversation_id": "c2", "run_id": "r2", "question": "q", "answer": "a"}},
    ]}})
    index = OpenSearchRecallIndex(fake.client(), INDEX, WordHashEmbedder)
    hits = index.search("alice", "owner bob contrast", 5)
    assert [h.entry.owner for h in hits] == ["alice"]
    body = bodies(fake, "POST", "/_search")[0]
    assert body["query"]["bool"]["filter"] == [{"term": {"owner": "alice"}}]
    knn = body["query"]["bool"]["should"][1]["knn"]["embedding"]
    assert knn["filter"] == {"term": {"owner": "alice"}} and len(knn["vector"]) == 64
    assert "bob" not in json.dumps(body["query"]["bool"]["filter"])


def test_indexing_creates_the_index_once_and_writes_the_owner(fake):
    fake.routes[("HEAD", f"/{INDEX}")] = (404, None)
    index = OpenSearchRecallIndex(fake.client(), INDEX, WordHashEmbedder)
    entry = make_entry("alice", "c1", "r1", "What is 1.4.3?", "Contrast.")
    index.add(entry)
    index.add(make_entry("alice", "c1", "r2", "And 1.4.11?", "Non-text contrast."))
    created = [json.loads(b) for m, p, b in fake.requests if m == "PUT" and p.split("?")[0] == f"/{INDEX}"]
    assert len(created) == 1 and created[0]["mappings"]["properties"]["owner"]["type"] == "keyword"
    docs = [json.loads(b) for m, p, b in fake.requests if m in ("PUT", "POST") and f"/{INDEX}/_doc/" in p]
    assert [d["owner"] for d in docs] == ["alice", "alice"] and docs[0]["question"] == "What is 1.4.3?"
    assert any(p.startswith(f"/{INDEX}/_doc/{entry.id}") for _, p, _ in fake.requests)


def test_deleting_a_conversation_sends_owner_and_conversation_filters(fake):
    fake.routes[("POST", f"/{INDEX}/_delete_by_query")] = (200, {"deleted": 3})
    index = OpenSearchRecallIndex(fake.client(), INDEX, WordHashEmbedder)
    assert index.remove_conversation("alice", "c1") == 3
    body = bodies(fake, "POST", "/_delete_by_query")[0]
    assert body["query"]["bool"]["filter"] == [{"term": {"owner": "alice"}}, {"term": {"conversation_id": "c1"}}]
