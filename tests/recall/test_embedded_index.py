"""The local recall index: a search names its owner, and no other person's exchange ever comes back."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundchat.recall.embedded import EmbeddedRecallIndex
from groundchat.recall.entries import make_entry
from tests.corpus_support import WordHashEmbedder

WORDS = ["contrast", "checklist", "label", "cost", "model", "axe", "focus", "heading", "eaa", "form"]


def open_index(tmp_path, name="recall.sqlite"):
    return EmbeddedRecallIndex(tmp_path / name, WordHashEmbedder)


def test_hits_are_citable_excerpts_linking_to_their_conversation(tmp_path):
    index = open_index(tmp_path)
    index.add(make_entry("alice", "c" * 32, "r1", "What is the contrast minimum?", "4.5:1 for normal text [1a2b3c4d]."))
    index.add(make_entry("alice", "d" * 32, "r2", "Which context is cheapest?", "checklist, at $0.01 a run."))
    hits = index.search("alice", "contrast minimum", 5)
    assert hits[0].entry.conversation_id == "c" * 32
    shown = hits[0].public()
    assert shown["url"] == f"/chat?conversation={'c' * 32}" and shown["source"] == "conversation"
    assert len(shown["ref"]) == 8 and int(shown["ref"], 16) >= 0
    assert shown["title"] == "What is the contrast minimum?"


def test_deleting_a_conversation_removes_its_entries_only(tmp_path):
    index = open_index(tmp_path)
    index.add(make_entry("alice", "c" * 32, "r1", "contrast question", "answer one"))
    index.add(make_entry("alice", "c" * 32, "r2", "contrast again", "answer two"))
    index.add(make_entry("alice", "d" * 32, "r3", "contrast elsewhere", "answer three"))
    index.add(make_entry("bob", "c" * 32, "r4", "contrast by bob", "answer four"))  # same id, other owner
    assert index.remove_conversation("alice", "c" * 32) == 2
    assert [h.entry.run_id for h in index.search("alice", "contrast", 10)] == ["r3"]
    assert [h.entry.run_id for h in index.search("bob", "contrast", 10)] == ["r4"]


entries = st.lists(
    st.tuples(st.sampled_from(["alice", "bob", "carol", "visitor:1", "dave"]),
              st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
              st.text(min_size=1, max_size=40)),
    min_size=1, max_size=25)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=entries, who=st.sampled_from(["alice", "bob", "carol", "erin"]),
       query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join))
def test_a_search_never_returns_another_persons_conversation(tmp_path_factory, entries, who, query):
    index = open_index(tmp_path_factory.mktemp("recall"))
    for n, (owner, question, answer) in enumerate(entries):
        index.add(make_entry(owner, f"conv-{owner}-{n % 3}", f"run-{n}", question, answer))
    hits = index.search(who, query, 50)
    assert all(h.entry.owner == who for h in hits)
    mine = sum(1 for owner, _, _ in entries if owner == who)
    assert len(hits) <= mine
    if mine:  # the owner's own entries are found: the filter is not simply "nothing"
        assert hits
    index.close()
