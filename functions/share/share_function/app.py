"""Shared conversations: an HTML page, its JSON, and the list of shared examples.

Read-only by construction: the routes reach the store only through `get_shared`, `read_items`,
`list_shared` and a shared conversation's image bytes, never the model, never a write. No caller is resolved: a shared conversation is
public, and an unshared one does not exist here, so unknown and unshared ids get the same 404.
"""
from __future__ import annotations

import html
import json
from importlib import resources
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response

from groundchat.ids import is_conversation_id
from groundchat.services import Services, build_services
from groundchat.web.pages import fill, sign_in_kind, tool_drawers
from page_assets.assets import ASSETS, asset
from groundchat.web.security_headers import SecurityHeaders, security_headers
from groundchat.web.http_errors import ErrorBody, error_body, validation_message
from groundchat.store.availability import store_failure_answer
from groundchat.store.conversation_images import is_sha256, read_image
from groundchat.store.conversations import public_conversation, public_message

# A shared page may be cached briefly by a browser, but unsharing must take effect at once.
_NO_STALE = {"Cache-Control": "no-cache"}

NOT_FOUND_JSON = {"error": {"code": "not-found", "message": "No such shared conversation."}}
NOT_FOUND_IMAGE = {"error": {"code": "not-found", "message": "No such image in a shared conversation."}}
NOT_FOUND_HTML = (
    "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Not found</title></head>"
    "<body><h1>No such shared conversation</h1>"
    "<p>It was never shared, its owner has stopped sharing it or deleted it, or it has expired.</p>"
    "<p><a href=\"../../chat\">Open the chat</a></p></body></html>"
)


def _day(stamp: Any) -> str:
    return str(stamp)[:10] if stamp else "an unknown day"


def _script_safe(data: Any) -> str:
    # Inside <script type="application/json"> only "</" could end the element early.
    return json.dumps(data, ensure_ascii=False, default=str).replace("<", "\\u003c")


def _refused(*statuses: int) -> dict[int | str, dict[str, object]]:
    words = {400: "a query parameter out of range", 404: "never shared, no longer shared, deleted or expired"}
    return {status: {"model": ErrorBody, "description": words[status]} for status in statuses}


# The store cannot be reached: a typed 503 with Retry-After (or a typed 500), never a bare one;
# JSON on every route, the HTML page's included (the store failure handlers answer so).
_AS_JSON = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
_UNAVAILABLE: dict[int | str, dict[str, object]] = {
    503: {"description": "the store cannot be reached (Retry-After)", "content": _AS_JSON},
    500: {"description": "an unexpected failure (typed)", "content": _AS_JSON}}


