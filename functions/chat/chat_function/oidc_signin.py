"""The page's OIDC sign-in (authorization code + PKCE), in `oidc` auth mode only: HTTP in, the
core's steps (`groundchat.auth.sign_in`) out, cookies set here.

Handlers are plain functions: FastAPI runs them in its thread pool, so a slow provider holds a
worker thread, never the event loop. A failure is one line on a page (browser navigations) or in
the JSON error shape (the page's calls), never a traceback; an unreachable provider is a 503.
"""
from __future__ import annotations

import html
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from chat_function.callers import services_of
from chat_function.errors import error
from chat_function.openapi import HTML, refusals
from groundchat.auth import sign_in as steps
from groundchat.auth.oidc import SignInFailed
from groundchat.auth.oidc_config import OidcNotConfigured, sign_in_configured
from groundchat.auth.sessions import (
    CSRF_HEADER, REFRESH_COOKIE, SESSION_COOKIE, STATE_COOKIE, CookieSpec, SessionView, all_cookies_cleared,
    cross_site_reason, sign_in_cookie_cleared,
)

log = logging.getLogger("groundchat.chat_function")

NO_STORE = {"Cache-Control": "no-store"}
REDIRECT = {302: {"description": "on to the provider, or back to the chat page"}}
SESSION_ANSWER = {200: {"model": SessionView, "description": "who is signed in, and until when"}}


def add_oidc_sign_in_routes(app: FastAPI) -> None:
    """Adds /auth/sign-in, /auth/callback, /auth/refresh, /auth/sign-out and /auth/session when
    the deployment runs in `oidc` auth mode; in dev mode they answer 404 like any unknown address."""
    if app.state.services.settings.auth_mode != "oidc":
        return

    @app.get("/auth/sign-in", response_class=Response, responses={**REDIRECT, **HTML, **refusals(503)})
    def sign_in(request: Request) -> Response:
        """Starts a sign-in: state, nonce and PKCE verifier sealed in a cookie, then the provider."""
        try:
            outcome = steps.start(steps.provider_of(services_of(request).settings))
        except (SignInFailed, OidcNotConfigured) as exc:
            return _problem_page(request, exc)
        return _redirect(outcome.location or "/", outcome.cookies)

    @app.get("/auth/callback", response_class=Response, responses={**REDIRECT, **HTML, **refusals(400, 503)})
    def callback(request: Request) -> Response:
        """The provider's redirect back: checked, exchanged, verified; the session cookie set."""
        try:
            provider = steps.provider_of(services_of(request).settings)
            outcome = steps.finish(provider, dict(request.query_params), request.cookies.get(STATE_COOKIE))
        except (SignInFailed, OidcNotConfigured) as exc:
            return _problem_page(request, exc, [sign_in_cookie_cleared()])
        return _redirect(outcome.location or "/", outcome.cookies)

    @app.post("/auth/refresh", responses={**SESSION_ANSWER, **refusals(401, 403, 503)})
    def refresh(request: Request) -> Response:
        """A new ID token from the refresh token; the page asks ahead of the old one's expiry."""
        provider = _provider_for_a_change(request)
        if isinstance(provider, Response):
            return provider
        try:
            outcome = steps.renew(provider, request.cookies.get(REFRESH_COOKIE))
        except SignInFailed as exc:
            answer = _json_problem(exc)
            if answer.status_code == 401:  # the session is over: nothing of it stays behind
                _set_cookies(answer, all_cookies_cleared(provider.config))
            return answer
        return _set_cookies(JSONResponse(_public(outcome.session), headers=NO_STORE), outcome.cookies)

    @app.post("/auth/sign-out", response_class=Response,
              responses={200: {"description": "signed out; `end_session_url` ends the provider's session too"},
                         303: {"description": "a plain form post goes on to the provider's sign-out"},
                         **refusals(403, 503)})
    def sign_out(request: Request) -> Response:
        """Clears every sign-in cookie and names the provider's sign-out address, if it has one."""
        provider = _provider_for_a_change(request)
        if isinstance(provider, Response):
            return provider
        outcome = steps.sign_out(provider, request.cookies.get(SESSION_COOKIE), request.cookies.get(REFRESH_COOKIE))
        if "application/json" not in request.headers.get("accept", ""):
            return _redirect(outcome.location or provider.config.sign_out_url, outcome.cookies, status=303)
        answer = JSONResponse({"signed_out": True, "end_session_url": outcome.location}, headers=NO_STORE)
        return _set_cookies(answer, outcome.cookies)

    @app.get("/auth/session", responses={**SESSION_ANSWER, **refusals(503)})
    def session(request: Request) -> Response:
        """Who the cookies sign in and when that ends (never a token), for the page."""
        settings = services_of(request).settings
        if not sign_in_configured(settings):
            return JSONResponse({"configured": False, "signed_in": False, "refreshable": False, "sign_in_url": None,
                                 "message": "The sign-in is not set up here: set GROUNDCHAT_OIDC_ISSUER and the client settings."},
                                headers=NO_STORE)
        try:
            provider = steps.provider_of(settings)
            view = steps.current(provider, request.cookies.get(SESSION_COOKIE), request.cookies.get(REFRESH_COOKIE))
        except (SignInFailed, OidcNotConfigured) as exc:
            # Still a sign-in site, only not reachable now: the page keeps its "Sign in" button and
            # shows the error's one line.
            return _json_problem(exc, configured=True, signed_in=False,
                                 refreshable=bool(request.cookies.get(REFRESH_COOKIE)), sign_in_url="/auth/sign-in")
        return JSONResponse(_public(view), headers=NO_STORE)


