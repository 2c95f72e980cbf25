"""The offline answerer sends an explicit look back to the recall tool, only when it is offered."""
from groundchat.offline.templates import compose
from groundchat.offline.router import route

OFFERED = {"search_docs", "compare_contexts", "search_my_conversations"}


def test_an_explicit_look_back_calls_the_recall_tool():
    plan = route("What did I ask before?", OFFERED, {}, set())
    assert plan.calls == [("search_my_conversations", {"query": "What did I ask before?"})]
    both = route("As I asked last week, which context is cheapest?", OFFERED, {}, set())
    assert both.calls[0][0] == "search_my_conversations" and ("compare_contexts", {}) in both.calls


def test_without_the_tool_offered_or_a_cue_nothing_changes():
    assert route("What did I ask before?", OFFERED - {"search_my_conversations"}, {}, set()).refusal
    assert [n for n, _ in route("Which context is cheapest?", OFFERED, {}, set()).calls] == ["compare_contexts"]


def test_the_offline_answer_cites_the_hit_and_links_it():
    hit = {"ref": "0a1b2c3d", "title": "Which context is cheapest?", "url": "/chat?conversation=c1", "text": "checklist"}
    text = compose("What did I ask before?", [("search_my_conversations", {"outcome": "ok", "excerpts": [hit]}, False)])
    assert "[0a1b2c3d]" in text and "/chat?conversation=c1" in text
    assert "nothing" in compose("q", [("search_my_conversations", {"outcome": "empty", "excerpts": []}, False)])
