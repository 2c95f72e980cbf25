"""Bedrock ConverseStream adapter on recorded event streams, through a real botocore client."""
from __future__ import annotations

import asyncio
import threading
from decimal import Decimal

import pytest
from botocore.eventstream import EventStreamBuffer

from groundchat.models.failures import ModelFailure
from groundchat.models.bedrock import BedrockModel, to_converse_request
from groundchat.models.retry import RetryPolicy
from groundchat_testkit.providers import assert_bedrock_messages, assert_bedrock_request
from groundchat.models.messages import Message, ModelRequest, StopEvent, TextDelta, ToolCallEvent, ToolSpec, UsageEvent

import tests.models.provider_recordings as rec

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
SPECS = [ToolSpec(name="lookup", description="Look something up.", input_schema={"type": "object", "properties": {"q": {"type": "string"}}})]


def no_wait_policy(attempts: int = 1, sleeps: list[float] | None = None) -> RetryPolicy:
    async def sleep(seconds: float) -> None:
        if sleeps is not None:
            sleeps.append(seconds)

    return RetryPolicy(attempts=attempts, sleep=sleep)


def model_on(replay: rec.BedrockReplay, **kwargs) -> BedrockModel:
    return BedrockModel(MODEL, client=replay.client, retry=kwargs.pop("retry", no_wait_policy()), **kwargs)


def question(text: str = "Which context is best?") -> ModelRequest:
    return ModelRequest(system="Answer from tools.", messages=[Message(role="user", content=text)], tools=SPECS, max_output_tokens=3000)


async def collect(model: BedrockModel, request: ModelRequest) -> list:
    return [e async for e in model(request)]


def test_encoder_round_trips_through_botocores_decoder():
    buffer = EventStreamBuffer()
    buffer.add_data(rec.text_delta(0, "hi") + rec.message_stop("end_turn"))
    messages = list(buffer)
    assert [m.headers[":event-type"] for m in messages] == ["contentBlockDelta", "messageStop"]
    assert b'"stopReason": "end_turn"' in messages[1].payload


async def test_text_answer_streams_deltas_usage_and_stop():
    replay = rec.BedrockReplay([
        rec.message_start(),
        # Text blocks arrive without a contentBlockStart.
        rec.text_delta(0, "Context A "),
        rec.text_delta(0, "is best [3f9a1b2c]."),
        rec.block_stop(0),
        rec.message_stop("end_turn"),
        rec.metadata(1200, 9, cache_read=800, cache_write=64),
    ])
    events = await collect(model_on(replay), question())

    assert events == [
        TextDelta(text="Context A "),
        TextDelta(text="is best [3f9a1b2c]."),
        UsageEvent(input_tokens=1200, output_tokens=9, cache_read_tokens=800, cache_write_tokens=64),
        StopEvent(reason="end_turn"),
    ]
    # What went over the wire: the model in the path, our shapes in the body.
    assert replay.urls[0].endswith("/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream")
    sent = replay.sent[0]
    assert sent["messages"] == [{"role": "user", "content": [{"text": "Which context is best?"}, {"cachePoint": {"type": "default"}}]}]
    # Sent through botocore's own parameter validation: the cache point is a shape it knows.
    assert sent["system"] == [{"text": "Answer from tools."}, {"cachePoint": {"type": "default"}}]
    assert sent["inferenceConfig"] == {"maxTokens": 3000}
    assert sent["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"]["properties"] == {"q": {"type": "string"}}
    assert replay.raws[0].closed


