"""Where this app sits in the address the client used. Behind API Gateway the app never sees the
stage (or a custom domain's base path); the request context the Lambda Web Adapter forwards (and
overwrites, so a client cannot choose it) has the full path the client asked for."""
from __future__ import annotations

import json

from starlette.requests import Request


def base_path(request: Request) -> str:
    """The path before the app's own ("/prod" behind a stage; "" when the app is at the root)."""
    try:
        context = json.loads(request.headers.get("x-amzn-request-context") or "{}")
    except ValueError:
        context = {}
    full = context.get("path") if isinstance(context, dict) else None
    path = request.url.path
    if isinstance(full, str) and full.endswith(path) and len(full) > len(path):
        return full[: -len(path)].rstrip("/")
    return ""


def public_base(request: Request) -> str:
    """This app's address as the client reached it: scheme, host and base path."""
    return f"{request.url.scheme}://{request.url.netloc}{base_path(request)}"


def api_path(request: Request) -> str:
    """The `/api` directory as the browser addresses it: the Path of a cookie every API route gets."""
    return base_path(request) + "/api"
