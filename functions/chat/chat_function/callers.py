"""Who is asking, as FastAPI dependencies: one place where every route checks the caller.

A route that needs a permission declares `Depends(allowed(PERMISSION))`; a refused request
raises `Refused`, which the app renders as the same JSON error every route gives.
"""
from __future__ import annotations

from typing import Awaitable, Callable

from fastapi import Request

from groundchat.auth.callers import SIGN_IN_MESSAGE, Caller
from groundchat.services import Services


class Refused(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def services_of(request: Request) -> Services:
    return request.app.state.services


def caller_or_none(request: Request) -> Caller | None:
    return services_of(request).verifier.caller_from_header(request.headers.get("authorization"))


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