async def test_two_tool_round_through_the_loop():
    replay = rec.BedrockReplay(
        [
            rec.message_start(),
            rec.text_delta(0, "Let me check."),
            rec.block_stop(0),
            rec.tool_start(1, "tooluse_a1", "lookup"),
            # The input JSON arrives in fragments and is parsed only at contentBlockStop.
            rec.tool_input(1, '{"q": '),
            rec.tool_input(1, '"claude'),
            rec.tool_input(1, ' 4"}'),
            rec.block_stop(1),
            rec.tool_start(2, "tooluse_b2", "boom"),
            rec.block_stop(2),  # no input fragments at all: an empty object
            rec.message_stop("tool_use"),
            rec.metadata(900, 40),
        ],
        [
            rec.message_start(),
            rec.text_delta(0, "Claude 4 has no violations."),
            rec.block_stop(0),
            rec.message_stop("end_turn"),
            rec.metadata(1100, 12),
        ],
    )
    exchange, frames = await rec.ask(model_on(replay), "How does claude 4 do?")

    # Each input piece is shown as it arrives (tests/models/test_tool_input_streams.py); the calls follow whole.
    assert [f.type for f in frames] == ["start", "step", "text", *["tool-input-delta"] * 3, "tool-call", "tool-result", "tool-call",
                                        "tool-result", "step", "step", "text", "step", "done"]
    calls = [f.data for f in frames if f.type == "tool-call"]
    assert calls == [
        {"id": "tooluse_a1", "name": "lookup", "args": {"q": "claude 4"}},
        {"id": "tooluse_b2", "name": "boom", "args": {}},
    ]
    assert frames[-1].data["reason"] == "complete"
    assert exchange.answer_text == "Let me check.Claude 4 has no violations."

    second = replay.sent[1]
    assert_bedrock_request({"modelId": MODEL, **second})
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    assert second["messages"][1]["content"] == [
        {"text": "Let me check."},
        {"toolUse": {"toolUseId": "tooluse_a1", "name": "lookup", "input": {"q": "claude 4"}}},
        {"toolUse": {"toolUseId": "tooluse_b2", "name": "boom", "input": {}}},
    ]
    # Both results in one user turn, in call order; the failed one marked as an error.
    assert second["messages"][2]["content"][-1] == {"cachePoint": {"type": "default"}}
    results = [b["toolResult"] for b in second["messages"][2]["content"][:-1]]
    assert [r["toolUseId"] for r in results] == ["tooluse_a1", "tooluse_b2"]
    assert [r["status"] for r in results] == ["success", "error"]
    assert results[1]["content"] == [{"text": "error: tool-failed: boom could not run this time (it failed inside); answer without it or try again later"}]


async def test_throttling_exception_in_the_stream_is_a_typed_failure():
    replay = rec.BedrockReplay([rec.message_start(), rec.exception("throttlingException", "Too many tokens, please wait before trying again.")])
    with pytest.raises(ModelFailure) as caught:
        await collect(model_on(replay), question())
    failure = caught.value
    assert failure.cls == "upstream_unreachable"
    assert failure.retryable is True
    assert failure.reason == "throttlingException: Too many tokens, please wait before trying again."
    assert replay.raws[0].closed


async def test_throttling_is_retried_with_backoff_then_succeeds():
    sleeps: list[float] = []
    replay = rec.BedrockReplay(
        [rec.message_start(), rec.exception("throttlingException", "Too many requests")],
        rec.HttpError(503, "ServiceUnavailableException", "try later"),
        [rec.message_start(), rec.text_delta(0, "ok"), rec.message_stop("end_turn"), rec.metadata(10, 1)],
    )
    events = await collect(model_on(replay, retry=no_wait_policy(attempts=4, sleeps=sleeps)), question())
    assert [e for e in events if isinstance(e, TextDelta)] == [TextDelta(text="ok")]
    assert len(replay.sent) == 3
    assert len(sleeps) == 2 and 0.25 <= sleeps[0] <= 0.5 and 0.5 <= sleeps[1] <= 1.0


async def test_a_4xx_is_never_retried():
    replay = rec.BedrockReplay(rec.HttpError(403, "AccessDeniedException", "You don't have access to the model with the specified model ID."))
    with pytest.raises(ModelFailure) as caught:
        await collect(model_on(replay, retry=no_wait_policy(attempts=4)), question())
    assert caught.value.cls == "auth"
    assert caught.value.status == 403
    assert len(replay.sent) == 1


