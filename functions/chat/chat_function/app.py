"""The chat function's FastAPI app: routes only. Each maps HTTP to a use case of the core and back;
the answer itself is `groundchat.chat.answer`, and its frames are rendered as SSE here."""
from __future__ import annotations

from importlib import resources
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from fastapi import Depends, FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, JSONResponse, Response

from chat_function.callers import Refused, allowed, caller_or_none, services_of, signed_in
from chat_function.errors import error, store_failure
from chat_function.limits import MAX_CHAT_BODY_BYTES, read_limited
from chat_function.openapi import ALWAYS, CHAT_RESPONSES, HTML, asset_response, chat_request, refusals
from chat_function.server_errors import TypedServerErrors
from chat_function.signin import add_sign_in_routes
from chat_function.streaming import ExchangeStream
from groundchat.auth.callers import CHAT_USE, TRACES_READ, Caller
from groundchat.chat.answer import Refusal, answer_question
from groundchat.ids import is_answer_run_id, is_benchmark_run_id, is_conversation_id
from groundchat.services import Services, build_services
from groundchat.spending.operator import budget_status
from groundchat.store.conversations import public_conversation, public_message
from groundchat.tools.base import ToolError, ToolNotFound, ToolRefused
from groundchat.web.assets import ASSETS, asset

may_chat = Depends(allowed(CHAT_USE))
may_read_traces = Depends(allowed(TRACES_READ))


def create_app(services: Services | None = None) -> FastAPI:
    app = FastAPI(title="groundchat", docs_url=None, redoc_url=None)
    app.state.services = services or build_services()
    app.add_middleware(TypedServerErrors)
    origins = [o.strip() for o in app.state.services.settings.allowed_origins.split(",") if o.strip()]
    if origins:
        # Only the configured origins; the page itself is same-origin and needs none.
        app.add_middleware(CORSMiddleware, allow_origins=origins, allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["authorization", "content-type"], max_age=600)

    @app.exception_handler(Refused)
    async def refused(request: Request, exc: Refused) -> Response:
        return error(exc.status, exc.code, exc.message)

    app.add_exception_handler(BotoCoreError, store_failure)
    app.add_exception_handler(ClientError, store_failure)

    _chat_routes(app, app.state.services.settings.max_question_chars)
    _conversation_routes(app)
    _trace_routes(app)
    _run_routes(app)
    add_sign_in_routes(app)  # dev auth mode only
    _page_routes(app)
    return app


def _chat_routes(app: FastAPI, max_question_chars: int) -> None:
    @app.get("/healthz", responses={503: {"description": "a dependency is down"}})
    async def healthz(request: Request) -> Response:
        """Which dependency is down, if one is: 503 while the store cannot be reached."""
        store = "ok" if await services_of(request).store_reachable() else "down"
        return JSONResponse({"status": "ok" if store == "ok" else "degraded", "store": store},
                            status_code=200 if store == "ok" else 503)

    @app.get("/api/chat/status")
    async def status(request: Request) -> dict[str, Any]:
        services = services_of(request)
        enabled, reason, how = services.model_status()
        return {"enabled": enabled, "reason": reason, "how_to_fix": how, "bot_name": services.settings.bot_name,
                "model": services.settings.model}

    @app.post("/api/chat", openapi_extra=chat_request(max_question_chars), responses=CHAT_RESPONSES, response_class=Response)
    async def chat(request: Request) -> Response:
        body = await read_limited(request, MAX_CHAT_BODY_BYTES)
        if body is None:
            return error(413, "too-large", f"The request body is over {MAX_CHAT_BODY_BYTES} bytes: send only the question.")
        outcome = await answer_question(services_of(request), caller_or_none(request), body)
        if isinstance(outcome, Refusal):
            return error(outcome.status, outcome.code, outcome.message, **outcome.extra)
        return ExchangeStream(outcome.frames)  # type: ignore[return-value]

    @app.get("/api/chat/budget", responses=refusals(401, *ALWAYS))
    async def budget(request: Request, caller: Caller = Depends(signed_in)) -> Response:
        services = services_of(request)
        return JSONResponse(await budget_status(services.dynamo, services.settings, caller.id))


