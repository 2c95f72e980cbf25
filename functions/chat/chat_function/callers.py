"""Who is asking, as FastAPI dependencies: one place where every route checks the caller.

A route that needs a permission declares `Depends(allowed(PERMISSION))`; a refused request
raises `Refused`, which the app renders as the same JSON error every route gives.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Awaitable, Callable

from fastapi import Request

from groundchat.auth.callers import CHAT_USE, SIGN_IN_MESSAGE, Caller
from groundchat.services import Services

if TYPE_CHECKING:
    from groundchat.public.gate import Visit


class Refused(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def services_of(request: Request) -> Services:
    return request.app.state.services


def caller_or_none(request: Request) -> Caller | None:
    """A bearer token when the request sends one; else the OIDC sign-in's session cookie."""
    authorization = request.headers.get("authorization")
    if authorization:
        return services_of(request).verifier.caller_from_header(authorization)
    return session_caller(request)


def session_caller(request: Request) -> Caller | None:
    """The caller the session cookie names (verified like a bearer ID token). A cookie-signed
    change that another origin may have started is refused with 403, saying why."""
    settings = services_of(request).settings
    if settings.auth_mode != "oidc":
        return None  # only the OIDC sign-in sets a session cookie
    # Imported here: the sign-in's modules (httpx, Fernet, the provider's discovery) cost a cold
    # start ~0.15 s that a deployment without the OIDC sign-in should not pay.
    from groundchat.auth.sessions import CSRF_HEADER, SESSION_COOKIE, cross_site_reason
    from groundchat.auth.sign_in import app_origin, caller_from_session

    caller = caller_from_session(settings, request.cookies.get(SESSION_COOKIE))
    if caller is None:
        return None
    reason = cross_site_reason(request.method, request.headers.get("origin"), request.headers.get("host"),
                               request.headers.get(CSRF_HEADER), app_origin(settings), request.url.scheme)
    if reason:
        raise Refused(403, "cross-site", reason[0].upper() + reason[1:] + ".")
    return caller


def signed_in(request: Request) -> Caller:
    caller = caller_or_none(request)
    if caller is None:
        raise Refused(401, "unauthenticated", SIGN_IN_MESSAGE)
    return caller


def allowed(permission: str) -> Callable[[Request], Awaitable[Caller]]:
    async def check(request: Request) -> Caller:
        caller = signed_in(request)
        if not await services_of(request).can(permission, caller):
            raise Refused(403, "forbidden", f"You do not have the permission {permission!r}.")
        return caller

    return check


async def asker(request: Request) -> Caller:
    """Who may follow or stop an answer: someone signed in with chat.use, or, in public mode, a
    visitor whose session cookie is live (the one who asked: no model is called, so neither the
    rate limit nor the human check is asked again; a cookie from another site is refused)."""
    services = services_of(request)
    if services.public and not request.headers.get("authorization"):
        from groundchat.public.visitor_sessions import COOKIE_NAME, read_session
        from groundchat.public.visitors import visitor

        token = request.cookies.get(COOKIE_NAME)
        session = read_session(services.settings.visitor_secret, token) if token else None
        if session is not None and not session.expired:
            _refuse_a_forged_visit(request)
            return visitor(session.visitor_id)
    return await allowed(CHAT_USE)(request)


# ---- public mode: what a request says about an anonymous visitor ---------------------------------

# The header the page sends a fresh Turnstile token in (the body holds only the question).
HUMAN_CHECK_HEADER = "x-human-check"


def visit_of(request: Request) -> "Visit":
    """The source address (from API Gateway's request context in AWS, the connection locally), the
    visitor session cookie and a human-check token: judged by the public gate, never trusted here."""
    from groundchat.public.addresses import source_ip_from_request_context
    from groundchat.public.gate import Visit
    from groundchat.public.visitor_sessions import COOKIE_NAME

    settings = services_of(request).settings
    if settings.visitor_address_from == "api-gateway":
        address = source_ip_from_request_context(request.headers.get("x-amzn-request-context"))
    else:
        address = request.client.host if request.client else None
    session = request.cookies.get(COOKIE_NAME)
    if session:
        _refuse_a_forged_visit(request)
    return Visit(address=address, session=session, human_check_token=request.headers.get(HUMAN_CHECK_HEADER) or None)


def _refuse_a_forged_visit(request: Request) -> None:
    """A visitor's session cookie goes with any request the browser sends here, a form or a
    text/plain post from another site's page included: a question it signs must come from this
    site, as for the sign-in's cookie (403 `cross-site` otherwise; the question is never spent)."""
    from groundchat.auth.sessions import CSRF_HEADER, cross_site_reason

    reason = cross_site_reason(request.method, request.headers.get("origin"), request.headers.get("host"),
                               request.headers.get(CSRF_HEADER), None, request.url.scheme)
    if reason:
        raise Refused(403, "cross-site", reason[0].upper() + reason[1:] + ".")