async def test_validation_exception_is_a_gateway_error_not_retried():
    replay = rec.BedrockReplay(rec.HttpError(400, "ValidationException", "A conversation must start with a user message."))
    with pytest.raises(ModelFailure) as caught:
        await collect(model_on(replay, retry=no_wait_policy(attempts=4)), question())
    assert (caught.value.cls, caught.value.retryable, len(replay.sent)) == ("gateway", False, 1)


async def test_stream_error_after_text_is_not_retried():
    replay = rec.BedrockReplay(
        [rec.message_start(), rec.text_delta(0, "Half an ans"), rec.exception("modelStreamErrorException", "model crashed")],
        [rec.message_start(), rec.text_delta(0, "never sent"), rec.message_stop("end_turn")],
    )
    seen = []
    with pytest.raises(ModelFailure) as caught:
        async for e in model_on(replay, retry=no_wait_policy(attempts=4))(question()):
            seen.append(e)
    # The reader already saw the first words: a second attempt would duplicate them.
    assert seen == [TextDelta(text="Half an ans")]
    assert caught.value.cls == "upstream_unreachable"
    assert len(replay.sent) == 1


async def test_max_tokens_with_no_content_is_content_missing_with_finish_reason_and_usage():
    replay = rec.BedrockReplay([rec.message_start(), rec.message_stop("max_tokens"), rec.metadata(1500, 3000)])
    seen = []
    with pytest.raises(ModelFailure) as caught:
        async for e in model_on(replay)(question()):
            seen.append(e)
    # The usage still reaches the loop first, so the spent tokens are charged.
    assert seen == [UsageEvent(input_tokens=1500, output_tokens=3000)]
    failure = caught.value
    assert failure.cls == "content_missing"
    assert failure.finish_reason == "max_tokens"
    assert failure.usage["output_tokens"] == 3000 and failure.usage["input_tokens"] == 1500


async def test_content_missing_reaches_the_reader_as_an_error_frame():
    replay = rec.BedrockReplay([rec.message_start(), rec.message_stop("max_tokens"), rec.metadata(1500, 3000)])
    exchange, frames = await rec.ask(model_on(replay), "Think hard")
    assert [f.type for f in frames] == ["start", "step", "error", "done"]  # a failed step has no finish
    assert frames[2].data["code"] == "content_missing"
    assert exchange.failure["finish_reason"] == "max_tokens"
    assert exchange.failure["usage"]["output_tokens"] == 3000


async def test_tool_input_cut_by_max_tokens_is_content_missing():
    replay = rec.BedrockReplay([
        rec.message_start(), rec.tool_start(0, "tooluse_x", "lookup"), rec.tool_input(0, '{"q": "unfini'),
        rec.block_stop(0), rec.message_stop("max_tokens"), rec.metadata(100, 3000),
    ])
    with pytest.raises(ModelFailure) as caught:
        await collect(model_on(replay), question())
    assert (caught.value.cls, caught.value.finish_reason) == ("content_missing", "max_tokens")


async def test_the_stream_is_read_off_the_event_loop():
    """A blocking read of the stream waits for a coroutine to run: that can only happen if the
    read is in another thread while the event loop keeps going."""
    loop_ran = threading.Event()

    def wait_for_the_loop() -> None:
        loop_ran.wait(timeout=5)

    raw = rec.RawStream(
        [rec.message_start(), rec.text_delta(0, "ok"), rec.message_stop("end_turn"), rec.metadata(1, 1)],
        before_each=wait_for_the_loop,
    )
    replay = rec.BedrockReplay(raw)

    async def ticker() -> None:
        await asyncio.sleep(0)
        loop_ran.set()

    tick = asyncio.create_task(ticker())
    events = await collect(model_on(replay), question())
    await tick
    assert loop_ran.is_set()
    assert events[-1] == StopEvent(reason="end_turn")


async def test_priced_model_id_is_the_configured_string():
    model = BedrockModel(MODEL, client=object())
    assert model.model_id == f"bedrock:{MODEL}"
    assert BedrockModel(MODEL, client=object(), price_id="bedrock:x").model_id == "bedrock:x"


