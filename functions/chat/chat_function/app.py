"""The chat function's FastAPI app. It translates frames to SSE; the core does everything else."""
from __future__ import annotations

import json
import uuid
from decimal import Decimal
from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chat_function.errors import error
from chat_function.streaming import ExchangeStream
from groundchat.auth.callers import CHAT_USE, TRACES_READ, Caller
from groundchat.spending.budget_guard import BudgetGuard
from groundchat.spending.operator import budget_status
from groundchat.spending.guard import SpendCapReached
from groundchat.chat.history import policy_for, shorten
from groundchat.observability import record_answer, record_refusal
from groundchat.chat.loop import Exchange, LoopLimits, run_exchange
from groundchat.spending.prices import PricingError, price_for
from groundchat.chat.prompts import system_prompt
from groundchat.services import Services, build_services
from groundchat.web.assets import asset
from groundchat.store.conversations import ConversationBusy, new_conversation_id, public_conversation, public_message
from groundchat.models.messages import Message, ModelRequest


SIGN_IN = "Sign in: send a bearer token (locally: `groundchat token USER`)."


class ChatBody(BaseModel):
    """Exactly what the browser may send: a question for a conversation. Nothing else."""

    model_config = ConfigDict(extra="forbid")
    conversation_id: str | None = Field(default=None, min_length=1, max_length=64)
    message: str


