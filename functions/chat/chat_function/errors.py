"""JSON errors with a stable `code`, the same shape on every route."""
from __future__ import annotations

from fastapi.responses import JSONResponse


def error(status: int, code: str, message: str, **extra) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message, **extra}}, status_code=status)
