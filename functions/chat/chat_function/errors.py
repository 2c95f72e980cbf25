"""JSON errors with a stable `code`, the same shape on every route."""
from __future__ import annotations

from fastapi.responses import JSONResponse

from groundchat.observability import record_refusal


def error(status: int, code: str, message: str, **extra) -> JSONResponse:
    # Every refusal is counted by its code; the cap alarm watches the spending codes among them.
    record_refusal(code)
    return JSONResponse({"error": {"code": code, "message": message, **extra}}, status_code=status)
