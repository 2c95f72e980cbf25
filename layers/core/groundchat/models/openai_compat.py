"""Any OpenAI-compatible gateway (LiteLLM, OpenRouter, vLLM, Ollama, llama.cpp's server, ...) by key.

Streaming chat completions with tools over httpx; the server-sent events are parsed here. The key
goes only into the Authorization header: it is never logged, and failures are sanitised.
"""
from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from contextlib import aclosing
from typing import TYPE_CHECKING, AsyncGenerator, TypedDict

import httpx

from groundchat.models.failures import ModelFailure, classify, from_http_status, says_spend_limit
from groundchat.models.retry import RetryPolicy, stream_with_retries
from groundchat.models.messages import (
    NO_RESULT,
    Message,
    ModelEvent,
    ModelRequest,
    StopEvent,
    TextDelta,
    ToolCallEvent,
    ToolInputDelta,
    UsageEvent,
)
from groundchat.models.image_parts import openai_user_parts

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject, JsonValue
    from groundchat.models.chat_completion_shapes import ChatCompletionChunk, CompletionUsage

# OpenAI's finish reasons in the words our StopEvent uses everywhere (Converse's words).
FINISH_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filtered",
}


# ---------------------------------------------------------------------------------------------
# Our transcript -> the chat completions body


def to_openai_messages(request: ModelRequest, model_id: str | None = None) -> JsonObject:
    """The JSON body of POST /chat/completions (streaming, with tools) for our request."""
    messages: list[JsonValue] = []
    if request.system.strip():
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        translated = _message(message)
        if translated is not None:
            messages.append(translated)
    body: JsonObject = {
        "messages": messages,
        "max_tokens": request.max_output_tokens,
        "stream": True,
        # Without this the stream carries no usage, and a step without usage cannot be priced.
        "stream_options": {"include_usage": True},
    }
    if model_id is not None:
        body = {"model": model_id, **body}
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
            }
            for t in request.tools
        ]
    return body


def _message(message: Message) -> JsonObject | None:
    if message.role == "assistant":
        return _assistant_message(message)
    if message.role == "tool":
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id,
            "content": message.content if message.content.strip() else NO_RESULT,
        }
    if message.images:
        return {"role": "user", "content": openai_user_parts(message)}
    return {"role": "user", "content": message.content}


def _assistant_message(message: Message) -> JsonObject | None:
    """An assistant turn; its calls as `tool_calls`. A turn with neither text nor calls is dropped."""
    if not message.content and not message.tool_calls:
        return None
    # Several servers reject `content: null` beside tool calls; an empty string is accepted by all.
    out: JsonObject = {"role": "assistant", "content": message.content or ""}
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.args, ensure_ascii=False)},
            }
            for call in message.tool_calls
        ]
    return out


# ---------------------------------------------------------------------------------------------
# The SSE stream -> our events


class _CallParts(TypedDict):
    """One tool call while its id, name and argument pieces arrive; `passed`: how many of the
    pieces have gone out as ToolInputDeltas (pieces that come before the id and name wait)."""

    id: str
    name: str
    arguments: list[str]
    passed: int


