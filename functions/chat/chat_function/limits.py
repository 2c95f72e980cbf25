"""How much of a request body the chat reads: a question is at most a few KB of JSON, so anything
far larger is refused (413) before it is parsed or held whole in memory."""
from __future__ import annotations

from fastapi import Request

MAX_CHAT_BODY_BYTES = 64 * 1024


async def read_limited(request: Request, limit: int) -> bytes | None:
    """The body, or None as soon as it is known to be over `limit` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)
