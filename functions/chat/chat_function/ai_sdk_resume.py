"""`GET /api/ai-sdk/chat/{id}/stream`: what `useChat({ resume: true })` calls after a reload (the AI
SDK's default transport, `reconnectToStream`): 204 when the chat has no answer in progress, else
the answer in progress as a UI message stream.

No process keeps a copy of an answer's frames (any instance may serve this request), so the
resumed stream waits for the answer to end, as the store tells it (`store/answers_in_progress.py`),
with the heartbeat's comments meanwhile, and then sends the answer as committed: its steps, words,
tool calls and results, its cost, and how it ended (`abort` for a stopped one, `error` for a failed one).
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.responses import Response

from chat_function.ai_sdk_stream import UIMessageStream
from chat_function.answer_routes import may_follow
from chat_function.callers import services_of
from chat_function.errors import error
from chat_function.openapi import ALWAYS, refusals
from groundchat.exchange.frames import (
    DoneFrame,
    ErrorFrame,
    StartFrame,
    StepFrame,
    TextFrame,
    ToolCallFrame,
    ToolResultFrame,
)
from groundchat.ids import is_conversation_id
from groundchat.store.answer_records import public_answer_record
from groundchat.store.answers_in_progress import ANSWERED, FAILED, RUNNING, STOPPED
from groundchat.store.leases import LEASE_SECONDS

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from groundchat.auth.callers import Caller
    from groundchat.exchange.frames import Frame
    from groundchat.services import Services

# The longest a resumed stream waits for its answer: past its lease an answer is interrupted anyway.
MAX_WAIT_SECONDS = LEASE_SECONDS
DONE_REASONS = {ANSWERED: "complete", STOPPED: "stopped", FAILED: "error"}

RESPONSES: dict[int | str, dict] = {
    200: {"description": "the answer in progress, once it has ended, as the UI message stream",
          "content": {"text/event-stream": {"schema": {"type": "object", "properties": {"data": {"type": "string"}}}}}},
    204: {"description": "no answer of this chat is in progress: nothing to resume"},
    **refusals(401, 403, 404, *ALWAYS),
}


def add_ai_sdk_resume_route(app: FastAPI, chat_path: str) -> None:
    @app.get(chat_path + "/{chat_id}/stream", responses=RESPONSES, response_class=Response)
    async def resume(chat_id: str, request: Request, caller: Caller = may_follow) -> Response:
        """The chat's answer in progress, for `useChat({ resume: true })` after a reload."""
        services = services_of(request)
        found = await services.answers.read(chat_id, caller.id) if is_conversation_id(chat_id) else None
        if found is None:
            owned = is_conversation_id(chat_id) and await services.conversations.get_owned(chat_id, caller.id)
            return Response(status_code=204) if owned else error(404, "not-found", "No such conversation.")
        if found["state"] != RUNNING:
            return Response(status_code=204)
        frames = _when_ended(services, caller, chat_id, str(found["run_id"]))
        return UIMessageStream(frames, services.settings.sse_heartbeat_seconds)


async def _when_ended(services: Services, caller: Caller, chat_id: str, run_id: str) -> AsyncIterator[Frame]:
    yield StartFrame(conversation_id=chat_id, run_id=run_id)
    found = await services.answers.read_when_ended(chat_id, caller.id, MAX_WAIT_SECONDS)
    state = str(found["state"]) if found is not None else RUNNING
    items = [i for i in await services.conversations.read_items(chat_id) if i.get("run_id") == run_id]
    for frame in committed_frames(items):
        yield frame
    reason = DONE_REASONS.get(state)
    if reason is None:  # still running past its lease, or interrupted: the client learns it did not end well
        yield ErrorFrame(code="interrupted", message="The answer did not finish: ask again.", run_id=run_id)
    elif reason == "error":
        yield ErrorFrame(code="failed", message="The answer failed: ask again.", run_id=run_id)
    charged = next((public_answer_record(i) for i in reversed(items) if public_answer_record(i)), {"cost": "0", "cost_text": "$0.00"})
    yield DoneFrame(reason=reason or "error", run_id=run_id, cost=str(charged["cost"]),  # type: ignore[arg-type]
                    cost_text=str(charged["cost_text"]))


def committed_frames(items: list[dict]) -> list[Frame]:
    """An answer's stored turns as the frames its steps streamed: each assistant turn a step (its
    words, then its tool calls and their results)."""
    frames: list[Frame] = []
    step = -1
    for item in items:
        if item.get("role") == "assistant":
            if step >= 0:
                frames.append(StepFrame(phase="finish", step=step))
            step += 1
            frames.append(StepFrame(phase="start", step=step))
            if item.get("content"):
                frames.append(TextFrame(text=str(item["content"])))
            calls = json.loads(item["tool_calls"]) if item.get("tool_calls") else []
            frames.extend(ToolCallFrame(id=c["id"], name=c["name"], args=c.get("args") or {}) for c in calls)
        elif item.get("role") == "tool":
            content = str(item.get("content", ""))
            if item.get("is_error"):
                frames.append(ToolResultFrame(id=str(item.get("tool_call_id")), name=str(item.get("name")), error=content))
            else:
                frames.append(ToolResultFrame(id=str(item.get("tool_call_id")), name=str(item.get("name")), result=_parsed(content)))
    if step >= 0:
        frames.append(StepFrame(phase="finish", step=step))
    return frames


def _parsed(content: str) -> object:
    try:
        return json.loads(content)
    except ValueError:
        return content
