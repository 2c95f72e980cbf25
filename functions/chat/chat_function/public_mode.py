"""Public mode in the chat function: the startup refusal, the visitor's session cookie, what the
page needs to draw the human check, and the widget's script. The decisions are the core's
(groundchat.public); this module only maps them to HTTP."""
from __future__ import annotations

from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response

from chat_function.addresses import api_path
from groundchat.exchange.refusal import IssuedSession
from groundchat.public.startup_check import refuse_unsafe_public_mode
from groundchat.public.visitor_sessions import COOKIE_NAME


def refuse_to_start_with_a_hole(settings: Any) -> None:
    """Raises PublicModeRefused (one line) when public mode lacks a guard, before any route exists."""
    refuse_unsafe_public_mode(settings)


def keep_visitor_session(response: Response, issued: IssuedSession | None, request: Request) -> Response:
    if issued is not None:
        # HttpOnly: no script reads it. Strict: no other site's page makes the browser send it.
        # Path: "/api" as the browser addresses it ("/<stage>/api" behind an API Gateway stage), the
        # same whichever chat route set it (left out, /api/ai-sdk/chat's would be "/api/ai-sdk"), so
        # the stop and reconnect routes of the visitor's own answer get it too; every other route
        # ignores it.
        response.set_cookie(COOKIE_NAME, issued.token, max_age=issued.max_age, path=api_path(request),
                            secure=True, httponly=True, samesite="strict")
    return response


def public_status(settings: Any) -> dict[str, Any]:
    """For /api/chat/status in public mode: the site key and script the page renders the widget
    with. Nothing in private mode, whose status stays as it was."""
    if settings.mode != "public":
        return {}
    return {"mode": "public", "human_check": {"provider": "turnstile", "site_key": settings.turnstile_site_key,
                                              "script_url": settings.turnstile_script_url,
                                              "session_minutes": settings.visitor_session_minutes}}


def add_public_script_route(app: FastAPI) -> None:
    @app.get("/static/public.js", response_class=Response, include_in_schema=False)
    async def public_script() -> Response:
        text = resources.files("chat_function").joinpath("static/public.js").read_text()
        return Response(text, media_type="text/javascript; charset=utf-8")
