"""One tool call from an MCP host: the chat's registry and `can`, its search charge, and a trace.

A host calls our tools directly, outside any answer: there is no model step to reserve, but each
search is charged by the same `SearchCharge` an answer uses (under this call's own run), a cap
reached is said in the result instead of raised, and every call is a run with a trace of its own,
readable at /api/traces/<run id> like an answer's.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Literal

from groundchat import telemetry
from groundchat.chat.steps import ToolStep
from groundchat.telemetry import answer_spans
from groundchat.telemetry import attributes as attr
from groundchat.grounding.citations import refs_in_results
from groundchat.grounding.result_ceiling import fit_result
from groundchat.mcp.search_meta import SearchMetaInvalid, search_preferences
from groundchat.money import cost_text, money_text
from groundchat.recall.plan import TOOL_NAME as RECALL_TOOL
from groundchat.spending.step_guard import SpendCapReached
from groundchat.store.availability import store_unavailable
from groundchat.tools.base import ToolError, ToolRefused

if TYPE_CHECKING:
    from groundchat.auth.callers import Caller
    from groundchat.json_shapes import JsonObject, JsonValue
    from groundchat.services import Services
    from groundchat.tools.base import Tool

# Tools that mean something only inside one of our answers: `show_view` draws on our page from the
# numbers that same answer's data tools returned, and the recall tool runs only when a question's
# recall plan allows it. A host is offered neither, and a call naming one is refused like a denied tool.
ANSWER_ONLY = frozenset({"show_view", RECALL_TOOL})

Outcome = Literal["complete", "refused", "invalid", "spend-cap", "error"]
TOOL_FAILED = "tool-failed"


@dataclass(frozen=True)
class ToolCallResult:
    run_id: str
    outcome: Outcome
    # The tool's result as the model would see it in an answer (under the same ceiling); None on error.
    result: JsonValue
    error: str | None
    cost: Decimal  # what this call was charged: its searches

    @property
    def cost_text(self) -> str:
        return cost_text(self.cost)


class McpTools:
    """The deployment's tools as an MCP host sees them, for one caller at a time."""

    def __init__(self, services: Services) -> None:
        self._services = services

    async def offered(self, caller: Caller) -> list[Tool]:
        return [t for t in await self._services.registry.offered(caller) if t.name not in ANSWER_ONLY]

    async def call(self, caller: Caller, name: str, args: JsonObject, trace_carrier: dict[str, str] | None = None,
                   meta: JsonObject | None = None) -> ToolCallResult:
        """`trace_carrier`: the host's `traceparent` (MCP `_meta`); the call's span joins its trace.
        `meta`: the request's `_meta`, where a host may narrow the call's searches (mcp/search_meta.py)."""
        with telemetry.joined(trace_carrier):
            span = answer_spans.start_tool(telemetry.NO_SPAN, None, name, args)
            with telemetry.active(span):
                called = await self._call(caller, name, args, meta)
        span.set(attr.RUN_ID, called.run_id)
        span.set(attr.ANSWER_COST, str(called.cost))
        answer_spans.end_tool(span, _step_outcome(called.outcome), called.result)
        return called

    async def _call(self, caller: Caller, name: str, args: JsonObject, meta: JsonObject | None) -> ToolCallResult:
        services = self._services
        ctx = services.tool_context(caller)  # a fresh run: its searches are charged under it
        started_at, started = time.time(), time.perf_counter()
        outcome: Outcome = "complete"
        result: JsonValue = None
        error = detail = None
        try:
            if name in ANSWER_ONLY:
                raise ToolRefused(f"tool {name!r} is not available to this caller")
            try:
                ctx.search = search_preferences(meta, services.settings.search_max_excerpts)
            except SearchMetaInvalid as exc:
                raise ToolError(str(exc)) from None
            value = await services.registry.execute(name, args, ctx)
            result = fit_result(value, services.settings.max_tool_result_chars)
        except (ToolRefused, ToolError) as exc:
            outcome, error = ("refused" if isinstance(exc, ToolRefused) else "invalid"), str(exc)
        except SpendCapReached as cap:
            outcome, error, detail = "spend-cap", f"spend-cap: {cap.message}", f"SpendCapReached: {cap.scope}"
        except Exception as exc:  # the host sees a plain error; the trace keeps what was raised
            outcome, detail = "error", f"{type(exc).__name__}: {exc}"
            why = "its data could not be reached" if store_unavailable(exc) else "it failed inside"
            error = f"{TOOL_FAILED}: {name} could not run this time ({why}); try again later"
        cost = sum(ctx.answer.search_charges, Decimal(0))
        step = ToolStep(id=ctx.run_id, name=name, args=args, outcome=_step_outcome(outcome),
                        latency_ms=round((time.perf_counter() - started) * 1000, 2),
                        debug=ctx.answer.take_debug(), error_detail=detail)
        record: JsonObject = {**step.model_dump(exclude_none=True), "client": "mcp", "cost": money_text(cost),
                              "cost_text": cost_text(cost), "summary": _summary(name, result, error)}
        await services.traces.put(
            run_id=ctx.run_id, caller=caller.id, conversation_id="", started_at=started_at, outcome=outcome,
            steps=[record], failure={"class": outcome, "reason": detail or error} if error else None,
            question=f"MCP {name} {json.dumps(args, ensure_ascii=False, default=str)}",
        )
        return ToolCallResult(run_id=ctx.run_id, outcome=outcome, result=result, error=error, cost=cost)


_STEP_OUTCOMES: dict[str, Literal["ok", "refused", "invalid"]] = {"complete": "ok", "refused": "refused", "invalid": "invalid"}


def _step_outcome(outcome: Outcome) -> Literal["ok", "refused", "invalid", "error"]:
    # A trace step says how the tool ran; a cap reached stopped it from running, as a failure does.
    return _STEP_OUTCOMES.get(outcome, "error")


def _summary(name: str, result: JsonValue, error: str | None) -> JsonObject:
    """What the call returned, in a line of the trace: its outcome word, size and the refs it carried."""
    if error is not None:
        return {"error": error}
    refs: list[JsonValue] = [*sorted(refs_in_results([{"name": name, "result": result}]))]
    summary: JsonObject = {"refs": refs}
    if isinstance(result, dict):
        if isinstance(result.get("outcome"), str):
            summary["outcome"] = result["outcome"]
        keys: list[JsonValue] = [*sorted(result)]
        summary["keys"] = keys
    return summary
