"""Our provider-neutral transcript and the events a model yields.

Every adapter translates `Message` lists into its provider's shape in one named function, and
translates the provider's stream back into `ModelEvent`s.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Annotated, AsyncIterator, Literal, Protocol, Union

from pydantic import BaseModel, Field, JsonValue

NO_RESULT = "(no result)"
ImageMediaType = Literal["image/png", "image/jpeg", "image/webp", "image/gif"]


class ToolCall(BaseModel):
    id: str
    name: str
    args: dict[str, JsonValue] = Field(default_factory=dict)


class ImageRef(BaseModel):
    """An image attached to a question: stored in S3 under `key`, named by the sha256 of the bytes
    we send (already resized and re-encoded by `groundchat.attachments`), drawn with `alt`.

    `data` (the bytes) and `token_bound` (the most tokens it can cost the model about to see it)
    are filled for one request only: neither is stored nor counted as text."""

    key: str = ""
    media_type: ImageMediaType
    width: int = Field(gt=0)
    height: int = Field(gt=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    alt: str = ""
    data: bytes | None = Field(default=None, exclude=True, repr=False)
    token_bound: int | None = Field(default=None, exclude=True)


class Message(BaseModel):
    """One turn. Assistant turns carry the tool calls they made; tool turns answer one call; a
    user turn may carry images."""

    role: Literal["user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False
    images: list[ImageRef] = Field(default_factory=list)


class ToolSpec(BaseModel):
    name: str
    description: str
    input_schema: dict[str, JsonValue]


class TextDelta(BaseModel):
    type: Literal["text"] = "text"
    text: str


class ToolCallEvent(BaseModel):
    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    args: dict[str, JsonValue] = Field(default_factory=dict)


class ToolInputDelta(BaseModel):
    """A piece of a tool call's arguments as the model writes them, before the call is whole: the
    JSON text arrives in fragments, `delta` is the next one. The call itself still comes as one
    ToolCallEvent when its input is complete; this only lets a reader watch it being written."""

    type: Literal["tool_input"] = "tool_input"
    id: str
    name: str
    delta: str


class UsageEvent(BaseModel):
    type: Literal["usage"] = "usage"
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    # The provider's own figure for this step, where it reports one.
    provider_cost: Decimal | None = None


class StopEvent(BaseModel):
    type: Literal["stop"] = "stop"
    reason: str  # end_turn | tool_use | max_tokens | ...


ModelEvent = Annotated[Union[TextDelta, ToolInputDelta, ToolCallEvent, UsageEvent, StopEvent], Field(discriminator="type")]


class ExcerptTurn(BaseModel):
    """One labelled turn of a conversation excerpt handed to a model to summarise."""

    model_config = {"frozen": True}

    label: str
    text: str


class ModelRequest(BaseModel):
    system: str
    messages: list[Message]
    tools: list[ToolSpec]
    max_output_tokens: int = 3000
    # What the request is for, and for a summary the excerpt's turns as data: a model that answers
    # without reading prompts (the offline answerer) reads these, never the prompt's text. The
    # hosted adapters send only the system text, the messages and the tools.
    purpose: Literal["answer", "summary"] = "answer"
    excerpt: list[ExcerptTurn] = Field(default_factory=list)


class ChatModel(Protocol):
    """A model is an async generator function. `model_id` names it in traces; `price_id` is its
    key in the price table (the configured model string), checked before any call is paid, and in
    the image token bounds (`groundchat.attachments.token_bounds`). A model that reads no images at
    all may say why in an `images_refused` attribute."""

    model_id: str
    price_id: str

    def __call__(self, request: ModelRequest) -> AsyncIterator[TextDelta | ToolInputDelta | ToolCallEvent | UsageEvent | StopEvent]: ...


def image_caption(position: int, image: ImageRef) -> str:
    """The words each adapter puts before an image: its place in the question and its alt text,
    so the model can tell several apart and answer about "image 2"."""
    return f"Image {position}: {image.alt or 'no description'}"


def image_missing_text(image: ImageRef) -> str:
    """Said instead of an image whose bytes are not at hand (never an empty image block)."""
    return f"[image: {image.alt or 'no description'} ({image.width}×{image.height} px), not available]"


def tool_result_text(value: object) -> str:
    """What the model sees for a tool's return value: empty is '(no result)', 0 and False stay."""
    import json

    if value is None or value == "" or value == [] or value == {}:
        return NO_RESULT
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return json.dumps(value, default=str, ensure_ascii=False)
