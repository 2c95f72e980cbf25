"""The shape of a streamed chat.completion.chunk as OpenAI-compatible gateways send it, written as
TypedDicts: the type checker reads the keys the reader uses, and at run time a chunk stays the plain
dict `json.loads` made (the reader still treats every key as possibly missing or null, since
gateways differ)."""
from __future__ import annotations

from typing import TypedDict

from groundchat.json_shapes import JsonValue


class FunctionDelta(TypedDict, total=False):
    name: str | None
    arguments: str | None


class ToolCallDelta(TypedDict, total=False):
    index: int
    id: str | None
    function: FunctionDelta | None


class ChoiceDelta(TypedDict, total=False):
    content: str | None
    tool_calls: list[ToolCallDelta] | None


class Choice(TypedDict, total=False):
    delta: ChoiceDelta | None
    finish_reason: str | None


class PromptTokensDetails(TypedDict, total=False):
    cached_tokens: int | None
    cache_write_tokens: int | None


class CompletionUsage(TypedDict, total=False):
    prompt_tokens: int | None
    completion_tokens: int | None
    prompt_tokens_details: PromptTokensDetails | None
    # Anthropic's names, as LiteLLM passes them on.
    cache_read_input_tokens: int | None
    cache_creation_input_tokens: int | None
    # The gateway's own price in USD (OpenRouter, LiteLLM), a number or its text.
    cost: JsonValue
    total_cost: JsonValue


class ChatCompletionChunk(TypedDict, total=False):
    choices: list[Choice] | None
    usage: CompletionUsage | None
    # An error sent inside a 200 stream: an object with message and code, or anything else.
    error: JsonValue
