"""One error shape on every route of every app: `{"error": {"code", "message"}}`, for the answers
FastAPI and Starlette give on their own too (an unknown address, a method a path does not take, a
query parameter out of range), and an OpenAPI document that says so.

Left to themselves they answer `{"detail": ...}`, a 422 the document lists for every route, and a
405 whose `Allow` names the methods of the first route on the path only (FastAPI makes one route
per method, so `GET` and `DELETE` on one path are two). What is here is framework-free (the layer
imports no web framework); each function's app wires it to its handlers.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from groundchat.json_shapes import JsonObject

CODES = {400: "bad-request", 401: "unauthenticated", 403: "forbidden", 404: "not-found",
         405: "method-not-allowed", 413: "too-large", 429: "too-many-requests"}
_LOCATIONS = ("query", "path", "body", "header", "cookie")
_ERROR_BODY_REF: JsonObject = {"$ref": "#/components/schemas/ErrorBody"}


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorBody(BaseModel):
    """Every refusal on every route: `{"error": {"code", "message", ...}}`."""

    error: ErrorDetail


class Route(Protocol):
    """A Starlette route as far as `allowed_methods` reads it."""

    methods: set[str] | None

    def matches(self, scope: Mapping[str, object]) -> tuple[object, object]: ...


def error_body(code: str, message: str) -> dict[str, dict[str, str]]:
    return {"error": {"code": code, "message": message}}


def status_answer(status: int, method: str, path: str, detail: object,
                  allowed: Sequence[str] = ()) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """The body and headers of a status the framework raised on its own."""
    headers = {}
    if status == 405:
        headers["Allow"] = ", ".join(allowed)
        message = f"{method} is not served here; this address takes {', '.join(allowed)}."
    elif status == 404:
        message = f"No such address: {path}."
    else:
        message = detail if isinstance(detail, str) else "The request was refused."
    return error_body(CODES.get(status, f"http-{status}"), message), headers


def allowed_methods(routes: Iterable[Route], scope: Mapping[str, object]) -> list[str]:
    """Every method some route serves at this path (Starlette's Match: NONE 0, PARTIAL 1, FULL 2)."""
    methods: set[str] = set()
    for route in routes:
        match, _ = route.matches(scope)
        if getattr(match, "value", 0) > 0:
            methods |= set(route.methods or ())
    return sorted(methods)


def validation_message(errors: Sequence[Mapping[str, object]]) -> str:
    """The first problem in one line: `limit: Input should be greater than or equal to 1.`"""
    if not errors:
        return "The request is malformed."
    first = errors[0]
    location = first.get("loc", ())
    parts = location if isinstance(location, (list, tuple)) else ()
    where = ".".join(str(part) for part in parts if part not in _LOCATIONS)
    said = str(first.get("msg", "invalid"))
    return f"{where}: {said}." if where else f"{said}."


def openapi_without_422(schema: JsonObject) -> JsonObject:
    """The document as the routes answer: each 422 becomes the typed 400, and ErrorBody is defined."""
    components = schema.setdefault("components", {})
    schemas = components.setdefault("schemas", {}) if isinstance(components, dict) else {}
    if isinstance(schemas, dict):
        for name in ("HTTPValidationError", "ValidationError"):
            schemas.pop(name, None)
        schemas.setdefault("ErrorDetail", ErrorDetail.model_json_schema())
        body = ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}")
        body.pop("$defs", None)
        schemas.setdefault("ErrorBody", body)
    paths = schema.get("paths", {})
    for operations in (paths.values() if isinstance(paths, dict) else ()):
        for operation in (operations.values() if isinstance(operations, dict) else ()):
            responses = operation.get("responses") if isinstance(operation, dict) else None
            if isinstance(responses, dict) and responses.pop("422", None) is not None:
                responses.setdefault("400", {"description": "the request is malformed",
                                             "content": {"application/json": {"schema": _ERROR_BODY_REF}}})
    return schema