def add_share_routes(app: FastAPI, services: Services) -> None:
    """Adds the share routes to `app` (the standalone share app, or the chat app locally)."""

    async def load(conversation_id: str) -> dict[str, Any] | None:
        if not is_conversation_id(conversation_id):  # answered without a read
            return None
        item = await services.conversations.get_shared(conversation_id)
        if item is None:
            return None
        items = await services.conversations.read_items(conversation_id)
        return {
            "conversation": public_conversation(item),
            # shared=True: what recall brought from the owner's other conversations is withheld.
            "messages": [public_message(i, shared=True) for i in sorted(items, key=lambda i: int(i["seq"]))],
            "answered_on": _day(item.get("updated_at") or item.get("created_at")),
            # Until when the page stays: the conversation expires whole on this day (retention).
            "expires_at": public_conversation(item)["expires_at"],
        }

    @app.get("/api/shared", responses={**_refused(400), **_UNAVAILABLE})
    async def list_shared(limit: int = Query(default=20, ge=1, le=50)) -> Response:
        shared = await services.conversations.list_shared(limit=limit)
        for conversation in shared:
            conversation["share_url"] = f"/chat/shared/{conversation['conversation_id']}"
        return JSONResponse({"conversations": shared}, headers=_NO_STALE)

    @app.get("/api/shared/{conversation_id}", responses={**_refused(404), **_UNAVAILABLE})
    async def read_shared(conversation_id: str) -> Response:
        found = await load(conversation_id)
        if found is None:
            return JSONResponse(NOT_FOUND_JSON, status_code=404, headers=_NO_STALE)
        return JSONResponse(found, headers=_NO_STALE)

    @app.get("/api/shared/{conversation_id}/images/{sha256}", response_class=Response,
             responses={200: {"description": "the image", "content": {t: {"schema": {"type": "string", "format": "binary"}}
                                                                     for t in ("image/png", "image/jpeg", "image/webp")}},
                        **_refused(404), **_UNAVAILABLE})
    async def shared_image(conversation_id: str, sha256: str) -> Response:
        """One image of a shared conversation, by the hash its message names: only while it is
        shared (an unshared, unknown or expired one is the same 404), only an image it holds."""
        found = None
        if is_conversation_id(conversation_id) and is_sha256(sha256) and await services.conversations.get_shared(conversation_id):
            found = await read_image(services.conversations, conversation_id, sha256)
        if found is None:
            return JSONResponse(NOT_FOUND_IMAGE, status_code=404, headers=_NO_STALE)
        # no-cache as the page: unsharing takes effect at once. nosniff: never anything but an image.
        return Response(found[0], media_type=found[1], headers={**_NO_STALE, "x-content-type-options": "nosniff"})

    @app.get("/chat/shared/{conversation_id}", response_class=HTMLResponse,
             responses={200: {"description": "the shared conversation's page", "content": {"text/html": {}}},
                        404: {"description": "never shared, no longer shared, deleted or expired",
                              "content": {"text/html": {}}},
                        **_UNAVAILABLE})
    async def shared_page(conversation_id: str) -> Response:
        found = await load(conversation_id)
        if found is None:
            return HTMLResponse(NOT_FOUND_HTML, status_code=404, headers=_NO_STALE)
        conversation = found["conversation"]
        page = resources.files("share_function").joinpath("static/shared.html").read_text()
        bot = html.escape(services.settings.bot_name)
        page = fill(page, {
            "TITLE": html.escape(conversation["title"] or "Shared conversation"),
            "BOT_NAME": bot,
            "SIGN_IN": sign_in_kind(services.settings.auth_mode),
            "SHARED_ON": html.escape(_day(conversation["shared_at"])),
            "ANSWERED_ON": html.escape(found["answered_on"]),
            "EXPIRES_ON": html.escape(_day(found["expires_at"])),
            "ID": html.escape(conversation_id),
            "DATA": _script_safe(found),
            "TOOL_DRAWERS": tool_drawers(),
        })
        return HTMLResponse(page, headers=_NO_STALE)

    # Standalone (behind Mangum) the share function serves the transcript's assets itself; mounted
    # beside the chat app locally, the chat app already does.
    served = {getattr(route, "path", None) for route in app.router.routes}
    for name in ASSETS:
        if f"/static/{name}" not in served:
            app.add_api_route(f"/static/{name}", _asset_route(name), methods=["GET"])
    # The shared page's own script (no inline script runs under the Content-Security-Policy): the
    # share function's, wherever its page is served.
    app.add_api_route(f"/static/{SHARED_SCRIPT}", _shared_script, methods=["GET"], include_in_schema=False)


SHARED_SCRIPT = "shared.js"


async def _shared_script() -> Response:
    text = resources.files("share_function").joinpath(f"static/{SHARED_SCRIPT}").read_text(encoding="utf-8")
    return Response(text, media_type="text/javascript; charset=utf-8")


def _asset_route(name: str):
    async def serve_asset() -> Response:
        text, media_type = asset(name)
        return Response(text, media_type=media_type)

    return serve_asset


def create_share_app(services: Services | None = None) -> FastAPI:
    """The share function's own app (behind Mangum in AWS)."""
    app = FastAPI(title="groundchat-share", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.services = services or build_services()
    add_share_routes(app, app.state.services)
    add_store_failure_handlers(app)
    app.add_middleware(SecurityHeaders, headers=security_headers(app.state.services.settings))

    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        # API Gateway routes only this function's GETs here: a parameter out of range is all it meets.
        return JSONResponse(error_body("bad-request", validation_message(exc.errors())), status_code=400)

    app.add_exception_handler(RequestValidationError, invalid)
    return app


def add_store_failure_handlers(app: FastAPI) -> None:
    """A store that cannot be reached is a 503 the reader can retry, never a bare 500."""

    async def unavailable(request: Request, exc: Exception) -> Response:
        status, body, headers = store_failure_answer(exc)
        return JSONResponse(body, status_code=status, headers=headers)

    app.add_exception_handler(BotoCoreError, unavailable)
    app.add_exception_handler(ClientError, unavailable)