def _conversation_routes(app: FastAPI) -> None:
    @app.get("/api/conversations", responses=refusals(401, 403, *ALWAYS))
    async def list_conversations(request: Request, caller: Caller = may_chat) -> Response:
        return JSONResponse({"conversations": await services_of(request).conversations.list_for_owner(caller.id)})

    @app.get("/api/conversations/{conversation_id}", responses=refusals(401, 403, 404, *ALWAYS))
    async def read_conversation(conversation_id: str, request: Request, caller: Caller = may_chat) -> Response:
        store = services_of(request).conversations
        item = await store.get_owned(conversation_id, caller.id) if is_conversation_id(conversation_id) else None
        if item is None:
            return error(404, "not-found", "No such conversation.")
        items = await store.read_items(conversation_id)
        return JSONResponse({"conversation": public_conversation(item), "messages": [public_message(i) for i in items]})

    @app.post("/api/conversations/{conversation_id}/share", responses=refusals(401, 403, 404, *ALWAYS))
    async def share(conversation_id: str, request: Request, caller: Caller = may_chat) -> Response:
        return await _set_shared(services_of(request), conversation_id, caller, True)

    @app.delete("/api/conversations/{conversation_id}/share", responses=refusals(401, 403, 404, *ALWAYS))
    async def unshare(conversation_id: str, request: Request, caller: Caller = may_chat) -> Response:
        return await _set_shared(services_of(request), conversation_id, caller, False)


async def _set_shared(services: Services, conversation_id: str, caller: Caller, shared: bool) -> Response:
    if not is_conversation_id(conversation_id):
        return error(404, "not-found", "No such conversation.")
    result = await services.conversations.set_shared(conversation_id, caller.id, shared)
    if result is None:
        return error(404, "not-found", "No such conversation.")
    return JSONResponse({"conversation": result, "share_url": f"/chat/shared/{conversation_id}" if shared else None})


def _trace_routes(app: FastAPI) -> None:
    @app.get("/api/traces/latest", responses=refusals(401, 403, 404, *ALWAYS))
    async def latest_trace(request: Request, caller: Caller = may_read_traces) -> Response:
        trace = await services_of(request).traces.latest(caller.id)
        return JSONResponse(trace) if trace else error(404, "not-found", "No runs yet.")

    @app.get("/api/traces/{run_id}", responses=refusals(401, 403, 404, *ALWAYS))
    async def trace(run_id: str, request: Request, caller: Caller = may_read_traces) -> Response:
        found = await services_of(request).traces.get(run_id, caller.id) if is_answer_run_id(run_id) else None
        return JSONResponse(found) if found else error(404, "not-found", "No such run.")


def _run_routes(app: FastAPI) -> None:
    """The run list every result links to: the data tools, through the same permission check."""

    @app.get("/api/runs", responses=refusals(400, 401, 403, *ALWAYS))
    async def runs(request: Request, caller: Caller = Depends(signed_in)) -> Response:
        return await _tool_route(services_of(request), caller, "list_runs", dict(request.query_params))

    @app.get("/api/runs/{run_id}", responses=refusals(400, 401, 403, 404, *ALWAYS))
    async def run(run_id: str, request: Request, caller: Caller = Depends(signed_in)) -> Response:
        if not is_benchmark_run_id(run_id):
            return error(404, "not-found", "No such run.")
        return await _tool_route(services_of(request), caller, "get_run", {"run_id": run_id})


async def _tool_route(services: Services, caller: Caller, tool_name: str, args: dict[str, Any]) -> Response:
    if "limit" in args:
        args["limit"] = int(args["limit"]) if str(args["limit"]).isdigit() else args["limit"]
    try:
        result = await services.registry.execute(tool_name, args, services.tool_context(caller))
    except ToolRefused:
        return error(403, "forbidden", "You do not have the permission to read the benchmark's runs.")
    except ToolNotFound as exc:
        return error(404, "not-found", str(exc))
    except ToolError as exc:
        return error(400, "bad-request", str(exc))
    return JSONResponse(result)


def _page_routes(app: FastAPI) -> None:
    def page(name: str, request: Request) -> HTMLResponse:
        html = resources.files("chat_function").joinpath(f"static/{name}").read_text()
        return HTMLResponse(html.replace("{{BOT_NAME}}", services_of(request).settings.bot_name))

    @app.get("/chat/runs", response_class=HTMLResponse, responses=HTML)
    async def runs_page(request: Request) -> HTMLResponse:
        return page("runs.html", request)

    @app.get("/chat", response_class=HTMLResponse, responses=HTML)
    async def chat_page(request: Request) -> HTMLResponse:
        return page("chat.html", request)

    for name in ASSETS:  # one route per asset, as API Gateway routes them
        app.get(f"/static/{name}", response_class=Response, responses=asset_response(ASSETS[name]))(_asset_route(name))


def _asset_route(name: str):
    async def shared_asset() -> Response:
        text, media_type = asset(name)
        return Response(text, media_type=media_type)

    return shared_asset