def create_app(services: Services | None = None) -> FastAPI:
    app = FastAPI(title="groundchat", docs_url=None, redoc_url=None)
    app.state.services = services or build_services()
    origins = [o.strip() for o in app.state.services.settings.allowed_origins.split(",") if o.strip()]
    if origins:
        # Only the configured origins; the page itself is same-origin and needs none.
        app.add_middleware(CORSMiddleware, allow_origins=origins, allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["authorization", "content-type"], max_age=600)

    def svc() -> Services:
        return app.state.services

    async def caller_of(request: Request) -> Caller | None:
        return svc().verifier.caller_from_header(request.headers.get("authorization"))

    async def guard(request: Request, permission: str) -> Caller | Response:
        caller = await caller_of(request)
        if caller is None:
            return error(401, "unauthenticated", SIGN_IN)
        if not await svc().can(permission, caller):
            return error(403, "forbidden", f"You do not have the permission {permission!r}.")
        return caller

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/api/chat/status")
    async def status() -> dict[str, Any]:
        enabled, reason, how = svc().model_status()
        return {"enabled": enabled, "reason": reason, "how_to_fix": how, "bot_name": svc().settings.bot_name,
                "model": svc().settings.model}

    @app.post("/api/chat")
    async def chat(request: Request) -> Response:
        s = svc()
        settings = s.settings
        enabled, reason, how = s.model_status()
        if not enabled:
            return error(503, "chat-not-configured", f"The chat is not configured: {reason}", how_to_fix=how)
        price_id = _price_id(s)
        try:
            price_for(price_id, settings)
        except PricingError as exc:  # an unpriced model is never called: its spending could not be capped
            return error(503, "chat-not-configured", f"The chat is not configured: {exc}", how_to_fix="Add the model to GROUNDCHAT_PRICES_FILE.")
        caller = await guard(request, CHAT_USE)
        if isinstance(caller, Response):
            return caller
        try:
            body = ChatBody.model_validate(json.loads(await request.body() or b"null"))
        except (json.JSONDecodeError, ValidationError) as exc:
            return error(400, "bad-request", _body_problem(exc))
        question = body.message.strip()
        if not question:
            return error(400, "bad-request", "message is empty")
        if len(body.message) > settings.max_question_chars:
            return error(400, "bad-request", f"message is over {settings.max_question_chars} characters")
        run_id = uuid.uuid4().hex
        existing = None
        conversation_id = body.conversation_id
        if conversation_id is not None:
            existing = await s.conversations.get_owned(conversation_id, caller.id)
            if existing is None:
                return error(404, "not-found", "No such conversation.")
            if int(existing.get("message_count", 0)) >= settings.max_conversation_messages:
                return error(409, "conversation-full",
                             f"This conversation has reached {settings.max_conversation_messages} messages: start a new conversation.")
            try:
                await s.conversations.claim(conversation_id, run_id)
            except ConversationBusy:
                return error(409, "conversation-busy", "Another answer to this conversation is in progress: wait for it, then ask again.")
            existing = await s.conversations.get(conversation_id)
            history = await s.conversations.read_history(conversation_id)
        else:
            conversation_id = new_conversation_id()
            history = []
        offered = [t.spec() for t in await s.registry.offered(caller)]
        system = system_prompt(settings.bot_name, [t.name for t in offered])
        # 429 before any model call: the first step's worst case is reserved now, against both
        # caps, and that reservation is the one step 0 uses.
        spend = BudgetGuard(s.dynamo, settings, caller.id, conversation_id, run_id, price_id)
        # What of the history the model will see: the reservation is for that, not for all of it.
        shaped = shorten(history, Message(role="user", content=question), system, offered, policy_for(settings.history_profile))
        first_step = ModelRequest(
            system=system,
            messages=[*shaped.messages, Message(role="user", content=question)],
            tools=offered,
            max_output_tokens=settings.max_output_tokens,
        )
        try:
            if shaped.outcome != "failed":  # a request too large to send calls no model: nothing to reserve
                await spend.precheck(first_step)
        except SpendCapReached as cap:
            if existing is not None:
                await s.conversations.release(conversation_id, run_id)
            return error(429, "spend-cap", cap.message, scope=cap.scope, resets_at=cap.resets_at)
        ctx = s.tool_context(caller, run_id, conversation_id)
        ctx.charge_search = spend.charge_search
        frames = run_exchange(
            model=s.model,
            system=system,
            registry=s.registry,
            ctx=ctx,
            history=history,
            question=question,
            conversation_id=conversation_id,
            run_id=run_id,
            guard=spend,
            limits=LoopLimits(settings.max_steps, settings.max_output_tokens, settings.max_tool_result_chars),
            after_answer=_after_answer_checks(),
            commit=_committer(s, caller, existing, question),
            on_finish=_finisher(s, caller, existing, spend),
            history_shortening=shaped,
        )
        return ExchangeStream(frames)  # type: ignore[return-value]

    @app.get("/api/chat/budget")
    async def budget(request: Request) -> Response:
        caller = await caller_of(request)
        if caller is None:
            return error(401, "unauthenticated", SIGN_IN)
        return JSONResponse(await budget_status(svc().dynamo, svc().settings, caller.id))

    @app.get("/api/conversations")
    async def list_conversations(request: Request) -> Response:
        caller = await guard(request, CHAT_USE)
        if isinstance(caller, Response):
            return caller
        return JSONResponse({"conversations": await svc().conversations.list_for_owner(caller.id)})

    @app.get("/api/conversations/{conversation_id}")
    async def read_conversation(conversation_id: str, request: Request) -> Response:
        caller = await guard(request, CHAT_USE)
        if isinstance(caller, Response):
            return caller
        item = await svc().conversations.get_owned(conversation_id, caller.id)
        if item is None:
            return error(404, "not-found", "No such conversation.")
        items = await svc().conversations.read_items(conversation_id)
        return JSONResponse({"conversation": public_conversation(item), "messages": [public_message(i) for i in items]})

    @app.post("/api/conversations/{conversation_id}/share")
    async def share(conversation_id: str, request: Request) -> Response:
        return await _set_shared(conversation_id, request, True)

    @app.delete("/api/conversations/{conversation_id}/share")
    async def unshare(conversation_id: str, request: Request) -> Response:
        return await _set_shared(conversation_id, request, False)

    async def _set_shared(conversation_id: str, request: Request, shared: bool) -> Response:
        caller = await guard(request, CHAT_USE)
        if isinstance(caller, Response):
            return caller
        result = await svc().conversations.set_shared(conversation_id, caller.id, shared)
        if result is None:
            return error(404, "not-found", "No such conversation.")
        return JSONResponse({"conversation": result, "share_url": f"/chat/shared/{conversation_id}" if shared else None})

    @app.get("/api/traces/latest")
    async def latest_trace(request: Request) -> Response:
        caller = await guard(request, TRACES_READ)
        if isinstance(caller, Response):
            return caller
        trace = await svc().traces.latest(caller.id)
        return JSONResponse(trace) if trace else error(404, "not-found", "No runs yet.")

    @app.get("/api/traces/{run_id}")
    async def trace(run_id: str, request: Request) -> Response:
        caller = await guard(request, TRACES_READ)
        if isinstance(caller, Response):
            return caller
        found = await svc().traces.get(run_id, caller.id)
        return JSONResponse(found) if found else error(404, "not-found", "No such run.")

    @app.get("/api/runs")
    async def runs(request: Request) -> Response:
        """The run list every result links to: the `list_runs` tool, through the same check."""
        return await _tool_route(request, "list_runs", dict(request.query_params))

    @app.get("/api/runs/{run_id}")
    async def run(run_id: str, request: Request) -> Response:
        return await _tool_route(request, "get_run", {"run_id": run_id})

    async def _tool_route(request: Request, tool_name: str, args: dict[str, Any]) -> Response:
        from groundchat.tools.base import ToolError, ToolRefused

        caller = await caller_of(request)
        if caller is None:
            return error(401, "unauthenticated", SIGN_IN)
        if "limit" in args:
            args["limit"] = int(args["limit"]) if str(args["limit"]).isdigit() else args["limit"]
        try:
            result = await svc().registry.execute(tool_name, args, svc().tool_context(caller, run_id="page"))
        except ToolRefused:
            return error(403, "forbidden", "You do not have the permission to read the benchmark's runs.")
        except ToolError as exc:
            return error(400, "bad-request", str(exc))
        return JSONResponse(result)

    @app.get("/chat/runs", response_class=HTMLResponse)
    async def runs_page() -> HTMLResponse:
        html = resources.files("chat_function").joinpath("static/runs.html").read_text()
        return HTMLResponse(html.replace("{{BOT_NAME}}", svc().settings.bot_name))

    @app.get("/chat", response_class=HTMLResponse)
    async def page() -> HTMLResponse:
        html = resources.files("chat_function").joinpath("static/chat.html").read_text()
        return HTMLResponse(html.replace("{{BOT_NAME}}", svc().settings.bot_name))

    @app.get("/static/transcript.js")
    async def transcript_js() -> Response:
        text, media_type = asset("transcript.js")
        return Response(text, media_type=media_type)

    @app.get("/static/transcript.css")
    async def transcript_css() -> Response:
        text, media_type = asset("transcript.css")
        return Response(text, media_type=media_type)

    return app


