"""Building blocks the spending tests share: a one-tool registry and the app's order of checks."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from pydantic import BaseModel

from groundchat.auth.callers import CHAT_USE, RUNS_READ, Caller
from groundchat.chat.answer import Refusal, answer_question
from groundchat.chat.prompts import system_prompt
from groundchat.config import get_settings
from groundchat.services import Services
from groundchat.store import budget_counters as bc
from groundchat.store.tables import BUDGET, USAGE
from groundchat.store import usage as us
from groundchat.tools.base import ToolContext, ToolRegistry, define_tool
from groundchat.models.messages import Message, ModelRequest



class LookupInput(BaseModel):
    pass


@define_tool(name="lookup", description="Looks up the benchmark's figures.", input_model=LookupInput, permission="runs.read",
             grounding="figures", drawer="plain", offline_template="generic")
async def lookup(ctx: ToolContext, args: LookupInput) -> dict[str, Any]:
    return {"answer": 42}


async def allow_all(permission: str, caller: Caller) -> bool:
    return True


def registry() -> ToolRegistry:
    return ToolRegistry([lookup], can=allow_all)


async def first_request(reg: ToolRegistry, caller: str, question: str, max_output_tokens: int) -> ModelRequest:
    """Exactly what the answer sends at step 0, which is what it prechecks."""
    specs = [t.spec() for t in await reg.offered(Caller(id=caller))]
    system = system_prompt(get_settings().bot_name, [t.name for t in specs])
    return ModelRequest(system=system, messages=[Message(role="user", content=question)], tools=specs, max_output_tokens=max_output_tokens)


async def ask(dynamo, settings, model, *, caller: str, question: str = "How do the contexts compare?") -> dict[str, Any]:
    """One request through the answer use case the chat endpoint calls, for a caller allowed to chat."""
    services = Services(settings=settings, dynamo=dynamo, model_override=model, tools_override=[lookup])
    await services.users.grant(caller, [CHAT_USE, RUNS_READ])
    outcome = await answer_question(services, Caller(id=caller), {"message": question})
    if isinstance(outcome, Refusal):
        return {"status": outcome.status, "code": outcome.code, "message": outcome.message, "frames": [], "run_id": None,
                "caller": caller, "model_calls": model.calls, **outcome.extra}
    frames = [f async for f in outcome.frames]
    done = [f for f in frames if f.type == "done"]
    assert len(done) == 1, frames
    return {"status": 200, "done": done[0].data["reason"], "frames": frames, "run_id": outcome.run_id, "caller": caller,
            "model_calls": model.calls}


def usage_rows(dynamo) -> list[dict[str, Any]]:
    return us.all_rows_sync(dynamo.client, dynamo.name(USAGE))


def counter(dynamo, scope: str, period: str = "total") -> bc.Counter:
    return bc.read_counter_sync(dynamo.client, dynamo.name(BUDGET), scope, period)


def open_reservations(dynamo) -> list[dict[str, Any]]:
    return bc.open_reservations_sync(dynamo.client, dynamo.name(BUDGET))


def total(rows: list[dict[str, Any]]) -> Decimal:
    return us.total_charged(rows)
