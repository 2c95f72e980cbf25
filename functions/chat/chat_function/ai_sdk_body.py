"""The body the AI SDK's chat transport sends (`DefaultChatTransport` of the `ai` package, v5):
`{id, messages: [{id, role, parts: [{type: "text", text}, ...]}], trigger, messageId}`, read as our
question.

Only the last message is read, and only its text parts: the conversation's history comes from our
store, never from what the client says was said. `id` is the client's name for the chat, which we
take as the conversation id: it must have our ids' shape (32 lowercase hex digits), since it becomes
the key a shared link and every later question use.
"""
from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from groundchat.exchange.refusal import Refusal
from groundchat.ids import is_conversation_id
from groundchat.json_shapes import Jsonable

if TYPE_CHECKING:
    from groundchat.chat.question_body import BodyLimits, ChatBody
    from groundchat.json_shapes import JsonObject

# The SDK posts the whole transcript every time, tool outputs included (each up to our tool result
# ceiling): more than a question, and still far below what a Lambda invocation may carry.
MAX_AI_SDK_BODY_BYTES = 4 * 1024 * 1024

ID_SHAPE = ("id: a chat id here is 32 lowercase hex digits (128 random bits), as our conversation ids are; "
            "give useChat one, e.g. id: crypto.randomUUID().replaceAll('-', '')")


class TransportBody(BaseModel):
    """What `HttpChatTransport.sendMessages` posts when no `prepareSendMessagesRequest` changes it.
    The earlier messages are not ours to read, so only their presence is checked."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1, max_length=64)
    messages: list[dict[str, Jsonable]] = Field(min_length=1)
    # "regenerate-message" sends the transcript without its last answer: the question is asked again.
    trigger: Literal["submit-message", "regenerate-message"] = "submit-message"
    messageId: str | None = None  # noqa: N815 (the SDK's own field name)


class Part(BaseModel):
    model_config = ConfigDict(extra="allow")  # providerMetadata, state, ...
    type: str
    text: str | None = None


class LastMessage(BaseModel):
    model_config = ConfigDict(extra="allow")  # metadata
    id: str = ""
    role: Literal["system", "user", "assistant"]
    parts: list[Part]


def parse_ai_sdk_body(body: bytes | str | JsonObject, limits: BodyLimits) -> ChatBody | Refusal:
    """The transport's body as our question (`{conversation_id, message}`), or 400 saying what is
    wrong; the question then meets every check `parse_body` makes."""
    from groundchat.chat.question_body import parse_body, read_json  # with the answer use case, on the first question

    raw = read_json(body, "a chat request")
    if isinstance(raw, Refusal):
        return raw
    try:
        sent = TransportBody.model_validate(raw)
    except ValidationError as exc:
        return Refusal(400, "bad-request", _problem(exc))
    try:
        last = LastMessage.model_validate(sent.messages[-1])
    except ValidationError as exc:
        return Refusal(400, "bad-request", _problem(exc, f"messages.{len(sent.messages) - 1}"))
    if not is_conversation_id(sent.id):
        return Refusal(400, "bad-request", ID_SHAPE)
    if last.role != "user":
        return Refusal(400, "bad-request", f"messages: the last message is the {last.role}'s; it must be the user's question")
    if any(p.type == "file" for p in last.parts):
        # Dropping an image silently would answer a question that was not asked.
        return Refusal(400, "bad-request", "messages: file parts are not read here; send images to /api/chat as multipart")
    text = "\n".join(p.text for p in last.parts if p.type == "text" and p.text)
    return parse_body({"conversation_id": sent.id, "message": text}, limits)


def submitted_message_key(body: bytes) -> str | None:
    """The request's name when the body submits a question (not a regeneration, which asks for a
    new answer on purpose): its message id with its text, so the same message sent again is the
    same request, and an id a client reused for another question is not. None for a body without
    an id, or one the parser will refuse anyway."""
    try:
        raw = json.loads(body)
        last = raw["messages"][-1] if raw.get("trigger", "submit-message") == "submit-message" else {}
        message_id = last.get("id")
        text = "\n".join(p["text"] for p in last.get("parts", []) if p.get("type") == "text" and isinstance(p.get("text"), str))
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError):
        return None
    if not isinstance(message_id, str) or not message_id:
        return None
    return "message:" + hashlib.sha256(f"{message_id}\n{text.strip()}".encode()).hexdigest()


def _problem(exc: ValidationError, within: str = "") -> str:
    from groundchat.chat.question_body import validation_problem

    return validation_problem(exc, "the chat transport's id, messages, trigger and messageId only", within=within)
