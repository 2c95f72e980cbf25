"""OpenAI-compatible adapter on recorded SSE bodies, replayed through httpx.MockTransport."""
from __future__ import annotations

import json
from decimal import Decimal

import httpx
import pytest

from groundchat.models.failures import ModelFailure
from groundchat.models.openai_compat import OpenAICompatModel
from groundchat.models.retry import RetryPolicy
from groundchat_testkit.providers import assert_openai_messages
from groundchat.models.messages import Message, ModelRequest, StopEvent, TextDelta, ToolCallEvent, ToolInputDelta, ToolSpec, UsageEvent

import tests.models.provider_recordings as rec
from tests.models.provider_recordings import chunk, sse

KEY = "sk-test-0123456789abcdefghij"
SPECS = [ToolSpec(name="lookup", description="Look something up.", input_schema={"type": "object", "properties": {"q": {"type": "string"}}})]

# A tool-call turn as OpenRouter streams it: id and name in the first fragment, the arguments over
# several, two calls interleaved by index, then the finish reason, then the usage chunk with the
# gateway's own cost.
TOOL_ROUND = sse(
    ": OPENROUTER PROCESSING\n\n",
    chunk({"role": "assistant", "content": ""}),
    chunk({"content": "Checking "}),
    chunk({"content": "both."}),
    chunk({"tool_calls": [{"index": 0, "id": "call_A", "type": "function", "function": {"name": "lookup", "arguments": ""}}]}),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{\"q\": \"cl"}}]}),
    chunk({"tool_calls": [{"index": 1, "id": "call_B", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\""}}]}),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": "aude\"}"}}]}),
    chunk({"tool_calls": [{"index": 1, "function": {"arguments": ": \"gpt\"}"}}]}),
    chunk({}, finish="tool_calls"),
    chunk(None, usage={
        "prompt_tokens": 1200, "completion_tokens": 48, "total_tokens": 1248,
        "prompt_tokens_details": {"cached_tokens": 1000}, "cost": 0.0012345,
    }),
)

ANSWER = sse(
    chunk({"role": "assistant", "content": "Claude "}),
    chunk({"content": "wins."}),
    chunk({}, finish="stop"),
    chunk(None, usage={"prompt_tokens": 1400, "completion_tokens": 4, "total_tokens": 1404}),
)


def policy(attempts: int = 1, sleeps: list[float] | None = None) -> RetryPolicy:
    async def sleep(seconds: float) -> None:
        if sleeps is not None:
            sleeps.append(seconds)

    return RetryPolicy(attempts=attempts, sleep=sleep)


def model_on(replay: rec.OpenAIReplay, attempts: int = 1, sleeps: list[float] | None = None) -> OpenAICompatModel:
    return OpenAICompatModel(
        "gpt-4.1-mini",
        base_url="https://gateway.example/v1/",
        api_key=KEY,
        transport=replay.transport,
        retry=policy(attempts, sleeps),
    )


def question() -> ModelRequest:
    return ModelRequest(system="Answer from tools.", messages=[Message(role="user", content="Compare")], tools=SPECS, max_output_tokens=3000)


async def collect(model: OpenAICompatModel) -> list:
    return [e async for e in model(question())]


async def test_tool_call_fragments_and_usage_chunk():
    replay = rec.OpenAIReplay((200, TOOL_ROUND, {}))
    events = await collect(model_on(replay))
    assert events == [
        TextDelta(text="Checking "),
        TextDelta(text="both."),
        # Each argument piece as it arrives, under its call's id (pieces of two calls interleave) ...
        ToolInputDelta(id="call_A", name="lookup", delta='{"q": "cl'),
        ToolInputDelta(id="call_B", name="lookup", delta='{"q"'),
        ToolInputDelta(id="call_A", name="lookup", delta='aude"}'),
        ToolInputDelta(id="call_B", name="lookup", delta=': "gpt"}'),
        # ... then the calls, whole, once the stream has finished them.
        ToolCallEvent(id="call_A", name="lookup", args={"q": "claude"}),
        ToolCallEvent(id="call_B", name="lookup", args={"q": "gpt"}),
        # prompt_tokens counts the cached ones; ours keeps them apart.
        UsageEvent(input_tokens=200, output_tokens=48, cache_read_tokens=1000, provider_cost=Decimal("0.0012345")),
        StopEvent(reason="tool_use"),
    ]
    request = replay.requests[0]
    assert str(request.url) == "https://gateway.example/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = json.loads(request.content)
    assert body["model"] == "gpt-4.1-mini"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "system", "content": "Answer from tools."}, {"role": "user", "content": "Compare"}]
    assert body["tools"] == [{"type": "function", "function": {"name": "lookup", "description": "Look something up.", "parameters": SPECS[0].input_schema}}]


async def test_a_full_tool_round_through_the_loop_sends_answered_calls():
    replay = rec.OpenAIReplay((200, TOOL_ROUND, {}), (200, ANSWER, {}))
    exchange, frames = await rec.ask(model_on(replay), "Compare claude and gpt")
    assert frames[-1].data["reason"] == "complete"
    assert exchange.answer_text == "Checking both.Claude wins."
    second = replay.bodies()[1]["messages"]
    assert_openai_messages(second)
    assert second[2] == {
        "role": "assistant",
        "content": "Checking both.",
        "tool_calls": [
            {"id": "call_A", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\": \"claude\"}"}},
            {"id": "call_B", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\": \"gpt\"}"}},
        ],
    }
    assert [(m["role"], m.get("tool_call_id")) for m in second[3:]] == [("tool", "call_A"), ("tool", "call_B")]
    assert json.loads(second[3]["content"]) == {"q": "claude", "mean_violations": 0, "ok": False}


