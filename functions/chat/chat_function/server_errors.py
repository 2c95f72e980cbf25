"""The last line of defence: an exception no route expected becomes a typed JSON 500 (and a log
line with the traceback for the operator), never Starlette's bare text 500."""
from __future__ import annotations

import json
import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("groundchat.chat_function")

BODY = json.dumps({"error": {"code": "internal-error", "message": "Something failed on our side; nothing was lost. Try again."}}).encode()


class TypedServerErrors:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception:
            log.exception("unexpected failure on %s %s", scope.get("method"), scope.get("path"))
            if started:  # a stream already under way ends; its frames said what they could
                return
            await send({"type": "http.response.start", "status": 500,
                        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]})
            await send({"type": "http.response.body", "body": BODY})
