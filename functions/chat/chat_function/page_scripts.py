"""The pages' own scripts (chat, run list, trace), served as files: the Content-Security-Policy
runs no inline script. One route each, as API Gateway routes them (template.yaml)."""
from __future__ import annotations

from importlib import resources

from fastapi import FastAPI
from fastapi.responses import Response

PAGE_SCRIPTS = ("chat.js", "runs.js", "trace.js")


def add_page_script_routes(app: FastAPI) -> None:
    for name in PAGE_SCRIPTS:
        app.get(f"/static/{name}", response_class=Response, include_in_schema=False)(_script_route(name))


def _script_route(name: str):
    async def page_script() -> Response:
        text = resources.files("chat_function").joinpath(f"static/{name}").read_text(encoding="utf-8")
        return Response(text, media_type="text/javascript; charset=utf-8")

    return page_script