# ---- answers -------------------------------------------------------------------------------------

def _public(view: SessionView | None) -> dict[str, Any]:
    return view.model_dump() if view else {}


def _set_cookies(response: Response, cookies: list[CookieSpec]) -> Response:
    for c in cookies:
        if c.max_age <= 0:
            response.delete_cookie(c.name, path=c.path, secure=True, httponly=True, samesite=c.samesite)  # type: ignore[arg-type]
        else:
            response.set_cookie(c.name, c.value, max_age=c.max_age, path=c.path, secure=True, httponly=True,
                                samesite=c.samesite)  # type: ignore[arg-type]
    return response


def _redirect(location: str, cookies: list[CookieSpec], status: int = 302) -> Response:
    return _set_cookies(RedirectResponse(location, status_code=status, headers=NO_STORE), cookies)


def _sentence(exc: Exception) -> str:
    text = exc.message if isinstance(exc, SignInFailed) else str(exc)
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _status_of(exc: Exception) -> tuple[int, str]:
    if isinstance(exc, OidcNotConfigured):
        return 503, "sign-in-not-configured"
    assert isinstance(exc, SignInFailed)
    return exc.status, exc.code


def _what_next(status: int) -> str:
    # The core says what happened; what to do about it depends only on the kind of failure.
    if status == 503:
        return "Try again in a minute."
    if status == 401:
        return "Sign in again."
    return "Start the sign-in again."


def _json_problem(exc: Exception, **beside: Any) -> JSONResponse:
    """The JSON error shape of every route, with `beside` next to `error` when given."""
    status, code = _status_of(exc)
    log.warning("sign-in refused: %s %s", status, code)
    message = _sentence(exc) + " " + _what_next(status)
    answer = error(status, code, message)
    if beside:
        answer = JSONResponse({"error": {"code": code, "message": message}, **beside}, status_code=status)
    answer.headers.update(NO_STORE)
    return answer


def _problem_page(request: Request, exc: Exception, cookies: list[CookieSpec] | None = None) -> Response:
    """A browser navigation that failed: a short page saying what happened and what to do. Its
    links are relative (every /auth/ page sits beside /auth/sign-in), so they hold under an API stage."""
    status, code = _status_of(exc)
    log.warning("sign-in refused: %s %s", status, code)
    bot = html.escape(services_of(request).settings.bot_name)
    page = f"""<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign-in did not work · {bot}</title>
<link rel="stylesheet" href="../static/transcript.css"></head>
<body>
<main>
<h1>Sign-in did not work</h1>
<p id="sign-in-problem" role="alert" data-code="{html.escape(code)}">{html.escape(_sentence(exc))} {_what_next(status)}</p>
<p><a href="sign-in">Sign in again</a> · <a href="../chat">Back to the chat</a></p>
</main>
</body>
</html>
"""
    return _set_cookies(HTMLResponse(page, status_code=status, headers=NO_STORE), cookies or [])


def _provider_for_a_change(request: Request) -> Any:
    """The provider, for a cookie-signed change (renewal, sign-out); a refusal as a Response when
    another site may have sent it or the sign-in is not configured."""
    refused = _cross_site(request)
    if refused:
        return refused
    try:
        return steps.provider_of(services_of(request).settings)
    except OidcNotConfigured as exc:
        return _json_problem(exc)


def _cross_site(request: Request) -> Response | None:
    """The sign-in's own cookie-signed changes pass the same origin check as every other route."""
    reason = cross_site_reason(request.method, request.headers.get("origin"), request.headers.get("host"),
                               request.headers.get(CSRF_HEADER), steps.app_origin(services_of(request).settings),
                               request.url.scheme)
    if reason:
        return error(403, "cross-site", reason[:1].upper() + reason[1:] + ".")
    return None
