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
from chat_function.limits import read_limited
from groundchat.auth.callers import SIGN_IN_MESSAGE
from groundchat.mcp.envelope import envelope_problem
from groundchat.mcp.origins import origin_allowed
from groundchat.mcp.resource_metadata import MCP_PATH, WELL_KNOWN, challenge, protected_resource

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server
    from starlette.types import Message, Receive, Scope, Send

    from groundchat.auth.callers import Caller

# Where the endpoint leaves the resolved caller for the tool handlers (the request's own state).
CALLER_STATE = "mcp_caller"
# A message of ours is a tool call of a few KB: anything near this is no MCP host's, and is never held whole.
MAX_MCP_BODY_BYTES = 4 * 1024 * 1024


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
        origin = request.headers.get("origin")
        if not origin_allowed(origin, services_of(request).settings.allowed_origins):
            # Before the caller: a foreign page learns nothing, not even whether a token would do.
            await error(403, "forbidden-origin", f"/mcp does not serve pages on {origin[:200]}: an MCP host in a "
                                                 "browser must be on an origin listed in GROUNDCHAT_ALLOWED_ORIGINS.")(scope, receive, send)
            return
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
        body = await read_limited(request, MAX_MCP_BODY_BYTES)
        if body is None:
            await error(413, "too-large", f"The request body is over {MAX_MCP_BODY_BYTES} bytes.")(scope, receive, send)
            return
        problem = envelope_problem(body) if _is_json(request) else None  # the SDK says what else is wrong
        if problem is not None:
            await JSONResponse(problem, status_code=400)(scope, receive, send)
            return
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        manager = StreamableHTTPSessionManager(app=_server(request), json_response=True, stateless=True)
        async with manager.run():
            await manager.handle_request(scope, _replay(body, receive), send)


def _is_json(request: Request) -> bool:
    return request.headers.get("content-type", "").split(";")[0].strip().lower() == "application/json"


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body already read, handed to the SDK as if it came from the client; then the client's own
    messages (a disconnect)."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


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
