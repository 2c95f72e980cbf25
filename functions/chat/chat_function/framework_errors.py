"""The answers FastAPI and Starlette give on their own (404, 405, a 422 for a bad parameter) in our
error shape, and the document saying so (groundchat/web/http_errors.py says why)."""
from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from groundchat.web.http_errors import allowed_methods, error_body, openapi_without_422, status_answer, validation_message


def add_typed_http_errors(app: FastAPI) -> None:
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        allowed = allowed_methods(app.router.routes, request.scope) if exc.status_code == 405 else []
        body, headers = status_answer(exc.status_code, request.method, request.url.path, exc.detail, allowed)
        return JSONResponse(body, status_code=exc.status_code, headers={**(exc.headers or {}), **headers})

    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(error_body("bad-request", validation_message(exc.errors())), status_code=400)

    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid)
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = openapi_without_422(build())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