def test_cost_is_left_to_the_price_table():
    # Bedrock reports tokens, never money: provider_cost stays None.
    from groundchat.models.converse_stream import events_from_stream

    events = list(events_from_stream([
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "x"}}},
        {"messageStop": {"stopReason": "end_turn"}},
        {"metadata": {"usage": {"inputTokens": 5, "outputTokens": 1, "totalTokens": 6}, "metrics": {"latencyMs": 1}}},
    ]))
    usage = [e for e in events if isinstance(e, UsageEvent)][0]
    assert usage.provider_cost is None
    assert usage.input_tokens == 5 and usage.cache_read_tokens == 0
    assert Decimal("0") == Decimal(usage.cache_write_tokens)


def test_checker_accepts_what_was_sent_in_a_plain_request():
    from groundchat.models.bedrock import to_converse_request

    body = to_converse_request(question(), MODEL)
    assert_bedrock_request(body)
    assert_bedrock_messages(body["messages"])


async def test_a_consumer_that_stops_early_closes_the_stream():
    replay = rec.BedrockReplay([rec.message_start(), rec.text_delta(0, "one"), rec.text_delta(0, "two"), rec.message_stop("end_turn")])
    events = model_on(replay)(question())
    assert await anext(events) == TextDelta(text="one")
    await events.aclose()
    assert replay.raws[0].closed


@pytest.mark.parametrize(
    ("exception_type", "cls", "retryable"),
    [
        ("throttlingException", "upstream_unreachable", True),
        ("modelStreamErrorException", "upstream_unreachable", True),
        ("serviceUnavailableException", "upstream_unreachable", True),
        ("internalServerException", "upstream_unreachable", True),
        ("validationException", "gateway", False),
    ],
)
async def test_every_in_stream_exception_of_the_service_model_is_typed(exception_type, cls, retryable):
    replay = rec.BedrockReplay([rec.message_start(), rec.exception(exception_type, f"{exception_type} happened")])
    with pytest.raises(ModelFailure) as caught:
        await collect(model_on(replay), question())
    assert (caught.value.cls, caught.value.retryable) == (cls, retryable)
    assert caught.value.reason == f"{exception_type}: {exception_type} happened"


def test_the_exceptions_above_are_all_the_stream_can_raise():
    from botocore.session import get_session

    output = get_session().get_service_model("bedrock-runtime").operation_model("ConverseStream").output_shape
    stream = output.members["stream"]
    exceptions = {name for name, shape in stream.members.items() if shape.metadata.get("exception")}
    assert exceptions == {
        "throttlingException", "modelStreamErrorException", "serviceUnavailableException",
        "internalServerException", "validationException",
    }
    events = {name for name, shape in stream.members.items() if not shape.metadata.get("exception")}
    assert events == {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"}


@pytest.mark.parametrize(("model_id", "system_cached", "tools_cached", "turn_cached"), [
    ("anthropic.claude-3-5-haiku-20241022-v1:0", True, True, True),
    ("eu.anthropic.claude-3-7-sonnet-20250219-v1:0", True, True, True),
    ("amazon.nova-lite-v1:0", True, False, True),
    ("anthropic.claude-3-haiku-20240307-v1:0", False, False, False),
])
def test_a_cache_point_follows_the_fixed_part_and_the_latest_turn_only_where_the_model_caches_them(
        model_id, system_cached, tools_cached, turn_cached):
    history = [Message(role="user", content="q1"), Message(role="assistant", content="a1"), Message(role="user", content="q2")]
    body = to_converse_request(ModelRequest(system="s", messages=history, tools=SPECS), model_id)
    assert_bedrock_request(body)
    assert (body["system"][-1] == {"cachePoint": {"type": "default"}}) is system_cached
    assert (body["toolConfig"]["tools"][-1] == {"cachePoint": {"type": "default"}}) is tools_cached
    assert body["toolConfig"]["tools"][0]["toolSpec"]["name"] == "lookup"
    # One cache point in the messages at most, after the latest turn's content; earlier turns have none.
    assert body["messages"][-1]["content"] == [{"text": "q2"}, *([{"cachePoint": {"type": "default"}}] if turn_cached else [])]
    assert all("cachePoint" not in block for turn in body["messages"][:-1] for block in turn["content"])
