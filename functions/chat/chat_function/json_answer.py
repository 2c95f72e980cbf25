"""One JSON answer instead of the SSE stream, for scripts and other services: `{"stream": false}`
in the body, or `Accept: application/json` without `text/event-stream`.

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

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from starlette.requests import Request

    from groundchat.exchange.frames import Frame


class TokensUsed(BaseModel):
    input: int
    output: int


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
    debug: list[dict[str, Jsonable]]
    view: dict[str, Jsonable] | None = None
    limit: dict[str, Jsonable] | None = None
    error: dict[str, Jsonable] | None = None


def wants_json(request: Request, body: object) -> bool:
    """`"stream": false` in a JSON body, or an Accept header that asks for JSON and not for SSE."""
    if isinstance(body, (bytes, str)):
        try:
            body = json.loads(body)
        except ValueError:
            body = None
    if isinstance(body, dict) and body.get("stream") is False:
        return True
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/event-stream" not in accept


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
        debug=[*([{"answerer": "offline", "notice": answerer_notice}] if answerer_notice else []),
               *(f["debug"] for f in by_type.get("tool-result", []) if f.get("debug"))],
        view=(by_type.get("view") or [{}])[-1].get("view"),
        limit=(by_type.get("limit") or [None])[-1], error=(by_type.get("error") or [None])[-1],
    )


def _tool_calls(by_type: dict[str, list[dict]]) -> list[dict[str, Jsonable]]:
    failed = {r["id"] for r in by_type.get("tool-result", []) if r.get("error")}
    return [{"id": c["id"], "name": c["name"], "args": c["args"], "outcome": "error" if c["id"] in failed else "ok"}
            for c in by_type.get("tool-call", [])]


async def _drain(frames: AsyncIterator[Frame]) -> list[Frame]:
    return [frame async for frame in frames]
