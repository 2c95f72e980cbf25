"""The recall plan: the setting, the question's explicit cues and its opt-out, and why."""
import pytest

from groundchat.tools.recall_tool import offered_for
from groundchat.recall.plan import plan_recall


@pytest.mark.parametrize("mode, question, search, reason_word", [
    ("off", "What did I ask before about contrast?", False, "off"),
    ("explicit", "What did I ask before about contrast?", True, "refers"),
    ("explicit", "As I asked last week, which context is best?", True, "refers"),
    ("explicit", "Earlier you said checklist was cheapest: why?", True, "refers"),
    ("explicit", "Which context is best?", False, "no sign"),
    ("explicit", "Which context is best again?", False, "no sign"),  # soft cue: only in auto
    ("auto", "Which context is best again?", True, "builds on"),
    ("auto", "Which context is best?", False, "no sign"),
    ("explicit", "What did I ask before? Don't use my history though.", False, "not to use"),
    ("auto", "Remind me of contrast, but do not search my past conversations", False, "not to use"),
    ("auto", "Ignore my previous chats. As I asked last week, what is 1.4.3?", False, "not to use"),
])
def test_gating_decisions_and_overrides(mode, question, search, reason_word):
    plan = plan_recall(question, mode)
    assert plan.search is search
    assert reason_word in plan.reason
    assert plan.record()["mode"] == mode and plan.record()["search"] is search


def test_signals_are_recorded_and_permission_wins():
    plan = plan_recall("As I asked last week, don't use my history", "auto")
    assert plan.signals == ["opt-out", "explicit", "soft"]
    denied = plan_recall("What did I ask before?", "auto", permitted=False)
    assert (denied.search, denied.indexes, denied.reason) == (False, False, "this account may not search its past conversations (recall.read)")
    assert plan_recall("x", "off").indexes is False and plan_recall("x", "explicit").indexes is True


def test_an_unknown_mode_names_the_valid_ones():
    with pytest.raises(ValueError, match="off, explicit, auto"):
        plan_recall("x", "sometimes")


def test_gating_only_takes_the_recall_tool_away():
    class T:
        def __init__(self, name):
            self.name = name

    tools = [T("search_docs"), T("search_my_conversations"), T("compare_contexts")]
    no = plan_recall("Which context is best?", "explicit")
    yes = plan_recall("What did I ask before?", "explicit")
    assert [t.name for t in offered_for(tools, no)] == ["search_docs", "compare_contexts"]
    assert [t.name for t in offered_for(tools, yes)] == ["search_docs", "search_my_conversations", "compare_contexts"]
