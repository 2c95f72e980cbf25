"""JSON errors with a stable `code`, the same shape on every route."""
from __future__ import annotations

from fastapi import Request
from fastapi.responses import JSONResponse

from groundchat.observability import record_refusal
from groundchat.store.availability import store_failure_answer


def error(status: int, code: str, message: str, **extra) -> JSONResponse:
    # Every refusal is counted by its code; the cap alarm watches the spending codes among them.
    record_refusal(code)
    return JSONResponse({"error": {"code": code, "message": message, **extra}}, status_code=status)


async def store_failure(request: Request, exc: Exception) -> JSONResponse:
    """A store call that failed under any route: 503 with Retry-After when DynamoDB cannot be
    reached, a typed 500 otherwise; never a bare text 500."""
    status, body, headers = store_failure_answer(exc)
    record_refusal(body["error"]["code"])
    return JSONResponse(body, status_code=status, headers=headers)
