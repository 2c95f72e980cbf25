"""`/chat/` goes to `/chat` by a relative redirect, so it holds under an API Gateway stage.

Starlette redirects a path with a stray trailing slash to an absolute address built from the Host
header. Behind API Gateway the app never sees the stage (`/prod`), so `/prod/chat/` was sent to
`/chat`, a page that does not exist there. `../chat`, resolved against `/prod/chat/`, is
`/prod/chat` under any stage, domain or local port. 307 keeps the method and the body.
"""
from __future__ import annotations

from starlette.routing import Match, Router
from starlette.types import ASGIApp, Receive, Scope, Send


class RelativeSlashRedirect:
    def __init__(self, app: ASGIApp, router: Router) -> None:
        self.app = app
        self.router = router

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and len(path) > 1 and path.endswith("/"):
            bare = path.rstrip("/") or "/"
            # A route that ends in a slash is served as it is; only a stray slash is redirected.
            if bare != "/" and not self._routed(scope) and self._routed({**scope, "path": bare}):
                await self._redirect(scope, send, bare)
                return
        await self.app(scope, receive, send)

    def _routed(self, scope: Scope) -> bool:
        return any(route.matches(scope)[0] == Match.FULL for route in self.router.routes)

    @staticmethod
    async def _redirect(scope: Scope, send: Send, bare: str) -> None:
        # Up one level per trailing slash, then the last segment: "/a/b//" -> "../../b".
        ups = "../" * (len(scope["path"]) - len(bare))
        location = ups + bare.rsplit("/", 1)[-1]
        query = scope.get("query_string", b"")
        if query:
            location += "?" + query.decode("latin-1")
        await send({"type": "http.response.start", "status": 307,
                    "headers": [(b"location", location.encode("latin-1")), (b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})