def _after_answer_checks() -> list:
    from groundchat.grounding.citations import citation_check

    return [citation_check]


def _committer(s: Services, caller: Caller, existing: dict[str, Any] | None, question: str):
    async def commit(ex: Exchange) -> None:
        await s.conversations.commit_exchange(
            conversation_id=ex.conversation_id, owner=caller.id, run_id=ex.run_id, existing=existing,
            messages=ex.new_messages, annotations=ex.annotations, title=question,
        )

    return commit


def _price_id(s: Services) -> str:
    """The price table key: the configured model string (adapters carry it as `price_id`)."""
    return getattr(s.model, "price_id", None) or s.settings.model.strip()


def _finisher(s: Services, caller: Caller, existing: dict[str, Any] | None, spend: BudgetGuard | None = None):
    async def finish(ex: Exchange) -> None:
        if spend is not None:
            await spend.release_unused()  # the precheck's reservation, if the run ended before step 0
        if existing is not None:
            # A commit already cleared this run's claim; any other ending must not leave the
            # conversation blocked. The release is conditional on the claim, so it is safe either way.
            await s.conversations.release(ex.conversation_id, ex.run_id)
        await s.traces.put(
            run_id=ex.run_id, caller=caller.id, conversation_id=ex.conversation_id, started_at=ex.started_at,
            outcome=ex.done_reason, steps=ex.steps, failure=ex.failure, question=ex.question,
        )
        _record_metrics(ex)

    return finish


def _record_metrics(ex: Exchange) -> None:
    model_steps = [step for step in ex.steps if step.get("kind") == "model"]
    cost = sum((Decimal(str(step["cost"])) for step in model_steps if step.get("cost") is not None), Decimal(0))
    input_tokens = sum(step.get("input_tokens") or 0 for step in model_steps)
    output_tokens = sum(step.get("output_tokens") or 0 for step in model_steps)
    record_answer(cost, input_tokens + output_tokens, input_tokens=input_tokens, output_tokens=output_tokens)
    if ex.done_reason in ("spend-cap", "unmeasurable-cost", "error", "too-large"):
        record_refusal(ex.done_reason)


def _body_problem(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return "the body is not JSON"
    assert isinstance(exc, ValidationError)
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "body"
        problems.append(f"{where}: {'not allowed (send only conversation_id and message)' if err['type'] == 'extra_forbidden' else err['msg']}")
    return "; ".join(problems)


def _lazy_app() -> FastAPI:
    return create_app()
