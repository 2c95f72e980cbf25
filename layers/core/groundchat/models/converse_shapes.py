"""The shapes of Bedrock Converse as botocore takes and gives them (ConverseStreamRequest,
ConverseStreamOutput), written as TypedDicts: the type checker reads the keys we use, and at run
time they are the plain dicts botocore builds, so nothing is copied or validated on the stream."""
from __future__ import annotations

from typing import Mapping, Required, Sequence, TypeAlias, TypedDict, Union

from groundchat.json_shapes import JsonScalar

# What Converse takes as botocore sends it: JSON's shapes, and an image block's raw bytes. Read-only
# containers, so a tool's JSON arguments or schema (dicts of JsonValue) go in as they are.
ConverseValue: TypeAlias = Union[JsonScalar, bytes, Sequence["ConverseValue"], Mapping[str, "ConverseValue"]]
# One content block (text, image, toolUse, toolResult, cachePoint).
ConverseObject: TypeAlias = dict[str, ConverseValue]


class ConverseMessage(TypedDict):
    role: str
    content: list[ConverseObject]


class ConverseRequest(TypedDict, total=False):
    """The keyword arguments of `bedrock-runtime.converse_stream`."""

    modelId: Required[str]
    messages: Required[list[ConverseMessage]]
    inferenceConfig: Required[dict[str, int]]
    system: list[ConverseObject]
    toolConfig: dict[str, list[ConverseObject]]


# ConverseStreamOutput: each event holds one of these keys.


class ToolUseStart(TypedDict):
    toolUseId: str
    name: str


class BlockStart(TypedDict, total=False):
    toolUse: ToolUseStart


class ContentBlockStart(TypedDict):
    start: BlockStart
    contentBlockIndex: int


class ToolUseDelta(TypedDict):
    input: str


class BlockDelta(TypedDict, total=False):
    text: str
    toolUse: ToolUseDelta


class ContentBlockDelta(TypedDict):
    delta: BlockDelta
    contentBlockIndex: int


class ContentBlockStop(TypedDict):
    contentBlockIndex: int


class MessageStop(TypedDict):
    stopReason: str


class TokenUsage(TypedDict, total=False):
    inputTokens: int
    outputTokens: int
    totalTokens: int
    cacheReadInputTokens: int
    cacheWriteInputTokens: int


class StreamMetadata(TypedDict, total=False):
    usage: TokenUsage


class ConverseStreamEvent(TypedDict, total=False):
    messageStart: dict[str, str]
    contentBlockStart: ContentBlockStart
    contentBlockDelta: ContentBlockDelta
    contentBlockStop: ContentBlockStop
    messageStop: MessageStop
    metadata: StreamMetadata
