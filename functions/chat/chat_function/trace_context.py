"""An incoming W3C `traceparent` joins the caller's trace: the answer's spans become its children.

A pure ASGI middleware (no task of its own), so the context it attaches is the one the route, the
answer use case and the streamed frames run in. With export off it passes the request through.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

TRACE_HEADERS = (b"traceparent", b"tracestate")


class JoinCallerTrace:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from groundchat import telemetry  # with the first request, never at a cold start

        if scope["type"] != "http" or not telemetry.enabled():
            await self.app(scope, receive, send)
            return
        carrier = {name.decode("latin-1"): value.decode("latin-1")
                   for name, value in scope.get("headers", []) if name in TRACE_HEADERS}
        with telemetry.joined(carrier):
            await self.app(scope, receive, send)
