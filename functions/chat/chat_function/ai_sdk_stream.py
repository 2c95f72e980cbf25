"""The answer as the AI SDK's UI message stream (protocol v1): our frames mapped onto its parts, so
a front end built on `useChat` reads groundchat unchanged.

Each part is one SSE event, `data: {json}`, and `data: [DONE]` ends the stream. The part shapes are
the SDK's own (`uiMessageChunkSchema` in the `ai` package); tests/chat_function/ai_sdk_reader.mjs
reads this stream with the SDK's own parser. What has no part of its own (a view, the cost, the
history and limit notes, the citation check) goes out as a typed `data-*` part.

An `error` part ends the SDK's reading (the chat's status becomes "error"), so ours is held back
and sent after the cost, just before `finish`: a reader that stops there has had everything else.
Each model step is a `start-step` ... `finish-step` pair (the core's `step` frames, which say where a
step that only called tools ends); an answer its reader stopped ends with `abort`, the part the SDK
reads as a stop, after the cost.

A tool call's arguments stream as the model writes them: `tool-input-start` at its first piece,
`tool-input-delta` for each piece, `tool-input-available` with the whole input once the call is
made. A call whose step ended before it was made (a failure, a stop, a cap) gets `tool-input-error`,
so no tool part stays "input-streaming" in the reader's chat.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from chat_function.streaming import ExchangeStream
from groundchat.exchange.frames import (
    CitationsFrame,
    DoneFrame,
    ErrorFrame,
    Frame,
    StartFrame,
    StepFrame,
    TextFrame,
    ToolCallFrame,
    ToolInputDeltaFrame,
    ToolResultFrame,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from groundchat.json_shapes import JsonObject

UI_MESSAGE_STREAM_HEADER = (b"x-vercel-ai-ui-message-stream", b"v1")
DONE = b"data: [DONE]\n\n"
# Our frame types whose payload goes out whole as a `data-<type>` part.
DATA_FRAMES = {"view": "data-view", "history": "data-history", "limit": "data-limit"}
# How an answer ended, in the SDK's finish reasons; ours stays in the message's metadata.
FINISH_REASONS = {"complete": "stop", "error": "error"}
UNMADE_CALL = "This call was never made: the model's step ended before its tools ran."


def part_event(part: JsonObject) -> bytes:
    return f"data: {json.dumps(part, default=str, ensure_ascii=False)}\n\n".encode()


class UIMessageParts:
    """Our frames, in order, as the UI message stream's parts. One per answer: it remembers the
    open text part and the error held back for the end."""

    def __init__(self) -> None:
        self._text_id: str | None = None
        self._texts = 0
        self._held_error: JsonObject | None = None
        # Calls whose input is streaming and not yet made: id -> (tool name, the input so far).
        self._inputs: dict[str, tuple[str, str]] = {}

    def parts(self, frame: Frame) -> list[JsonObject]:
        if isinstance(frame, TextFrame):
            return [*self._open_text(), {"type": "text-delta", "id": self._text_id, "delta": frame.text}]
        out = self._close_text()
        if isinstance(frame, (StepFrame, ErrorFrame, DoneFrame)):
            out.extend(self._unmade_calls())
        if isinstance(frame, ToolInputDeltaFrame):
            out.extend(self._input_piece(frame))
        elif isinstance(frame, StartFrame):
            out.append({"type": "start", "messageId": frame.run_id,
                        "messageMetadata": {"conversation_id": frame.conversation_id, "run_id": frame.run_id}})
        elif isinstance(frame, StepFrame):
            out.append({"type": "start-step"} if frame.phase == "start" else {"type": "finish-step"})
        elif isinstance(frame, ToolCallFrame):
            self._inputs.pop(frame.id, None)
            out.append({"type": "tool-input-available", "toolCallId": frame.id, "toolName": frame.name, "input": frame.args})
        elif isinstance(frame, ToolResultFrame):
            out.extend(_tool_output(frame))
        elif isinstance(frame, CitationsFrame):
            out.extend(source_part(s) for s in frame.sources)  # verified refs only: `unverified` never is a source
            out.append({"type": "data-citations", "data": frame.data})
        elif isinstance(frame, ErrorFrame):
            self._held_error = {"type": "error", "errorText": frame.message}
            out.append({"type": "data-error", "data": frame.data})
        elif isinstance(frame, DoneFrame):
            out.append({"type": "data-cost", "data": {"cost": frame.cost, "cost_text": frame.cost_text, "run_id": frame.run_id}})
            if self._held_error is not None:
                out.append(self._held_error)
            if frame.reason == "stopped":  # the reader pressed Stop: the SDK's own word for it
                out.append({"type": "abort"})
            out.append({"type": "finish", "finishReason": FINISH_REASONS.get(frame.reason, "other"),
                        "messageMetadata": {"done": frame.reason, "recall": frame.recall}})
        elif frame.type in DATA_FRAMES:
            out.append({"type": DATA_FRAMES[frame.type], "data": frame.data})
        return out

    def _input_piece(self, frame: ToolInputDeltaFrame) -> list[JsonObject]:
        out: list[JsonObject] = []
        if frame.id not in self._inputs:
            self._inputs[frame.id] = (frame.name, "")
            out.append({"type": "tool-input-start", "toolCallId": frame.id, "toolName": frame.name})
        name, so_far = self._inputs[frame.id]
        self._inputs[frame.id] = (name, so_far + frame.delta)
        out.append({"type": "tool-input-delta", "toolCallId": frame.id, "inputTextDelta": frame.delta})
        return out

    def _unmade_calls(self) -> list[JsonObject]:
        """Calls whose input streamed but which were never made: the step is over, so they never will be."""
        unmade = [{"type": "tool-input-error", "toolCallId": call_id, "toolName": name, "input": so_far, "errorText": UNMADE_CALL}
                  for call_id, (name, so_far) in self._inputs.items()]
        self._inputs.clear()
        return unmade

    def _open_text(self) -> list[JsonObject]:
        if self._text_id is not None:
            return []
        self._texts += 1
        self._text_id = f"text-{self._texts}"
        return [{"type": "text-start", "id": self._text_id}]

    def _close_text(self) -> list[JsonObject]:
        if self._text_id is None:
            return []
        closed, self._text_id = self._text_id, None
        return [{"type": "text-end", "id": closed}]


def _tool_output(frame: ToolResultFrame) -> list[JsonObject]:
    if frame.error is not None:
        out: list[JsonObject] = [{"type": "tool-output-error", "toolCallId": frame.id, "errorText": frame.error}]
    else:
        out = [{"type": "tool-output-available", "toolCallId": frame.id, "output": frame.result}]
    if frame.debug:  # what the page's Details show of a search, never sent to the model
        out.append({"type": "data-search-debug", "id": frame.id, "data": frame.debug})
    return out


def source_part(source: JsonObject) -> JsonObject:
    """A verified source: a link where the passage has an address, else a document by its title."""
    ref = str(source["ref"])
    title = str(source.get("title") or source.get("section") or ref)
    if source.get("url"):
        return {"type": "source-url", "sourceId": ref, "url": str(source["url"]), "title": title}
    return {"type": "source-document", "sourceId": ref, "mediaType": "text/plain", "title": title}


class UIMessageStream(ExchangeStream):
    """The exchange's stream (run to completion whatever the client does, with the heartbeat's
    `: ping` comments, which the SDK's event-stream parser skips) in the UI message stream's parts."""

    def __init__(self, frames: AsyncIterator[Frame], heartbeat_seconds: float = 0) -> None:
        super().__init__(frames, heartbeat_seconds)
        self.raw_headers.append(UI_MESSAGE_STREAM_HEADER)
        self._parts = UIMessageParts()

    def encode(self, frame: Frame) -> bytes:
        return b"".join(part_event(p) for p in self._parts.parts(frame))

    def closing(self) -> bytes:
        return DONE
