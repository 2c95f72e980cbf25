"""An SSE response that runs the exchange to completion whatever the client does.

Starlette's StreamingResponse cancels its iterator when the client goes away; an exchange must
instead complete and commit. So the exchange runs in its own task feeding a queue, and this
response returns (ending the invocation under the Lambda Web Adapter) only after the exchange's
last frame: a client that leaves just stops receiving.
"""
from __future__ import annotations

import asyncio
import json
from typing import AsyncIterator

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from groundchat.exchange.frames import Frame

SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache, no-transform"),
    # Proxies (and API Gateway's buffered paths) must not hold frames back.
    (b"x-accel-buffering", b"no"),
]


def sse(frame: Frame) -> bytes:
    """One frame as a server-sent event: its type is the event, its payload the data."""
    return f"event: {frame.type}\ndata: {json.dumps(frame.data, default=str, ensure_ascii=False)}\n\n".encode()


# An SSE comment: every client ignores it (the page's reader too), every proxy sees bytes flow.
PING = b": ping\n\n"


class ExchangeStream(Response):
    media_type = "text/event-stream"

    def __init__(self, frames: AsyncIterator[Frame], heartbeat_seconds: float = 0) -> None:
        # A Response so FastAPI hands it to the server as is; the body is produced in __call__.
        self._frames = frames
        self._heartbeat = heartbeat_seconds
        self.status_code = 200
        self.background = None
        self.raw_headers = list(SSE_HEADERS)

    def encode(self, frame: Frame) -> bytes:
        """One frame on the wire; another protocol over the same exchange says it otherwise."""
        return sse(frame)

    def closing(self) -> bytes:
        """What follows the last frame (nothing here: `done` says it all)."""
        return b""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        queue: asyncio.Queue[Frame | None] = asyncio.Queue()

        async def produce() -> None:
            try:
                async for frame in self._frames:
                    await queue.put(frame)
            finally:
                await queue.put(None)

        task = asyncio.create_task(produce())
        client_gone = False
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        except Exception:
            client_gone = True
        ended = False
        while not ended:
            try:
                frame = await asyncio.wait_for(queue.get(), self._heartbeat or None)
            except asyncio.TimeoutError:  # silent for a heartbeat: a comment keeps the connection open
                body = PING
            else:
                ended = frame is None
                body = self.closing() if frame is None else self.encode(frame)
            if client_gone or not body:
                continue
            try:
                await send({"type": "http.response.body", "body": body, "more_body": True})
            except Exception:  # the client left: keep draining so the exchange commits
                client_gone = True
        await task
        if not client_gone:
            try:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            except Exception:
                pass
