"""The recall index's contract on both backends, the real OpenSearch node among them: a search names
its owner and never returns another person's entry, by words or by meaning; deleting a conversation
removes its entries and only those; the sweep finds what is due."""
from __future__ import annotations

import pytest

from groundchat.recall.embedded import EmbeddedRecallIndex
from groundchat.recall.entries import make_entry
from tests.corpus_support import WordHashEmbedder
from tests.opensearch_node_support import fresh_alias, index_blocked

ALICE_C, ALICE_D, SHARED = "c" * 32, "d" * 32, "e" * 32


class Recall:
    def __init__(self, kind, tmp_path, node):
        self.kind = kind
        if kind == "embedded":
            self.index = EmbeddedRecallIndex(tmp_path / "recall.sqlite", WordHashEmbedder)
            return
        from opensearchpy import OpenSearch

        from groundchat.recall.opensearch import OpenSearchRecallIndex

        self.client = OpenSearch(hosts=[node.endpoint], timeout=30, max_retries=0)
        self.name = fresh_alias("recall")
        self.index = OpenSearchRecallIndex(self.client, self.name, WordHashEmbedder)

    def visible(self):
        """A node makes writes searchable at its next refresh (a second); the tests do not wait for it."""
        if self.kind == "opensearch":
            self.client.indices.refresh(index=self.name)

    def close(self):
        if self.kind == "opensearch":
            self.client.indices.delete(index=self.name, ignore_unavailable=True)
        else:
            self.index.close()


@pytest.fixture(params=["embedded", "opensearch"])
def recall(request, tmp_path):
    node = request.getfixturevalue("opensearch_node") if request.param == "opensearch" else None
    made = Recall(request.param, tmp_path, node)
    made.index.add(make_entry("alice", ALICE_C, "r1", "What is the contrast minimum?", "4.5:1 for normal text."))
    made.index.add(make_entry("alice", ALICE_D, "r2", "Which context is cheapest?", "checklist, at $0.01 a run."))
    made.index.add(make_entry("alice", SHARED, "r3", "contrast of focus rings", "3:1 against the background."))
    made.index.add(make_entry("bob", SHARED, "r4", "contrast minimum for bob", "bob's own answer on contrast."))
    made.visible()
    yield made
    made.close()


def test_each_person_finds_only_their_own_entries(recall):
    alice = recall.index.search("alice", "contrast minimum", 10)
    bob = recall.index.search("bob", "contrast minimum", 10)
    assert alice and {h.entry.owner for h in alice} == {"alice"}
    assert alice[0].entry.run_id == "r1"
    assert [h.entry.run_id for h in bob] == ["r4"]
    assert recall.index.search("carol", "contrast minimum", 10) == []
    assert recall.index.search("", "contrast minimum", 10) == []


def test_on_the_node_the_owner_filter_holds_in_each_leg_alone(recall):
    """The index's own check after the query would hide a filter that let others through: here the
    node's answer itself is read, for the words leg and for the k-NN leg on their own."""
    if recall.kind != "opensearch":
        pytest.skip("the embedded index has no query language to bypass")
    from groundchat.recall.opensearch import owner_filter, search_body

    words = search_body("bob", "contrast minimum", None, 10)
    vector = [float(x) for x in WordHashEmbedder().embed_query("contrast minimum").vector]
    knn = {"size": 10, "query": {"knn": {"embedding": {"vector": vector, "k": 10, "filter": owner_filter("bob")}}}}
    for body in (words, knn):
        hits = recall.client.search(index=recall.name, body=body)["hits"]["hits"]
        assert [h["_source"]["owner"] for h in hits] == ["bob"]


def test_deleting_a_conversation_removes_its_entries_only(recall):
    assert recall.index.remove_conversation("alice", SHARED) == 1
    recall.visible()
    assert sorted(h.entry.run_id for h in recall.index.search("alice", "contrast", 10)) == ["r1", "r2"]
    assert [h.entry.run_id for h in recall.index.search("bob", "contrast", 10)] == ["r4"]


def test_entries_without_an_expiry_are_due_and_swept_in_one_call(recall):
    due = sorted(recall.index.due_conversations(now=10**10, limit=50))
    assert due == sorted([("alice", ALICE_C), ("alice", ALICE_D), ("alice", SHARED), ("bob", SHARED)])
    assert recall.index.remove_conversations([("alice", ALICE_D), ("bob", SHARED)]) == 2
    recall.visible()
    assert [h.entry.run_id for h in recall.index.search("bob", "contrast", 10)] == []
    assert "r2" not in {h.entry.run_id for h in recall.index.search("alice", "cheapest context checklist", 10)}


def test_on_the_node_a_full_disk_refuses_the_write_and_the_answer_stands(recall):
    """The disk's flood stage (`read_only_allow_delete`) makes the node refuse every write with 429:
    the exchange stays answered (the write is after the commit and only logged), is simply not
    recallable, and the index answers searches throughout."""
    if recall.kind != "opensearch":
        pytest.skip("the embedded index has no disk watermark")
    from opensearchpy.exceptions import TransportError

    from groundchat.recall import index_exchange

    with index_blocked(recall.client, recall.name, "read_only_allow_delete"):
        with pytest.raises(TransportError) as refused:
            recall.index.add(make_entry("alice", "f" * 32, "r9", "full disk", "an answer about target size"))
        assert refused.value.status_code == 429
        assert index_exchange(recall.index, "alice", "f" * 32, "r9", "full disk", "an answer about target size") is False
        assert [h.entry.run_id for h in recall.index.search("alice", "contrast minimum", 10)][0] == "r1"
    recall.visible()
    assert "r9" not in {h.entry.run_id for h in recall.index.search("alice", "target size", 10)}
