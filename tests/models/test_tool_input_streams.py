"""Tool input streamed: both adapters pass a call's argument pieces on as they arrive (recorded
provider streams, through the real clients), the loop forwards them as `tool-input-delta` frames, and
the call itself (its `tool-call` frame, and what goes back to the provider) is unchanged."""
from __future__ import annotations

import json

import pytest

from groundchat.models.failures import ModelFailure
from groundchat.models.messages import StopEvent, TextDelta, ToolCallEvent, ToolInputDelta, UsageEvent
from groundchat_testkit.providers import assert_bedrock_request, assert_openai_messages
from tests.models import test_bedrock_adapter as bedrock
from tests.models import test_openai_compat_adapter as openai

import tests.models.provider_recordings as rec
from tests.models.provider_recordings import chunk, sse
from tests.models.tool_input_recordings import BEDROCK_VIEW_CALL, OPENAI_VIEW_CALL, VIEW, VIEW_TEXT, view_pieces

BEDROCK_ANSWER = [rec.message_start(), rec.text_delta(0, "Shown above."), rec.block_stop(0), rec.message_stop("end_turn"), rec.metadata(1700, 4)]
OPENAI_ANSWER = sse(chunk({"content": "Shown above."}), chunk({}, finish="stop"),
                    chunk(None, usage={"prompt_tokens": 1700, "completion_tokens": 4, "total_tokens": 1704}))


def test_the_recording_cuts_the_view_in_many_uneven_pieces():
    pieces = view_pieces()
    assert "".join(pieces) == VIEW_TEXT and len(pieces) >= 10
    assert len({len(p) for p in pieces}) > 5


async def test_bedrock_passes_each_input_piece_on_then_the_whole_call():
    events = await bedrock.collect(bedrock.model_on(rec.BedrockReplay(BEDROCK_VIEW_CALL)), bedrock.question())
    deltas = [e for e in events if isinstance(e, ToolInputDelta)]
    assert [d.delta for d in deltas] == view_pieces()
    assert {(d.id, d.name) for d in deltas} == {("tooluse_view01", "show_view")}
    assert events[0] == TextDelta(text="Here is the comparison.")
    # The pieces come first, as they arrive; the call, parsed whole, after the last of them.
    call_at = events.index(ToolCallEvent(id="tooluse_view01", name="show_view", args=VIEW))
    assert call_at == len(deltas) + 1
    assert events[call_at + 1:] == [UsageEvent(input_tokens=1500, output_tokens=160), StopEvent(reason="tool_use")]


async def test_openai_passes_each_argument_chunk_on_then_the_whole_call():
    events = await openai.collect(openai.model_on(rec.OpenAIReplay((200, OPENAI_VIEW_CALL, {}))))
    deltas = [e for e in events if isinstance(e, ToolInputDelta)]
    # The first fragment's empty arguments are no piece.
    assert [d.delta for d in deltas] == view_pieces()
    assert {(d.id, d.name) for d in deltas} == {("call_view01", "show_view")}
    call = [e for e in events if isinstance(e, ToolCallEvent)]
    assert call == [ToolCallEvent(id="call_view01", name="show_view", args=VIEW)]
    assert events.index(call[0]) > events.index(deltas[-1])


async def test_openai_pieces_before_the_calls_id_and_name_wait_for_them():
    """Some servers send arguments before the id and name: passed on together, once the call can be named."""
    body = sse(
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"q": '}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"x'}}]}),
        chunk({"tool_calls": [{"index": 0, "id": "call_late", "function": {"name": "lookup", "arguments": '"}'}}]}),
        chunk({}, finish="tool_calls"),
        chunk(None, usage={"prompt_tokens": 10, "completion_tokens": 5}),
    )
    events = await openai.collect(openai.model_on(rec.OpenAIReplay((200, body, {}))))
    assert [e for e in events if isinstance(e, ToolInputDelta)] == [ToolInputDelta(id="call_late", name="lookup", delta='{"q": "x"}')]
    assert ToolCallEvent(id="call_late", name="lookup", args={"q": "x"}) in events


@pytest.mark.parametrize("provider", ["bedrock", "openai"])
async def test_the_loop_forwards_the_pieces_and_the_call_is_unchanged(provider):
    if provider == "bedrock":
        replay = rec.BedrockReplay(BEDROCK_VIEW_CALL, BEDROCK_ANSWER)
        model, call_id = bedrock.model_on(replay), "tooluse_view01"
    else:
        replay = rec.OpenAIReplay((200, OPENAI_VIEW_CALL, {}), (200, OPENAI_ANSWER, {}))
        model, call_id = openai.model_on(replay), "call_view01"
    exchange, frames = await rec.ask(model, "Compare the context levels")

    pieces = len(view_pieces())
    assert [f.type for f in frames] == ["start", "step", "text", *["tool-input-delta"] * pieces, "tool-call", "tool-result", "step",
                                        "step", "text", "step", "done"]
    deltas = [f.data for f in frames if f.type == "tool-input-delta"]
    assert {(d["id"], d["name"]) for d in deltas} == {(call_id, "show_view")}
    assert json.loads("".join(d["delta"] for d in deltas)) == VIEW
    [call] = [f.data for f in frames if f.type == "tool-call"]
    assert call == {"id": call_id, "name": "show_view", "args": VIEW}
    assert frames[-1].data["reason"] == "complete"
    # What goes back to the provider is the whole call, and its result, by the providers' rules.
    if provider == "bedrock":
        second = replay.sent[1]
        assert_bedrock_request({"modelId": bedrock.MODEL, **second})
        assert second["messages"][1]["content"][1] == {"toolUse": {"toolUseId": call_id, "name": "show_view", "input": VIEW}}
    else:
        second = replay.bodies()[1]["messages"]
        assert_openai_messages(second)
        assert json.loads(second[2]["tool_calls"][0]["function"]["arguments"]) == VIEW
    # The pieces are shown, never stored: the exchange holds the call once.
    assert [c.args for m in exchange.new_messages for c in m.tool_calls] == [VIEW]


async def test_a_step_that_fails_while_its_input_streams_makes_no_call():
    replay = rec.BedrockReplay([
        rec.message_start(), rec.tool_start(0, "tooluse_cut", "show_view"),
        *(rec.tool_input(0, piece) for piece in view_pieces()[:4]),
        rec.exception("modelStreamErrorException", "the model stopped streaming"),
    ])
    _, frames = await rec.ask(bedrock.model_on(replay), "Compare")
    types = [f.type for f in frames]
    assert types == ["start", "step", *["tool-input-delta"] * 4, "error", "done"]
    assert "tool-call" not in types and frames[-1].data["reason"] == "error"


async def test_an_input_cut_by_the_output_limit_streams_but_is_never_called():
    replay = rec.BedrockReplay([
        rec.message_start(), rec.tool_start(0, "tooluse_x", "show_view"), rec.tool_input(0, VIEW_TEXT[:40]),
        rec.block_stop(0), rec.message_stop("max_tokens"), rec.metadata(100, 3000),
    ])
    events = []
    with pytest.raises(ModelFailure) as caught:
        async for e in bedrock.model_on(replay)(bedrock.question()):
            events.append(e)
    assert events[0] == ToolInputDelta(id="tooluse_x", name="show_view", delta=VIEW_TEXT[:40])
    assert not any(isinstance(e, ToolCallEvent) for e in events)
    assert caught.value.cls == "content_missing"
