"""`/mcp`: the MCP server (groundchat.mcp) over Streamable HTTP, stateless, with JSON responses; and
the protected-resource metadata MCP hosts discover the sign-in from.

The caller is resolved as on every other route (the bearer token, or the sign-in's cookie) before
the SDK sees the request: none is a 401 naming the metadata. Each POST is served by a session
manager of its own, entered and left within the request: stateless, nothing outlives a response
(Lambda freezes between invocations), and the SDK loads with the first `/mcp` request, never at a
cold start.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.routing import Route

from chat_function.addresses import public_base
from chat_function.callers import Refused, caller_or_none, services_of
from chat_function.errors import error
from groundchat.auth.callers import SIGN_IN_MESSAGE
from groundchat.mcp.resource_metadata import MCP_PATH, WELL_KNOWN, challenge, protected_resource

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server
    from starlette.types import Receive, Scope, Send

    from groundchat.auth.callers import Caller

# Where the endpoint leaves the resolved caller for the tool handlers (the request's own state).
CALLER_STATE = "mcp_caller"


def add_mcp_routes(app: FastAPI) -> None:
    # POST only: a stateless server has no session to resume (GET) or end (DELETE); those get 405.
    app.router.routes.append(Route(MCP_PATH, McpEndpoint(), methods=["POST"]))

    async def metadata(request: Request) -> JSONResponse:
        """OAuth 2.0 Protected Resource Metadata (RFC 9728) for /mcp."""
        return JSONResponse(protected_resource(services_of(request).settings, public_base(request)))

    # Both addresses hosts try: the path-suffixed one the 401 names, and the bare one.
    for path in (WELL_KNOWN + MCP_PATH, WELL_KNOWN):
        app.get(path, include_in_schema=False)(metadata)


class McpEndpoint:
    """The ASGI endpoint of `/mcp`; the SDK's server is built once per app, on first use."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            caller = caller_or_none(request)
        except Refused as refused:  # a cookie-signed request from another site
            await error(refused.status, refused.code, refused.message)(scope, receive, send)
            return
        if caller is None:
            unauthenticated = error(401, "unauthenticated", SIGN_IN_MESSAGE)
            unauthenticated.headers["www-authenticate"] = challenge(public_base(request))
            await unauthenticated(scope, receive, send)
            return
        scope.setdefault("state", {})[CALLER_STATE] = caller
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        manager = StreamableHTTPSessionManager(app=_server(request), json_response=True, stateless=True)
        async with manager.run():
            await manager.handle_request(scope, receive, send)


def _server(request: Request) -> Server:
    state = request.app.state
    if getattr(state, "mcp_server", None) is None:
        from groundchat.mcp.server import build_server
        from groundchat.mcp.tool_calls import McpTools

        state.mcp_server = build_server(McpTools(services_of(request)), _caller_of)
    return state.mcp_server


def _caller_of(ctx: ServerRequestContext) -> Caller:
    # The SDK hands each handler the HTTP request it came in; the endpoint put the caller there.
    return ctx.request.scope["state"][CALLER_STATE]