class ChatCompletionStreamReader:
    """Turns chat.completion.chunk objects into our events; `finish()` closes the step."""

    def __init__(self) -> None:
        self.tool_calls: dict[int, _CallParts] = {}
        self.finish_reason: str | None = None
        self.usage: UsageEvent | None = None
        self.saw_text = False
        # Set by finish() for a reply with no content; raised after the usage has been yielded.
        self.failure: ModelFailure | None = None

    def feed(self, chunk: ChatCompletionChunk) -> list[ModelEvent]:
        if error := chunk.get("error"):
            raise _stream_error(error)
        out: list[ModelEvent] = []
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if content := delta.get("content"):
                self.saw_text = True
                out.append(TextDelta(text=content))
            for position, fragment in enumerate(delta.get("tool_calls") or []):
                # Some servers send whole calls without an index: their position stands in for it.
                index = fragment.get("index", position)
                call = self.tool_calls.setdefault(index, {"id": "", "name": "", "arguments": [], "passed": 0})
                if call_id := fragment.get("id"):
                    call["id"] = call_id
                function = fragment.get("function") or {}
                if (name := function.get("name")) and not call["name"]:
                    call["name"] = name
                if arguments := function.get("arguments"):
                    call["arguments"].append(arguments)
                out.extend(_input_delta(call))
            if finish_reason := choice.get("finish_reason"):
                self.finish_reason = finish_reason
        usage = chunk.get("usage")
        if usage:
            self.usage = usage_event(usage)
        return out

    def finish(self) -> list[ModelEvent]:
        finish = FINISH_REASONS.get(self.finish_reason or "", self.finish_reason)
        usage = self.usage.model_dump(mode="json") if self.usage else None
        out: list[ModelEvent] = []
        for index in sorted(self.tool_calls):
            call = self.tool_calls[index]
            raw = "".join(call["arguments"])
            try:
                args: JsonValue = json.loads(raw) if raw.strip() else {}
            except json.JSONDecodeError:
                if finish == "max_tokens":
                    raise ModelFailure("content_missing", f"tool call {call['name']} cut off by the output limit", finish_reason=finish, usage=usage)
                raise ModelFailure("gateway", f"tool arguments are not JSON: {raw[:200]!r}", finish_reason=finish, usage=usage)
            if not isinstance(args, dict) or not call["id"] or not call["name"]:
                raise ModelFailure("gateway", f"incomplete tool call at index {index}: {call['name']!r} {raw[:200]!r}", finish_reason=finish, usage=usage)
            out.append(ToolCallEvent(id=call["id"], name=call["name"], args=args))
        if self.usage is not None:
            out.append(self.usage)
        if finish is None:
            raise ModelFailure("gateway", "the stream ended without a finish reason", usage=usage)
        if not self.saw_text and not any(isinstance(e, ToolCallEvent) for e in out):
            # Usage first: the loop charges what the empty reply cost before it sees the failure.
            self.failure = ModelFailure(
                "content_missing",
                f"the model stopped ({self.finish_reason}) without text or a tool call",
                finish_reason=finish,
                usage=usage,
            )
            return out
        out.append(StopEvent(reason=finish))
        return out


def _input_delta(call: _CallParts) -> list[ModelEvent]:
    """The argument text not yet passed on, once the call has an id and a name to pass it under."""
    if not (call["id"] and call["name"]) or call["passed"] == len(call["arguments"]):
        return []
    delta = "".join(call["arguments"][call["passed"]:])
    call["passed"] = len(call["arguments"])
    return [ToolInputDelta(id=call["id"], name=call["name"], delta=delta)]


def usage_event(usage: CompletionUsage) -> UsageEvent:
    """OpenAI counts cached tokens inside prompt_tokens; ours, like Converse, keeps them apart so a
    price table can charge each kind once."""
    details = usage.get("prompt_tokens_details") or {}
    cache_read = int(details.get("cached_tokens") or usage.get("cache_read_input_tokens") or 0)
    cache_write = int(details.get("cache_write_tokens") or usage.get("cache_creation_input_tokens") or 0)
    prompt = int(usage.get("prompt_tokens") or 0)
    return UsageEvent(
        input_tokens=max(prompt - cache_read - cache_write, 0),
        output_tokens=int(usage.get("completion_tokens") or 0),
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        provider_cost=_provider_cost(usage),
    )


def _provider_cost(usage: CompletionUsage) -> Decimal | None:
    """The gateway's own figure in USD where it reports one (OpenRouter and LiteLLM: usage.cost)."""
    for value in (usage.get("cost"), usage.get("total_cost")):
        if value is None or isinstance(value, bool):
            continue
        try:
            # Through str: a float's binary noise must not become part of a money amount.
            return Decimal(str(value))
        except (InvalidOperation, ValueError):
            continue
    return None