async def test_401_is_auth_and_the_key_never_reaches_the_reason():
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}.", "type": "invalid_request_error", "code": "invalid_api_key"}}).encode()
    replay = rec.OpenAIReplay((401, body, {}))
    with pytest.raises(ModelFailure) as caught:
        await collect(model_on(replay, attempts=4))
    failure = caught.value
    assert (failure.cls, failure.status, failure.retryable) == ("auth", 401, False)
    assert KEY not in failure.reason and KEY not in str(failure) and KEY not in json.dumps(failure.trace_record())
    assert "Incorrect API key provided" in failure.reason
    assert len(replay.requests) == 1
    assert KEY not in repr(model_on(replay))


async def test_429_with_the_providers_spend_message_is_spend_limit_not_retried():
    body = json.dumps({"error": {
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "type": "insufficient_quota", "code": "insufficient_quota",
    }}).encode()
    replay = rec.OpenAIReplay((429, body, {}))
    with pytest.raises(ModelFailure) as caught:
        await collect(model_on(replay, attempts=4))
    assert (caught.value.cls, caught.value.status) == ("spend_limit", 429)
    assert "exceeded your current quota" in caught.value.reason
    assert len(replay.requests) == 1


async def test_402_from_a_gateway_is_spend_limit():
    body = json.dumps({"error": {"code": 402, "message": "This request requires more credits."}}).encode()
    replay = rec.OpenAIReplay((402, body, {}))
    with pytest.raises(ModelFailure) as caught:
        await collect(model_on(replay, attempts=4))
    assert caught.value.cls == "spend_limit"


async def test_plain_429_is_retried_with_backoff_then_reported_as_gateway():
    sleeps: list[float] = []
    limited = (429, b'{"error": {"message": "Rate limit reached for requests"}}', {"retry-after": "2"})
    replay = rec.OpenAIReplay(limited, limited, limited)
    with pytest.raises(ModelFailure) as caught:
        await collect(model_on(replay, attempts=3, sleeps=sleeps))
    assert (caught.value.cls, caught.value.extra["attempts"]) == ("gateway", 3)
    assert len(replay.requests) == 3
    # The gateway's Retry-After is honoured.
    assert sleeps == [2.0, 2.0]


async def test_5xx_is_retried_and_then_the_answer_streams():
    sleeps: list[float] = []
    replay = rec.OpenAIReplay((502, b"Bad gateway", {}), (200, ANSWER, {}))
    events = await collect(model_on(replay, attempts=3, sleeps=sleeps))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Claude ", "wins."]
    assert len(sleeps) == 1


async def test_connection_error_is_gateway_unreachable():
    replay = rec.OpenAIReplay(*(httpx.ConnectError("[Errno 111] Connection refused") for _ in range(2)))
    with pytest.raises(ModelFailure) as caught:
        await collect(model_on(replay, attempts=2))
    assert caught.value.cls == "gateway_unreachable"
    assert "Connection refused" in caught.value.reason
    assert len(replay.requests) == 2


async def test_length_stop_with_no_content_is_content_missing_after_usage():
    body = sse(
        chunk({"role": "assistant", "content": "", "reasoning": "Let me think about"}),
        chunk({}, finish="length"),
        chunk(None, usage={"prompt_tokens": 800, "completion_tokens": 3000, "total_tokens": 3800, "cost": 0.0049}),
    )
    replay = rec.OpenAIReplay((200, body, {}))
    seen = []
    with pytest.raises(ModelFailure) as caught:
        async for e in model_on(replay)(question()):
            seen.append(e)
    assert seen == [UsageEvent(input_tokens=800, output_tokens=3000, provider_cost=Decimal("0.0049"))]
    assert (caught.value.cls, caught.value.finish_reason) == ("content_missing", "max_tokens")
    assert caught.value.usage["output_tokens"] == 3000


async def test_an_error_inside_a_200_stream_is_classified():
    body = sse(chunk({"content": ""}), {"error": {"code": 502, "message": "Provider returned error"}})
    replay = rec.OpenAIReplay((200, body, {}))
    with pytest.raises(ModelFailure) as caught:
        await collect(model_on(replay))
    assert (caught.value.cls, caught.value.status) == ("gateway", 502)


async def test_no_usage_chunk_yields_no_usage_event():
    body = sse(chunk({"content": "Hi"}), chunk({}, finish="stop"))
    replay = rec.OpenAIReplay((200, body, {}))
    events = await collect(model_on(replay))
    # The loop decides what an unmeasured step costs; the adapter never invents a usage.
    assert events == [TextDelta(text="Hi"), StopEvent(reason="end_turn")]


async def test_litellm_style_cache_fields():
    body = sse(chunk({"content": "Hi"}), chunk({}, finish="stop"), chunk(None, usage={
        "prompt_tokens": 500, "completion_tokens": 2, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 300,
    }))
    events = await collect(model_on(rec.OpenAIReplay((200, body, {}))))
    usage = [e for e in events if isinstance(e, UsageEvent)][0]
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens, usage.provider_cost) == (100, 100, 300, None)
