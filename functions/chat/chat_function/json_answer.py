"""One JSON answer instead of the SSE stream, for scripts and other services: the default, as in
every chat API; a request asks for the stream with `"stream": true` or `Accept: text/event-stream`.

The same use case answers it (every check in the same order, the same commit): the frames are
drained here, to the end, in a task of their own, so a client that closes early loses nothing, and
then folded into one `ChatResponse`; the `done` frame carries the cost and the tokens.
"""
from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

from pydantic import BaseModel

from groundchat.json_shapes import Jsonable
from groundchat.models.failures import HINTS, http_status
from groundchat.store.availability import STORE_UNAVAILABLE, STORE_UNAVAILABLE_HINT

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from starlette.requests import Request

    from groundchat.exchange.frames import Frame


class TokensUsed(BaseModel):
    input: int
    output: int


class ChatDebugInfo(BaseModel):
    """How the answer was found: whether the caller's past conversations were searched and why
    (always), and each search's debug record (legs, fusion, weights, graph counters)."""

    recall_plan: dict[str, Jsonable] | None
    searches: list[dict[str, Jsonable]]
    # Who answered when it is the offline answerer, and what it says of itself (offline/notice.py):
    # no language model is answering, what it can and cannot do, and the setting that brings one.
    answerer: str | None = None
    answerer_notice: str | None = None


class AnswerFailure(BaseModel):
    """A generation that failed: the reader's words, and what an operator or a script needs to act."""

    code: str
    message: str
    run_id: str
    failure_kind: str  # the failure's class (models/failures.py), or the loop's own code
    gateway_reason: str | None  # the provider's or gateway's reason, sanitised
    operator_hint: str | None
    status: int  # the HTTP status the answer was given


class ChatResponse(BaseModel):
    """The answer, its verified sources, what it cost, each search's debug record, the view if
    one was accepted, and how it ended."""

    message: str
    conversation_id: str
    run_id: str
    done: str  # the `done` frame's reason: complete, max-steps, spend-cap, ...
    sources: list[dict[str, Jsonable]]
    # Each tool the answer called, with its arguments and whether it answered (its result is in
    # the conversation; the searches' records in `debug`).
    tool_calls: list[dict[str, Jsonable]]
    unverified: list[dict[str, Jsonable]]
    tokens_used: TokensUsed
    cost: str
    cost_text: str
    debug: ChatDebugInfo
    view: dict[str, Jsonable] | None = None
    limit: dict[str, Jsonable] | None = None
    error: AnswerFailure | None = None

    @property
    def status_code(self) -> int:
        """200 for an answer; a failed generation's own status, so no client reads it as a success."""
        return self.error.status if self.error else 200


def wants_json(request: Request, body: object) -> bool:
    """JSON unless the client asks for the stream: `"stream"` in the body decides when it is
    there (true or false), else an Accept header naming `text/event-stream`."""
    if isinstance(body, (bytes, str)):
        try:
            body = json.loads(body)
        except ValueError:
            body = None
    if isinstance(body, dict) and isinstance(body.get("stream"), bool):
        return not body["stream"]
    return "text/event-stream" not in request.headers.get("accept", "").lower()


async def json_answer(frames: AsyncIterator[Frame], answerer_notice: str | None = None) -> ChatResponse:
    """The exchange's frames as one JSON answer. `answerer_notice`: what the offline answerer says of
    itself (offline/notice.py), the debug's first record when it is the one answering."""
    drained = asyncio.create_task(_drain(frames))
    collected = await asyncio.shield(drained)  # the exchange finishes and commits even if we are cancelled
    by_type: dict[str, list[dict]] = {}
    for frame in collected:
        by_type.setdefault(frame.type, []).append(frame.data)
    start, done = by_type["start"][0], by_type["done"][-1]
    citations = (by_type.get("citations") or [{}])[-1]
    return ChatResponse(
        message="".join(f["text"] for f in by_type.get("text", [])),
        conversation_id=start["conversation_id"], run_id=done["run_id"], done=done["reason"],
        sources=citations.get("sources", []), unverified=citations.get("unverified", []),
        tool_calls=_tool_calls(by_type),
        tokens_used=TokensUsed(input=done["input_tokens"], output=done["output_tokens"]),
        cost=done["cost"], cost_text=done["cost_text"],
        debug=ChatDebugInfo(recall_plan=done.get("recall"),
                            searches=[f["debug"] for f in by_type.get("tool-result", []) if f.get("debug")],
                            **({"answerer": "offline", "answerer_notice": answerer_notice} if answerer_notice else {})),
        view=(by_type.get("view") or [None])[-1],  # a view frame's data is the view itself
        limit=(by_type.get("limit") or [None])[-1], error=_failure((by_type.get("error") or [None])[-1]),
    )


def _failure(frame: dict | None) -> AnswerFailure | None:
    if frame is None:
        return None
    kind = str(frame["code"])
    unavailable = kind == STORE_UNAVAILABLE
    return AnswerFailure(code=kind, message=frame["message"], run_id=frame["run_id"], failure_kind=kind,
                         gateway_reason=frame.get("reason"),
                         operator_hint=STORE_UNAVAILABLE_HINT if unavailable else HINTS.get(kind),
                         status=503 if unavailable else http_status(kind))


def _tool_calls(by_type: dict[str, list[dict]]) -> list[dict[str, Jsonable]]:
    failed = {r["id"] for r in by_type.get("tool-result", []) if r.get("error")}
    return [{"id": c["id"], "name": c["name"], "args": c["args"], "outcome": "error" if c["id"] in failed else "ok"}
            for c in by_type.get("tool-call", [])]


async def _drain(frames: AsyncIterator[Frame]) -> list[Frame]:
    return [frame async for frame in frames]
