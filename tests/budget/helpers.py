"""Building blocks the spending tests share: a one-tool registry and the app's order of checks."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from pydantic import BaseModel

from groundchat.auth.callers import Caller
from groundchat.spending.budget_guard import BudgetGuard
from groundchat.spending.guard import SpendCapReached
from groundchat.chat.loop import LoopLimits, run_exchange
from groundchat.store import budget_counters as bc
from groundchat.store.tables import BUDGET, USAGE
from groundchat.store import usage as us
from groundchat.tools.base import ToolContext, ToolRegistry, define_tool
from groundchat.models.messages import Message, ModelRequest

SYSTEM = "You answer questions about the benchmark by calling tools."


class LookupInput(BaseModel):
    pass


@define_tool(name="lookup", description="Looks up the benchmark's figures.", input_model=LookupInput, permission="runs.read")
async def lookup(ctx: ToolContext, args: LookupInput) -> dict[str, Any]:
    return {"answer": 42}


async def allow_all(permission: str, caller: Caller) -> bool:
    return True


def registry() -> ToolRegistry:
    return ToolRegistry([lookup], can=allow_all)


async def first_request(reg: ToolRegistry, caller: str, question: str, max_output_tokens: int) -> ModelRequest:
    """Exactly what the loop will send at step 0, which is what the app prechecks."""
    specs = [t.spec() for t in await reg.offered(Caller(id=caller))]
    return ModelRequest(system=SYSTEM, messages=[Message(role="user", content=question)], tools=specs, max_output_tokens=max_output_tokens)


async def ask(dynamo, settings, model, *, caller: str, run_id: str, conversation_id: str, question: str = "How do the contexts compare?") -> dict[str, Any]:
    """One request as the chat endpoint handles it: the 429 precheck, then the loop."""
    reg = registry()
    guard = BudgetGuard(dynamo, settings, caller, conversation_id, run_id, model.model_id)
    try:
        await guard.precheck(await first_request(reg, caller, question, settings.max_output_tokens))
    except SpendCapReached as cap:
        return {"status": 429, "scope": cap.scope, "message": cap.message, "frames": [], "run_id": run_id, "caller": caller, "model_calls": model.calls}
    ctx = ToolContext(caller=Caller(id=caller), run_id=run_id, conversation_id=conversation_id, charge_search=guard.charge_search)
    frames = [
        f
        async for f in run_exchange(
            model=model, system=SYSTEM, registry=reg, ctx=ctx, history=[], question=question,
            conversation_id=conversation_id, run_id=run_id, guard=guard,
            limits=LoopLimits(max_steps=settings.max_steps, max_output_tokens=settings.max_output_tokens),
        )
    ]
    await guard.release_unused()
    done = [f for f in frames if f.type == "done"]
    assert len(done) == 1, frames
    return {"status": 200, "done": done[0].data["reason"], "frames": frames, "run_id": run_id, "caller": caller, "model_calls": model.calls}


def usage_rows(dynamo) -> list[dict[str, Any]]:
    return us.all_rows_sync(dynamo.client, dynamo.name(USAGE))


def counter(dynamo, scope: str, period: str = "total") -> bc.Counter:
    return bc.read_counter_sync(dynamo.client, dynamo.name(BUDGET), scope, period)


def open_reservations(dynamo) -> list[dict[str, Any]]:
    return bc.open_reservations_sync(dynamo.client, dynamo.name(BUDGET))


def total(rows: list[dict[str, Any]]) -> Decimal:
    return us.total_charged(rows)
