"""Recorded provider responses, replayed through the real client libraries.

Bedrock: ConverseStream event streams encoded as AWS event-stream bytes (the wire format botocore
decodes), served to a real boto3 bedrock-runtime client from its `before-send` hook, so botocore
validates and serialises our request and parses the stream with its own parser. OpenAI-compatible:
SSE bodies as gateways send them, served by httpx.MockTransport.
"""
from __future__ import annotations

import binascii
import json
import struct
from typing import Any, Callable, Iterable

import boto3
import httpx
from botocore.awsrequest import AWSResponse
from botocore.config import Config

from groundchat.auth.callers import Caller
from groundchat.chat.answer_run import Exchange
from groundchat.chat.loop import run_exchange
from groundchat_testkit.answer_runs import kept_run
from groundchat_testkit.scripted import ScriptedModel, Step
from groundchat.tools.base import Tool, ToolContext, ToolRegistry
from pydantic import BaseModel

# ---------------------------------------------------------------------------------------------
# AWS event-stream encoding (botocore only decodes; this is the inverse of its EventStreamBuffer)


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    # type 7 = string: 1-byte name length, name, type, 2-byte value length, value
    return struct.pack("!B", len(raw_name)) + raw_name + struct.pack("!BH", 7, len(raw_value)) + raw_value


def encode_message(headers: dict[str, str], payload: bytes) -> bytes:
    raw_headers = b"".join(_header(k, v) for k, v in headers.items())
    total = 12 + len(raw_headers) + len(payload) + 4
    prelude = struct.pack("!II", total, len(raw_headers))
    prelude += struct.pack("!I", binascii.crc32(prelude) & 0xFFFFFFFF)
    message = prelude + raw_headers + payload
    return message + struct.pack("!I", binascii.crc32(message) & 0xFFFFFFFF)


def event(event_type: str, body: dict[str, Any]) -> bytes:
    """One ConverseStreamOutput event; `p` is the padding field Bedrock adds (parsers ignore it)."""
    payload = json.dumps({**body, "p": "abcdefgh"}).encode()
    return encode_message(
        {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"}, payload
    )


def exception(exception_type: str, message: str) -> bytes:
    """An exception event inside the stream (e.g. throttlingException), as Bedrock sends one."""
    return encode_message(
        {":exception-type": exception_type, ":content-type": "application/json", ":message-type": "exception"},
        json.dumps({"message": message}).encode(),
    )


# Builders for the events of ConverseStreamOutput, named and shaped as in botocore's service model.


def message_start() -> bytes:
    return event("messageStart", {"role": "assistant"})


def text_delta(index: int, text: str) -> bytes:
    return event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": text}})


def tool_start(index: int, tool_use_id: str, name: str) -> bytes:
    return event("contentBlockStart", {"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": tool_use_id, "name": name}}})


def tool_input(index: int, fragment: str) -> bytes:
    return event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": fragment}}})


def block_stop(index: int) -> bytes:
    return event("contentBlockStop", {"contentBlockIndex": index})


def message_stop(reason: str) -> bytes:
    return event("messageStop", {"stopReason": reason})


def metadata(input_tokens: int, output_tokens: int, cache_read: int = 0, cache_write: int = 0) -> bytes:
    usage = {"inputTokens": input_tokens, "outputTokens": output_tokens, "totalTokens": input_tokens + output_tokens}
    if cache_read:
        usage["cacheReadInputTokens"] = cache_read
    if cache_write:
        usage["cacheWriteInputTokens"] = cache_write
    return event("metadata", {"usage": usage, "metrics": {"latencyMs": 412}})


class RawStream:
    """Stands in for urllib3's response: botocore reads event streams through `.stream()`."""

    def __init__(self, chunks: Iterable[bytes], before_each: Callable[[], None] | None = None) -> None:
        self._chunks = list(chunks)
        self._before_each = before_each
        self.closed = False

    def stream(self, *_args: Any, **_kwargs: Any):
        for chunk in self._chunks:
            if self._before_each:
                self._before_each()
            yield chunk

    def read(self, *_args: Any, **_kwargs: Any) -> bytes:
        return b"".join(self._chunks)

    def close(self) -> None:
        self.closed = True


class HttpError:
    """A whole HTTP error response from Bedrock (before any stream), e.g. AccessDeniedException."""

    def __init__(self, status: int, code: str, message: str) -> None:
        self.status, self.code, self.message = status, code, message


class BedrockReplay:
    """A real boto3 bedrock-runtime client whose HTTP sends are answered from recordings, in order."""

    def __init__(self, *responses: list[bytes] | HttpError | RawStream) -> None:
        self.responses = list(responses)
        self.sent: list[dict[str, Any]] = []
        self.urls: list[str] = []
        self.raws: list[RawStream] = []
        self.client = boto3.client(
            "bedrock-runtime",
            region_name="eu-west-1",
            aws_access_key_id="AKIDEXAMPLETESTING00",
            aws_secret_access_key="testing-secret",
            config=Config(retries={"total_max_attempts": 1}),
        )
        self.client.meta.events.register("before-send.bedrock-runtime.ConverseStream", self._answer)

    def _answer(self, request: Any, **_kwargs: Any) -> AWSResponse:
        self.sent.append(json.loads(request.body))
        self.urls.append(request.url)
        if not self.responses:
            raise AssertionError("the model was called more times than there are recordings")
        response = self.responses.pop(0)
        if isinstance(response, HttpError):
            body = json.dumps({"message": response.message}).encode()
            headers = {"x-amzn-ErrorType": f"{response.code}:http://internal.amazon.com/", "content-type": "application/json"}
            return AWSResponse(request.url, response.status, headers, RawStream([body]))
        raw = response if isinstance(response, RawStream) else RawStream(response)
        self.raws.append(raw)
        return AWSResponse(request.url, 200, {"content-type": "application/vnd.amazon.eventstream"}, raw)


