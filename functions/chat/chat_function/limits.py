"""How much of a request body the chat reads: a question is at most a few KB of JSON, so anything
far larger is refused (413) before it is parsed or held whole in memory. A question with images
(multipart) may carry the images' limit for one question on top; its files are then checked one
by one, with a reason each (400), by the answer use case."""
from __future__ import annotations

from typing import Any

from fastapi import Request

MAX_CHAT_BODY_BYTES = 64 * 1024


def chat_body_limit(request: Request, settings: Any) -> int:
    """64 KiB for a JSON question; that plus the images' per-question limit, and as much again
    (so that "over the limit" is said per image and in total, not only as 413), for multipart."""
    if request.headers.get("content-type", "").lower().startswith("multipart/form-data"):
        return MAX_CHAT_BODY_BYTES + 2 * settings.max_images_bytes
    return MAX_CHAT_BODY_BYTES


def too_large_message(limit: int) -> str:
    if limit == MAX_CHAT_BODY_BYTES:
        return f"The request body is over {MAX_CHAT_BODY_BYTES} bytes: send only the question."
    return f"The request body is over {limit} bytes: send fewer or smaller images."


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
