"""Amazon Bedrock by IAM: our transcript to ConverseStream, its event stream back to our events
(read by `converse_stream.ConverseStreamReader`).

Shapes follow botocore's service model for bedrock-runtime (ConverseStreamRequest,
ConverseStreamOutput); the tests drive a real botocore client, so a shape we get wrong fails there.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import re
from contextlib import aclosing
from typing import TYPE_CHECKING, AsyncGenerator, Iterator

from groundchat.models.converse_stream import ConverseStreamReader
from groundchat.models.failures import ModelFailure, classify
from groundchat.models.retry import RetryPolicy, stream_with_retries
from groundchat.models.messages import NO_RESULT, Message, ModelEvent, ModelRequest
from groundchat.models.image_parts import converse_image_blocks

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from groundchat.models.converse_shapes import ConverseMessage, ConverseObject, ConverseRequest, ConverseStreamEvent

# Bedrock rejects a blank text block, so a turn with nothing to say still says this.
EMPTY_TURN_TEXT = "(empty)"
# A transcript cut by history compaction can start with the assistant; Converse must start with a user.
OMITTED_HISTORY_TEXT = "(earlier conversation omitted)"

_TOOL_USE_ID = re.compile(r"^[a-zA-Z0-9_.:-]{1,64}$")


# ---------------------------------------------------------------------------------------------
# Our transcript -> ConverseStream request


def to_converse_request(request: ModelRequest, model_id: str) -> ConverseRequest:
    """The keyword arguments for `bedrock-runtime.converse_stream`, from our request."""
    with_tools = bool(request.tools)
    turns: list[ConverseMessage] = []
    for message in request.messages:
        role, blocks = _blocks_for(message, model_id, with_tools)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            # Converse wants strictly alternating roles: a question after unanswered history, or
            # tool results followed by a new question, become one turn.
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    if not turns or turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [{"text": OMITTED_HISTORY_TEXT}]})
    body: ConverseRequest = {
        "modelId": model_id,
        "messages": turns,
        "inferenceConfig": {"maxTokens": request.max_output_tokens},
    }
    caching = cache_points(model_id)
    if "messages" in caching:
        # After the latest turn: the next step of this answer (and the next question, within the
        # cache's five minutes) sends the same prefix, so everything up to here is read from the
        # cache instead of billed again as input. The fixed part alone is under some models'
        # minimum cacheable prefix (bench/prompt_cache.py); the growing conversation is not.
        turns[-1]["content"].append(CACHE_POINT)
    if request.system.strip():
        body["system"] = [{"text": request.system}, *([CACHE_POINT] if "system" in caching else [])]
    if with_tools:
        body["toolConfig"] = {
            "tools": [
                *(
                    {
                        "toolSpec": {
                            "name": spec.name,
                            "description": spec.description,
                            "inputSchema": {"json": spec.input_schema},
                        }
                    }
                    for spec in request.tools
                ),
                *([CACHE_POINT] if "tools" in caching else []),
            ]
        }
    return body


# Prompt caching: a cache point after the fixed part of every step (system prompt, tool schemas)
# and one after the latest turn, so a repeated step's prefix is billed at the cache-read price.
# Only where Bedrock documents it for the model: Claude models cache system, tools and messages,
# Nova models the system prompt and messages (three cache points, under the limit of four).
CACHE_POINT: ConverseObject = {"cachePoint": {"type": "default"}}
_CACHING = (
    ("anthropic.claude-3-5-haiku", frozenset({"system", "tools", "messages"})),
    ("anthropic.claude-3-7-sonnet", frozenset({"system", "tools", "messages"})),
    ("anthropic.claude-sonnet-4", frozenset({"system", "tools", "messages"})),
    ("anthropic.claude-opus-4", frozenset({"system", "tools", "messages"})),
    ("amazon.nova-", frozenset({"system", "messages"})),
)


def cache_points(model_id: str) -> frozenset[str]:
    """Where a cache point may go for this model (a cross-region prefix such as `eu.` included)."""
    return next((where for family, where in _CACHING if family in model_id), frozenset())


def _blocks_for(message: Message, model_id: str, with_tools: bool) -> tuple[str, list[ConverseObject]]:
    if message.role == "assistant":
        return "assistant", _assistant_blocks(message, with_tools)
    if message.role == "tool":
        return "user", [_tool_result_block(message, model_id, with_tools)]
    return "user", [*converse_image_blocks(message), {"text": message.content if message.content.strip() else EMPTY_TURN_TEXT}]


def _assistant_blocks(message: Message, with_tools: bool) -> list[ConverseObject]:
    """Text first, then one toolUse per call. An assistant turn with neither is dropped (returns [])."""
    blocks: list[ConverseObject] = []
    if message.content.strip():
        blocks.append({"text": message.content})
    for call in message.tool_calls:
        if with_tools:
            blocks.append({"toolUse": {"toolUseId": bedrock_tool_use_id(call.id), "name": call.name, "input": call.args}})
        else:
            # Converse refuses toolUse blocks without a toolConfig; with no tools offered this
            # time, earlier calls are kept as words so the model still knows what happened.
            blocks.append({"text": f"(called {call.name} with {json.dumps(call.args, ensure_ascii=False)})"})
    return blocks


def _tool_result_block(message: Message, model_id: str, with_tools: bool) -> ConverseObject:
    text = message.content if message.content.strip() else NO_RESULT
    if not with_tools:
        return {"text": f"(result of {message.name or 'a tool'}: {text})"}
    result: ConverseObject = {
        "toolUseId": bedrock_tool_use_id(message.tool_call_id or ""),
        "content": [{"text": text}],
    }
    # Only Anthropic's models accept `status`; the others reject the field, and our error
    # results already begin with "error:" in their text.
    if "anthropic." in model_id:
        result["status"] = "error" if message.is_error else "success"
    return {"toolResult": result}


def bedrock_tool_use_id(call_id: str) -> str:
    """Ids from another provider may not fit Bedrock's pattern; map them the same way every time."""
    if _TOOL_USE_ID.match(call_id):
        return call_id
    return "t_" + hashlib.sha1(call_id.encode()).hexdigest()[:32]


