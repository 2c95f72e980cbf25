import pytest

from groundchat_testkit.scripted import (
    DuplicateToolResult,
    OrphanToolResult,
    ScriptedModel,
    SplitToolResults,
    Step,
    UnansweredToolCalls,
    UnknownToolCallId,
    assert_provider_transcript,
)
from groundchat.models.messages import Message, ModelRequest, ToolCall


def user(text="q"):
    return Message(role="user", content=text)


def assistant(*ids, text=""):
    return Message(role="assistant", content=text, tool_calls=[ToolCall(id=i, name="t") for i in ids])


def tool(i, content="r"):
    return Message(role="tool", tool_call_id=i, name="t", content=content)


def test_valid_transcripts_pass():
    assert_provider_transcript([user(), assistant("a", "b"), tool("a"), tool("b"), assistant(text="done"), user()])
    assert_provider_transcript([user()])


def test_tool_message_answering_no_call_of_preceding_turn():
    with pytest.raises(OrphanToolResult):
        # "b" is a call of a later assistant turn, not of the turn this result follows
        assert_provider_transcript([user(), assistant("a"), tool("a"), tool("b"), assistant("b"), tool("b")])


def test_call_id_that_matches_nothing():
    with pytest.raises(UnknownToolCallId):
        assert_provider_transcript([user(), assistant("a"), tool("zzz")])


def test_user_turn_while_calls_unanswered():
    with pytest.raises(UnansweredToolCalls):
        assert_provider_transcript([user(), assistant("a", "b"), tool("a"), user()])


def test_assistant_turn_while_calls_unanswered():
    with pytest.raises(UnansweredToolCalls):
        assert_provider_transcript([user(), assistant("a"), assistant(text="x")])


def test_results_split_across_turns():
    # a result for "a" after the turn that answered calls moved on (an assistant turn in between)
    with pytest.raises(SplitToolResults):
        assert_provider_transcript([user(), assistant("a"), tool("a"), assistant("b"), tool("b"), tool("a")])


def test_duplicate_result():
    with pytest.raises(DuplicateToolResult):
        assert_provider_transcript([user(), assistant("a"), tool("a"), tool("a")])


def test_transcript_ending_with_unanswered_calls():
    with pytest.raises(UnansweredToolCalls):
        assert_provider_transcript([user(), assistant("a")])


async def test_scripted_model_runs_the_checker_on_what_it_receives():
    model = ScriptedModel([Step(text="hi")])
    bad = ModelRequest(system="s", messages=[user(), assistant("a"), user()], tools=[])
    with pytest.raises(UnansweredToolCalls):
        async for _ in model(bad):
            pass
    assert model.calls == 0
    good = ModelRequest(system="s", messages=[user()], tools=[])
    events = [e async for e in model(good)]
    assert "".join(e.text for e in events if e.type == "text") == "hi"
    assert events[-1].reason == "end_turn"
    assert model.calls == 1