# ---------------------------------------------------------------------------------------------
# OpenAI-compatible: SSE bodies


def sse(*chunks: dict[str, Any] | str) -> bytes:
    """An SSE body: each chunk as `data: <json>`, then `data: [DONE]`."""
    lines = []
    for chunk in chunks:
        lines.append(chunk if isinstance(chunk, str) else f"data: {json.dumps(chunk)}\n\n")
    lines.append("data: [DONE]\n\n")
    return "".join(lines).encode()


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    choices = [] if delta is None and finish is None else [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    return {"id": "gen-1", "object": "chat.completion.chunk", "created": 1718000000, "model": "gpt-4.1-mini", "choices": choices, **extra}


class OpenAIReplay:
    """httpx.MockTransport answering from a list of (status, body | exception) in order."""

    def __init__(self, *responses: tuple[int, bytes, dict[str, str]] | Exception) -> None:
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []
        self.transport = httpx.MockTransport(self._answer)

    def _answer(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if not self.responses:
            raise AssertionError("the gateway was called more times than there are recordings")
        response = self.responses.pop(0)
        if isinstance(response, Exception):
            raise response
        status, body, headers = response
        content_type = "text/event-stream" if status == 200 else "application/json"
        return httpx.Response(status, content=body, headers={"content-type": content_type, **headers}, request=request)

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


# ---------------------------------------------------------------------------------------------
# Transcripts the loop produces


class Query(BaseModel):
    q: str = ""


async def _allow(_permission: str, _caller: Caller) -> bool:
    return True


def _tools() -> ToolRegistry:
    async def lookup(_ctx: ToolContext, args: Query) -> dict[str, Any]:
        return {"q": args.q, "mean_violations": 0, "ok": False}

    async def empty(_ctx: ToolContext, _args: Query) -> None:
        return None

    async def boom(_ctx: ToolContext, _args: Query) -> None:
        raise RuntimeError("index unavailable")

    return ToolRegistry(
        [
            Tool(name="lookup", grounding="figures", drawer="plain", offline_template="generic", description="Look something up.", input_model=Query, permission="runs.read", handler=lookup),
            Tool(name="empty", grounding="text", drawer="plain", offline_template="generic", description="Finds nothing.", input_model=Query, permission="runs.read", handler=empty),
            Tool(name="boom", grounding="text", drawer="plain", offline_template="generic", description="Always fails.", input_model=Query, permission="runs.read", handler=boom),
        ],
        _allow,
    )


async def ask(model: Any, question: str, history: list | None = None) -> tuple[Exchange, list]:
    """Run one exchange through the real loop; returns the exchange and the frames."""
    captured: list[Exchange] = []

    async def commit(ex: Exchange) -> None:
        captured.append(ex)

    async def finish(ex: Exchange) -> None:
        if not captured:
            captured.append(ex)

    registry = _tools()
    ctx = ToolContext(caller=Caller(id="tester"), run_id="run-1", conversation_id="conv-1")
    run = await kept_run(model, registry, system="Answer only from tool results.", ctx=ctx, history=history or [],
                         question=question, conversation_id="conv-1", on_commit=commit, on_finish=finish)
    frames = [f async for f in run_exchange(run)]
    return captured[0], frames


async def loop_transcripts() -> dict[str, Any]:
    """Requests the loop really built: several calls in one turn, a tool error, "(no result)",
    two rounds, and a second question continuing a conversation that ended at max-steps."""
    out: dict[str, Any] = {}

    several = ScriptedModel([Step(tool_calls=[("lookup", {"q": "a"}), ("lookup", {"q": "b"})]), Step(text="Both found.")])
    await ask(several, "Compare a and b")
    out["several_calls"] = several.requests[-1]

    failing = ScriptedModel([Step(text="Checking.", tool_calls=[("boom", {"q": "x"})]), Step(text="The index is down.")])
    await ask(failing, "Search x")
    out["tool_error"] = failing.requests[-1]

    empty = ScriptedModel([Step(tool_calls=[("empty", {})]), Step(text="Nothing there.")])
    await ask(empty, "Anything?")
    out["no_result"] = empty.requests[-1]

    refused = ScriptedModel([Step(tool_calls=[("not_a_tool", {"q": "x"})]), Step(text="Cannot.")])
    await ask(refused, "Use a tool you do not have")
    out["refused_tool"] = refused.requests[-1]

    rounds = ScriptedModel([
        Step(tool_calls=[("lookup", {"q": "1"})]),
        Step(text="One more.", tool_calls=[("empty", {}), ("boom", {})]),
        Step(text="Done."),
    ])
    await ask(rounds, "Two rounds please")
    out["two_rounds"] = rounds.requests[-1]

    # A conversation whose last exchange stopped at max-steps ends with tool results: the next
    # question follows them directly.
    endless = ScriptedModel([Step(tool_calls=[("lookup", {"q": "again"})])], repeat_last=True)
    stopped, _ = await ask(endless, "Keep going")
    follow = ScriptedModel([Step(text="Here is the answer.")])
    # (ScriptedModel numbers its call ids per model, so only one scripted exchange is history here.)
    _, frames = await ask(follow, "And now?", history=stopped.new_messages)
    assert frames[-1].data["reason"] == "complete", frames
    out["after_max_steps"] = follow.requests[-1]
    return out
