"""The chat function's FastAPI app: routes only. Each maps HTTP to a use case of the core and back;
the answer itself is `groundchat.chat.answer`, and its frames are rendered as SSE here."""
from __future__ import annotations

import html
from importlib import resources
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from fastapi import Depends, FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, JSONResponse, Response

from chat_function.trace_context import JoinCallerTrace
from chat_function.ai_sdk_chat import add_ai_sdk_chat_route
from chat_function.answer_routes import add_answer_routes
from chat_function.callers import Refused, allowed, caller_or_none, services_of, signed_in, visit_of
from chat_function.public_mode import add_public_script_route, keep_visitor_session, public_status, refuse_to_start_with_a_hole
from chat_function.errors import error, store_failure
from chat_function.framework_errors import add_typed_http_errors
from chat_function.json_answer import json_answer, wants_json
from chat_function.limits import chat_body_limit, read_limited, too_large_message
from chat_function.mcp_route import add_mcp_routes
from chat_function.uploads import read_question
from chat_function.page_scripts import add_page_script_routes
from chat_function.openapi import ALWAYS, CHAT_RESPONSES, HTML, IMAGE_RESPONSES, asset_response, document_chat_request, refusals
from chat_function.server_errors import TypedServerErrors
from chat_function.slash_redirect import RelativeSlashRedirect
from chat_function.spending_settings import publish_at_start
from chat_function.signin import add_sign_in_routes
from chat_function.streaming import ExchangeStream
from chat_function.snapstart import add_after_restore_route
from groundchat.auth.callers import CHAT_USE, RUNS_READ, TRACES_READ, Caller
from groundchat.ids import is_answer_run_id, is_benchmark_run_id, is_conversation_id
from groundchat.services import Services, build_services
from groundchat.store.conversation_images import is_sha256, read_image
from groundchat.store.conversations import ConversationBusy, public_conversation, public_message
from groundchat.store.feedback import public_feedback, reasons as feedback_reasons
from groundchat.tools.base import ToolError, ToolNotFound, ToolRefused
from page_assets.assets import ASSETS, asset
from groundchat.web.pages import fill, sign_in_kind, tool_drawers
from groundchat.web.security_headers import SecurityHeaders, security_headers

may_chat = Depends(allowed(CHAT_USE))
may_read_traces = Depends(allowed(TRACES_READ))
may_read_runs = Depends(allowed(RUNS_READ))


