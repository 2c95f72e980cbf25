"""Shortening long conversations for the model: whole exchanges, oldest first, never the question."""
import pytest

from groundchat.chat.history import PROFILES, HistoryPolicy, UnknownHistoryProfile, policy_for, shorten
from groundchat_testkit.scripted import assert_provider_transcript
from groundchat.models.messages import Message, ToolCall, ToolSpec

TOOLS = [ToolSpec(name="t", description="a tool", input_schema={"type": "object", "properties": {}})]


def exchange(n: int, size: int) -> list[Message]:
    call = ToolCall(id=f"c{n}", name="t", args={})
    return [
        Message(role="user", content=f"question {n}"),
        Message(role="assistant", content="", tool_calls=[call]),
        Message(role="tool", tool_call_id=f"c{n}", name="t", content="x" * size),
        Message(role="assistant", content=f"answer {n}"),
    ]


def test_fits_unchanged():
    history = exchange(1, 100)
    out = shorten(history, Message(role="user", content="q"), "sys", TOOLS, HistoryPolicy("drop-oldest", 10_000))
    assert out.outcome == "unchanged" and out.messages == history and out.codes == []


def test_drops_whole_exchanges_oldest_first_and_stays_valid_for_providers():
    history = exchange(1, 9000) + exchange(2, 9000) + exchange(3, 300)
    question = Message(role="user", content="q")
    out = shorten(history, question, "sys", TOOLS, HistoryPolicy("drop-oldest", 4000))
    assert out.outcome == "reduced"
    assert out.codes == ["history.dropped_oldest"]
    assert [m.content for m in out.messages if m.role == "user"] == ["question 3"]
    assert out.dropped_messages == 8
    assert out.tokens <= 4000
    assert_provider_transcript([*out.messages, question])
    assert len(history) == 12  # the caller's list (the stored conversation) is untouched


def test_cannot_reduce_when_the_question_alone_is_too_large():
    out = shorten(exchange(1, 10), Message(role="user", content="y" * 30_000), "sys", TOOLS, HistoryPolicy("drop-oldest", 5000))
    assert (out.outcome, out.reason, out.messages) == ("failed", "cannot_reduce", [])


def test_overhead_alone_exceeds_the_limit():
    out = shorten([], Message(role="user", content="q"), "s" * 40_000, TOOLS, HistoryPolicy("drop-oldest", 5000))
    assert (out.outcome, out.reason) == ("failed", "overhead_exceeds_limit")


def test_profiles_and_explicit_policies():
    assert policy_for("visitor-qa") == PROFILES["visitor-qa"]
    assert policy_for(None) == PROFILES["standard"]
    assert policy_for(strategy="drop-oldest", max_input_tokens=999) == HistoryPolicy("drop-oldest", 999)
    with pytest.raises(UnknownHistoryProfile, match="visitor-qa, standard, long-authoring"):
        policy_for("huge")
    with pytest.raises(UnknownHistoryProfile):
        policy_for(strategy="summarise", max_input_tokens=100)


async def test_loop_sends_the_shortened_history_and_says_so():
    from groundchat.chat.loop import run_exchange
    from groundchat_testkit.answer_runs import kept_run
    from groundchat_testkit.scripted import ScriptedModel, Step

    history = exchange(1, 9000) + exchange(2, 200)
    shaped = shorten(history, Message(role="user", content="now"), "sys", [], HistoryPolicy("drop-oldest", 3000))
    model = ScriptedModel([Step(text="ok")])
    run = await kept_run(model, system="sys", question="now", history=shaped.messages, shortening=shaped)
    frames = [f async for f in run_exchange(run)]
    assert frames[1].type == "history" and frames[1].data["outcome"] == "reduced"
    assert [m.content for m in model.requests[0].messages if m.role == "user"] == ["question 2", "now"]


async def test_loop_ends_too_large_without_calling_the_model_or_committing():
    from groundchat.chat.loop import run_exchange
    from groundchat_testkit.answer_runs import kept_run
    from groundchat_testkit.scripted import ScriptedModel

    shaped = shorten([], Message(role="user", content="y" * 30_000), "sys", [], HistoryPolicy("drop-oldest", 2000))
    model = ScriptedModel([])
    run = await kept_run(model, system="sys", question="y" * 30_000, history=shaped.messages, shortening=shaped)
    frames = [f async for f in run_exchange(run)]
    committed = run.committed
    assert [f.type for f in frames] == ["start", "history", "done"]
    assert frames[1].data["reason"] == "cannot_reduce"
    assert frames[-1].data["reason"] == "too-large"
    assert model.calls == 0 and committed == []