# ---------------------------------------------------------------------------------------------
# The adapter


class BedrockModel:
    """A ChatModel on Bedrock ConverseStream. boto3 is synchronous: each blocking read of the
    stream runs in a worker thread so the event loop keeps serving other requests."""

    def __init__(
        self,
        model_id: str,
        *,
        region: str | None = None,
        client: BaseClient | None = None,
        retry: RetryPolicy | None = None,
        price_id: str | None = None,
    ) -> None:
        self.bedrock_model_id = model_id
        # The id the price table and the trace know this model by.
        self.model_id = price_id or f"bedrock:{model_id}"
        self.price_id = self.model_id
        self.region = region
        self.retry = retry or RetryPolicy()
        self._client = client

    def client(self) -> BaseClient:
        if self._client is None:
            import boto3
            from botocore.config import Config

            # botocore's own retries are off: the one policy in retry.py decides, within the
            # step's time limit, and never retries a 4xx.
            config = Config(
                retries={"total_max_attempts": 1, "mode": "standard"},
                connect_timeout=10,
                read_timeout=120,
                user_agent_extra="groundchat",
            )
            self._client = boto3.client("bedrock-runtime", region_name=self.region, config=config)
        return self._client

    async def __call__(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        body = to_converse_request(request, self.bedrock_model_id)
        # Closed explicitly so that a consumer stopping early releases the connection at once.
        async with aclosing(stream_with_retries(lambda: self._stream_once(body), self.retry)) as events:
            async for event in events:
                yield event

    async def _stream_once(self, body: ConverseRequest) -> AsyncGenerator[ModelEvent, None]:
        try:
            # The first call also builds the client (it reads credential files): in the thread too.
            response = await asyncio.to_thread(lambda: self.client().converse_stream(**body))
        except Exception as exc:
            raise classify(exc) from exc
        stream = response["stream"]
        # botocore's EventStream, untyped: it yields ConverseStreamOutput events, never None.
        iterator: Iterator[ConverseStreamEvent] = iter(stream)
        reader = ConverseStreamReader()
        try:
            while True:
                try:
                    event = await asyncio.to_thread(next, iterator, None)
                except Exception as exc:  # an exception event in the stream, or the connection
                    raise _with_usage(classify(exc), reader) from exc
                if event is None:
                    break
                for ours in reader.feed(event):
                    yield ours
            for ours in reader.finish():
                yield ours
        finally:
            # Closing returns the connection to the pool even when the consumer stopped early.
            stream.close()


def _with_usage(failure: ModelFailure, reader: ConverseStreamReader) -> ModelFailure:
    if failure.usage is None and reader.usage is not None:
        failure.usage = reader.usage.model_dump(mode="json")
    return failure


__all__ = ["BedrockModel", "bedrock_tool_use_id", "to_converse_request"]