def _stream_error(error: JsonValue) -> ModelFailure:
    """An error object sent inside a 200 stream (OpenRouter, LiteLLM do this mid-stream)."""
    if not isinstance(error, dict):
        return ModelFailure("gateway", f"error in stream: {error}")
    message = str(error.get("message") or error)
    code = error.get("code")
    status = code if isinstance(code, int) else None
    if status is not None:
        return from_http_status(status, message)
    if says_spend_limit(message) or says_spend_limit(str(code or "")):
        return ModelFailure("spend_limit", f"error in stream: {code}: {message}")
    return ModelFailure("gateway", f"error in stream: {code}: {message}")


def parse_sse_data(lines: list[str]) -> str | None:
    """The data of one server-sent event (its `data:` lines joined), or None for a comment-only event."""
    data = [line[5:].lstrip(" ") if line.startswith("data:") else None for line in lines]
    parts = [d for d in data if d is not None]
    return "\n".join(parts) if parts else None


# ---------------------------------------------------------------------------------------------
# The adapter


class OpenAICompatModel:
    """A ChatModel on any OpenAI-compatible /chat/completions endpoint."""

    def __init__(
        self,
        model_id: str,
        *,
        base_url: str,
        api_key: str,
        transport: httpx.AsyncBaseTransport | None = None,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout | None = None,
        price_id: str | None = None,
    ) -> None:
        self.remote_model_id = model_id
        self.model_id = price_id or f"openai:{model_id}"
        self.price_id = self.model_id
        self.url = base_url.rstrip("/") + "/chat/completions"
        self._api_key = api_key
        self._transport = transport
        self.retry = retry or RetryPolicy()
        self.timeout = timeout or httpx.Timeout(connect=10.0, read=120.0, write=30.0, pool=10.0)

    def __repr__(self) -> str:  # the key stays out of reprs, and so out of logs and traces
        return f"OpenAICompatModel(model_id={self.model_id!r}, url={self.url!r})"

    async def __call__(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        body = to_openai_messages(request, self.remote_model_id)
        # Closed explicitly so that a consumer stopping early releases the connection at once.
        async with aclosing(stream_with_retries(lambda: self._stream_once(body), self.retry)) as events:
            async for event in events:
                yield event

    async def _stream_once(self, body: JsonObject) -> AsyncGenerator[ModelEvent, None]:
        headers = {"Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        reader = ChatCompletionStreamReader()
        try:
            async with httpx.AsyncClient(transport=self._transport, timeout=self.timeout) as client:
                async with client.stream("POST", self.url, json=body, headers=headers) as response:
                    if response.status_code >= 400:
                        text = (await response.aread()).decode("utf-8", "replace")
                        raise from_http_status(response.status_code, text, retry_after=_retry_after(response))
                    async for chunk in _sse_chunks(response):
                        for event in reader.feed(chunk):
                            yield event
        except ModelFailure:
            raise
        except httpx.HTTPError as exc:
            failure = classify(exc)
            if failure.usage is None and reader.usage is not None:
                failure.usage = reader.usage.model_dump(mode="json")
            raise failure from exc
        for event in reader.finish():
            yield event
        if reader.failure is not None:
            raise reader.failure


async def _sse_chunks(response: httpx.Response) -> AsyncGenerator[ChatCompletionChunk, None]:
    """The JSON chunks of an SSE body, up to `data: [DONE]`; comments and keep-alives skipped."""
    event_lines: list[str] = []
    async for line in response.aiter_lines():
        if line:
            event_lines.append(line)
            continue
        data = parse_sse_data(event_lines)
        event_lines = []
        if data is None:
            continue
        if data.strip() == "[DONE]":
            return
        try:
            yield json.loads(data)
        except json.JSONDecodeError as exc:
            raise ModelFailure("gateway", f"a stream chunk is not JSON: {data[:200]!r}") from exc
    data = parse_sse_data(event_lines)
    if data is not None and data.strip() != "[DONE]":
        try:
            yield json.loads(data)
        except json.JSONDecodeError as exc:
            raise ModelFailure("gateway", f"a stream chunk is not JSON: {data[:200]!r}") from exc


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: our own backoff is good enough