def create_app(services: Services | None = None) -> FastAPI:
    app = FastAPI(title="groundchat", docs_url=None, redoc_url=None)
    app.state.services = services or build_services()
    refuse_to_start_with_a_hole(app.state.services.settings)  # public mode without a guard never serves
    publish_at_start(app)  # the caps operators' commands act on are the server's
    app.add_middleware(TypedServerErrors)
    # Starlette's own redirect is absolute and loses an API stage (chat_function/slash_redirect.py).
    app.router.redirect_slashes = False
    app.add_middleware(RelativeSlashRedirect, router=app.router)
    origins = [o.strip() for o in app.state.services.settings.allowed_origins.split(",") if o.strip()]
    if origins:
        # Only the configured origins; the page itself is same-origin and needs none.
        app.add_middleware(CORSMiddleware, allow_origins=origins, allow_methods=["GET", "POST", "DELETE"],
                           # MCP's own headers too: a browser-based MCP host sends them to /mcp.
                           allow_headers=["authorization", "content-type", "accept", "mcp-protocol-version",
                                          "mcp-session-id", "mcp-method", "mcp-name", "last-event-id", "traceparent",
                                          "tracestate"],
                           expose_headers=["mcp-session-id", "www-authenticate"], max_age=600)
    app.add_middleware(JoinCallerTrace)  # outermost: every route runs in the caller's trace

    @app.exception_handler(Refused)
    async def refused(request: Request, exc: Refused) -> Response:
        return error(exc.status, exc.code, exc.message)

    app.add_exception_handler(BotoCoreError, store_failure)
    app.add_exception_handler(ClientError, store_failure)

    _chat_routes(app, app.state.services.settings.max_question_chars)
    add_ai_sdk_chat_route(app, app.state.services.settings.max_question_chars)  # the same answer for the AI SDK's useChat: its body, its stream
    _conversation_routes(app)
    add_answer_routes(app)  # reconnect, stop, feedback
    add_after_restore_route(app)  # SnapStart: the Web Adapter's call after a restore
    _trace_routes(app)
    _run_routes(app)
    add_mcp_routes(app)  # /mcp: the same tools for MCP hosts
    add_sign_in_routes(app)  # dev auth mode only
    if app.state.services.settings.auth_mode == "oidc":
        # Imported only here: a deployment without the OIDC sign-in never loads its modules.
        from chat_function.oidc_signin import add_oidc_sign_in_routes

        add_oidc_sign_in_routes(app)  # the page's sign-in with the provider
    add_public_script_route(app)  # the human-check widget's loader (does nothing in private mode)
    _page_routes(app)
    add_typed_http_errors(app)  # Starlette's own 404/405 and FastAPI's 422 in our error shape
    # Added last, so outermost: every response gets them, refusals, redirects and CORS answers too.
    app.add_middleware(SecurityHeaders, headers=security_headers(app.state.services.settings))
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
                "model": services.settings.model, **public_status(services.settings),
                # Said before the first question when the offline answerer answers: what it can and cannot
                # do, and the setting that brings a language model. Absent for any other model.
                **({"answerer_notice": notice} if (notice := services.answerer_notice()) else {}),
                # What a 👎 may say was wrong: the page's choices (data/feedback_reasons.json).
                "feedback_reasons": [{"id": r.id, "label": r.label} for r in feedback_reasons()]}

    @app.get("/api/chat/images")
    async def images(request: Request) -> dict[str, Any]:
        """Whether the page may offer attachments (the model has a published image token bound),
        and the limits each question's images are held to; a chat that is not configured takes none."""
        from groundchat.attachments.question import images_status  # with the first use: not at a cold start

        services = services_of(request)
        return images_status(services.settings, services.model if services.model_status()[0] else None)

    document_chat_request(app, max_question_chars, app.state.services.settings.search_max_excerpts)

    @app.post("/api/chat", responses=CHAT_RESPONSES, response_class=Response)
    async def chat(request: Request) -> Response:
        """A question as JSON, or the same fields as multipart/form-data with the question's images:
        `message`, `conversation_id`, up to 5 `image` files (PNG, JPEG, WebP, GIF) and one `alt` text per image."""
        limit = chat_body_limit(request, services_of(request).settings)
        body = await read_limited(request, limit)
        if body is None:
            return error(413, "too-large", too_large_message(limit))
        body, uploads = await read_question(request, body)
        # Imported on the first question, not at a cold start (~25 ms): no other route needs the answer
        # use case, and a question pays seconds for the model anyway.
        from groundchat.chat.answer import Refusal, answer_question

        # Idempotency-Key: a repeat of the request follows its first answer (chat/follow.py).
        outcome = await answer_question(services_of(request), caller_or_none(request), body, visit_of(request), uploads,
                                        request_key=request.headers.get("idempotency-key"))
        if isinstance(outcome, Refusal):
            refused = error(outcome.status, outcome.code, outcome.message, **outcome.extra)
            refused.headers.update(outcome.headers)
            return keep_visitor_session(refused, outcome.visitor_session, request)
        if wants_json(request, body):
            answered = await json_answer(outcome.frames, services_of(request).answerer_notice())
            return keep_visitor_session(JSONResponse(answered.model_dump(mode="json"), status_code=answered.status_code),
                                        outcome.visitor_session, request)
        stream = ExchangeStream(outcome.frames, services_of(request).settings.sse_heartbeat_seconds)
        return keep_visitor_session(stream, outcome.visitor_session, request)  # type: ignore[return-value]

    @app.get("/api/chat/budget", responses=refusals(401, *ALWAYS))
    async def budget(request: Request, caller: Caller = Depends(signed_in)) -> Response:
        from groundchat.spending.operator import budget_status  # with the first use: not at a cold start

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
        mine = await services_of(request).feedback.mine(conversation_id, caller.id)
        # The owner's view: each answer's cost and Details too (`cost`, `cost_text`, `details` on its
        # last assistant message; absent on answers stored before they were kept), and the owner's
        # own rating of it (`feedback`).
        messages = [public_message(i, answer_record=True) for i in items]
        for message in messages:
            if message["seq"] in mine:
                message["feedback"] = public_feedback(mine[message["seq"]])
        return JSONResponse({"conversation": public_conversation(item), "messages": messages})

    @app.get("/api/conversations/{conversation_id}/images/{sha256}", response_class=Response, responses=IMAGE_RESPONSES)
    async def conversation_image(conversation_id: str, sha256: str, request: Request, caller: Caller = may_chat) -> Response:
        """One image of the caller's conversation, by the hash its message names (thumbnails)."""
        store = services_of(request).conversations
        item = await store.get_owned(conversation_id, caller.id) if is_conversation_id(conversation_id) else None
        found = await read_image(store, conversation_id, sha256) if item is not None and is_sha256(sha256) else None
        if found is None:
            return error(404, "not-found", "No such image.")
        # Private: the same bytes are behind the owner's token; nosniff: never anything but an image.
        return Response(found[0], media_type=found[1], headers={"cache-control": "private, max-age=3600",
                                                                 "x-content-type-options": "nosniff"})

    @app.post("/api/conversations/{conversation_id}/share", responses=refusals(401, 403, 404, *ALWAYS))
    async def share(conversation_id: str, request: Request, caller: Caller = may_chat) -> Response:
        return await _set_shared(services_of(request), conversation_id, caller, True)

    @app.delete("/api/conversations/{conversation_id}/share", responses=refusals(401, 403, 404, *ALWAYS))
    async def unshare(conversation_id: str, request: Request, caller: Caller = may_chat) -> Response:
        return await _set_shared(services_of(request), conversation_id, caller, False)

    @app.delete("/api/conversations/{conversation_id}", responses=refusals(401, 403, 404, 409, *ALWAYS))
    async def delete(conversation_id: str, request: Request, caller: Caller = may_chat) -> Response:
        """The owner deletes the conversation: messages, share link and run records go; usage rows
        (money) stay. Someone else's is a 404 like an unknown one; an answer in progress, a 409.
        204: nothing was left to read, but what remained of the owner's under this id is gone now
        (a deletion a crash interrupted, one already done, a first question that went unanswered)."""
        from groundchat.store.deletion import FINISHED, delete_conversation  # with the first use: not at a cold start

        try:
            services = services_of(request)
            deleted = await delete_conversation(services.dynamo, conversation_id, caller.id, services.deletion_cleaners()) \
                if is_conversation_id(conversation_id) else None
        except ConversationBusy:
            return error(409, "conversation-busy", "An answer to this conversation is in progress: wait for it, then delete.")
        if deleted is None:
            return error(404, "not-found", "No such conversation.")
        if deleted == FINISHED:
            return Response(status_code=204)
        return JSONResponse({"deleted": deleted.public()})


