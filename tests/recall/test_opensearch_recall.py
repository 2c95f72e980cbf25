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


# ---- the sweep's requests: a range query on the expiry, then one delete and one update by query ----

def test_an_entry_carries_its_conversations_expiry_and_an_older_index_gains_the_field(fake):
    from groundchat.recall.opensearch import EXPIRY_MAPPING

    index = OpenSearchRecallIndex(fake.client(), INDEX, WordHashEmbedder)  # HEAD answers 200: the index exists
    index.add(make_entry("alice", "c1", "r1", "q", "a", expires_at=1_800_000_000))
    index.add(make_entry("alice", "c1", "r2", "q", "a", expires_at=1_800_086_400))
    mappings = [json.loads(b) for m, p, b in fake.requests if m == "PUT" and p.split("?")[0] == f"/{INDEX}/_mapping"]
    assert mappings == [EXPIRY_MAPPING] == [{"properties": {"expires_at": {"type": "long"}}}]  # once per process
    docs = [json.loads(b) for m, p, b in fake.requests if f"/{INDEX}/_doc/" in p]
    assert [d["expires_at"] for d in docs] == [1_800_000_000, 1_800_086_400]
    assert index_body(64)["mappings"]["properties"]["expires_at"] == {"type": "long"}


def test_the_due_query_is_a_range_on_the_expiry_and_returns_each_conversation_once(fake):
    fake.routes[("POST", f"/{INDEX}/_search")] = (200, {"hits": {"hits": [
        {"_source": {"owner": "alice", "conversation_id": "c1"}},
        {"_source": {"owner": "alice", "conversation_id": "c1"}},
        {"_source": {"owner": "bob", "conversation_id": "c2"}},
    ]}})
    index = OpenSearchRecallIndex(fake.client(), INDEX, WordHashEmbedder)
    assert index.due_conversations(1_800_000_000, 100) == [("alice", "c1"), ("bob", "c2")]
    assert bodies(fake, "POST", "/_search") == [{
        "size": 100, "_source": ["owner", "conversation_id"],
        "query": {"bool": {"should": [{"range": {"expires_at": {"lte": 1_800_000_000}}},
                                      {"bool": {"must_not": [{"exists": {"field": "expires_at"}}]}}],
                           "minimum_should_match": 1}}}]


def test_no_index_yet_means_nothing_is_due_and_nothing_is_searched(fake):
    fake.routes[("HEAD", f"/{INDEX}")] = (404, None)
    index = OpenSearchRecallIndex(fake.client(), INDEX, WordHashEmbedder)
    assert index.due_conversations(1_800_000_000, 100) == []
    assert [m for m, _, _ in fake.requests] == ["HEAD"]


def test_gone_conversations_are_removed_in_one_delete_by_query_each_pair_matched_whole(fake):
    fake.routes[("POST", f"/{INDEX}/_delete_by_query")] = (200, {"deleted": 4})
    index = OpenSearchRecallIndex(fake.client(), INDEX, WordHashEmbedder)
    assert index.remove_conversations([("alice", "c1"), ("bob", "c2")]) == 4
    [(path, body)] = [(p, json.loads(b)) for m, p, b in fake.requests if m == "POST"]
    assert path.split("?")[0] == f"/{INDEX}/_delete_by_query"
    assert sorted(path.split("?")[1].split("&")) == ["conflicts=proceed", "refresh=true"]
    assert body == {"query": {"bool": {"should": [
        {"bool": {"filter": [{"term": {"owner": "alice"}}, {"term": {"conversation_id": "c1"}}]}},
        {"bool": {"filter": [{"term": {"owner": "bob"}}, {"term": {"conversation_id": "c2"}}]}},
    ], "minimum_should_match": 1}}}


def test_live_conversations_entries_move_forward_to_their_expiry_in_one_update_by_query(fake):
    from groundchat.recall.opensearch import RENEW_SCRIPT

    fake.routes[("POST", f"/{INDEX}/_update_by_query")] = (200, {"updated": 3, "noops": 1})
    index = OpenSearchRecallIndex(fake.client(), INDEX, WordHashEmbedder)
    assert index.renew({("alice", "c1"): 1_800_000_000, ("alice", "c3"): 1_800_086_400}) == 3
    [(path, body)] = [(p, json.loads(b)) for m, p, b in fake.requests if m == "POST"]
    assert path.split("?")[0] == f"/{INDEX}/_update_by_query"
    assert sorted(path.split("?")[1].split("&")) == ["conflicts=proceed", "refresh=true"]
    assert body == {
        "query": {"bool": {"should": [
            {"bool": {"filter": [{"term": {"owner": "alice"}}, {"term": {"conversation_id": "c1"}}]}},
            {"bool": {"filter": [{"term": {"owner": "alice"}}, {"term": {"conversation_id": "c3"}}]}},
        ], "minimum_should_match": 1}},
        "script": {"lang": "painless", "source": RENEW_SCRIPT,
                   "params": {"expires": {"c1": 1_800_000_000, "c3": 1_800_086_400}}}}
    # Never backwards: an entry that already carries a later expiry is left alone.
    assert "ctx._source.expires_at >= e" in RENEW_SCRIPT and "ctx.op = 'noop'" in RENEW_SCRIPT