async def _set_shared(services: Services, conversation_id: str, caller: Caller, shared: bool) -> Response:
    if not is_conversation_id(conversation_id):
        return error(404, "not-found", "No such conversation.")
    result = await services.conversations.set_shared(conversation_id, caller.id, shared)
    if result is None:
        return error(404, "not-found", "No such conversation.")
    return JSONResponse({"conversation": result, "share_url": f"/chat/shared/{conversation_id}" if shared else None})


def _trace_routes(app: FastAPI) -> None:
    async def latest_trace(request: Request, caller: Caller = may_read_traces) -> Response:
        """The caller's latest run."""
        trace = await services_of(request).traces.latest(caller.id)
        return JSONResponse(trace) if trace else error(404, "not-found", "No runs yet.")

    app.get("/api/traces/latest", responses=refusals(401, 403, 404, *ALWAYS))(latest_trace)
    # Seed 002 names it without the /api prefix: the same route, for its clients as written.
    app.get("/traces/latest", responses=refusals(401, 403, 404, *ALWAYS), operation_id="latest_trace_seed_002")(latest_trace)

    @app.get("/api/traces/{run_id}", responses=refusals(401, 403, 404, *ALWAYS))
    async def trace(run_id: str, request: Request, caller: Caller = may_read_traces) -> Response:
        services = services_of(request)
        found = await services.traces.get(run_id, caller.id) if is_answer_run_id(run_id) else None
        if not found:
            return error(404, "not-found", "No such run.")
        if found.get("conversation_id"):  # how readers rated the answer, kept beside its messages
            rated = await services.feedback.for_run(str(found["conversation_id"]), run_id)
            found["feedback"] = [{**public_feedback(f), "seq": int(f["seq"])} for f in rated]
        return JSONResponse(found)


def _run_routes(app: FastAPI) -> None:
    """The run list every result links to: the data tools, through the same permission check."""

    @app.get("/api/runs", responses=refusals(400, 401, 403, *ALWAYS))
    async def runs(request: Request, caller: Caller = may_read_runs) -> Response:
        """A page of the run list, newest first, with the count of every run the filter matches
        and the `next` / `previous` page tokens (`page=`)."""
        # Imported on the first run list, not at a cold start (~20 ms of result shapes only this route uses).
        from groundchat.web.run_pages import page_args, run_page

        services = services_of(request)
        try:
            return JSONResponse(await run_page(services.tool_context(caller), page_args(dict(request.query_params))))
        except ToolError as exc:
            return error(400, "bad-request", str(exc))

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
        template = resources.files("chat_function").joinpath(f"static/{name}").read_text()
        # The bot's name is configuration, not markup: escaped for the text and attributes it fills.
        settings = services_of(request).settings
        return HTMLResponse(fill(template, {"BOT_NAME": html.escape(settings.bot_name),
                                            "SIGN_IN": sign_in_kind(settings.auth_mode),
                                            "TOOL_DRAWERS": tool_drawers()}))

    @app.get("/chat/runs", response_class=HTMLResponse, responses=HTML)
    async def runs_page(request: Request) -> HTMLResponse:
        return page("runs.html", request)

    @app.get("/chat/trace", response_class=HTMLResponse, responses=HTML)
    async def trace_page(request: Request) -> HTMLResponse:
        """One answer's trace, readable (its data is /api/traces/<run id>, for traces.read)."""
        return page("trace.html", request)

    @app.get("/chat", response_class=HTMLResponse, responses=HTML)
    async def chat_page(request: Request) -> HTMLResponse:
        return page("chat.html", request)

    add_page_script_routes(app)
    for name in ASSETS:  # one route per asset, as API Gateway routes them
        app.get(f"/static/{name}", response_class=Response, responses=asset_response(ASSETS[name]))(_asset_route(name))


def _asset_route(name: str):
    async def shared_asset() -> Response:
        text, media_type = asset(name)
        return Response(text, media_type=media_type)

    return shared_asset
