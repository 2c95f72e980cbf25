"""Settling a step whose provider reported more than its reservation could cost: the plans of
spending/overrun.py tried in order (room, overdraft, dispute), the first that lands recorded on
the usage row with what stays disputed, logged and alarmed."""
from __future__ import annotations

import logging
from dataclasses import replace
from decimal import Decimal
from typing import TYPE_CHECKING, Callable, Protocol, TypeVar

from groundchat.money import money_text
from groundchat.observability import record_count, record_disputed
from groundchat.spending.caps import caps_for
from groundchat.spending.overrun import DISPUTE, OVERDRAFT, Overrun, counter_ops, plan_room, plans
from groundchat.spending.settlement import apply_sync, settle_sync
from groundchat.store.tables import BUDGET
from groundchat.store.transactions import TransactionBusy, TransactionRefused

if TYPE_CHECKING:
    from groundchat.config import Settings
    from groundchat.json_shapes import JsonObject
    from groundchat.models.messages import UsageEvent
    from groundchat.spending.settlement import Settlement
    from groundchat.store.dynamo import Dynamo
    from groundchat.store.items import TransactAction
    from groundchat.store.usage import UsageRow

log = logging.getLogger("groundchat.spending")

# A plan that meets the caps' conditions changing under it moves on to the next plan soon: the
# last one (dispute) always lands.
PLAN_ATTEMPTS = 4


class HeldStep(Protocol):
    """A step's reservation as this module reads it (spending/budget_guard.py `Reservation`)."""

    @property
    def id(self) -> str: ...

    @property
    def amount(self) -> Decimal: ...

    @property
    def counters(self) -> tuple[tuple[str, str], ...]: ...


# The guard's own reservation type: what it is handed back is what it made.
Held = TypeVar("Held", bound=HeldStep, contravariant=True)


class Guard(Protocol[Held]):
    """What of the budget guard (budget_guard.py) a settlement over the bound uses."""

    settings: Settings
    dynamo: Dynamo
    caller_id: str
    run_id: str
    model_id: str
    public: bool

    def usage_row(self, reservation: Held, usage: UsageEvent | None, ours: Decimal, provider: Decimal | None,
                  charged: Decimal, failed: bool) -> UsageRow: ...

    def settlement(self, reservation: Held, row: UsageRow,
                   counter_ops: Callable[[Decimal], list[TransactAction]]) -> Settlement: ...

    async def charge_summary(self, reservation: Held, outcome: str, row: UsageRow) -> JsonObject: ...


async def settle_over_bound(guard: Guard[Held], reservation: Held, usage: UsageEvent | None, ours: Decimal,
                            provider: Decimal | None, reported: Decimal, failed: bool, *, block: str,
                            settle_attempts: int) -> JsonObject:
    """`reservation`: the guard's (its amount and the counters it holds); `block`: why the chat's
    pool is blocked; `settle_attempts`: how long the last plan keeps trying before it is recorded."""
    settings, dynamo = guard.settings, guard.dynamo
    bound = Decimal(settings.step_overrun_usd)
    count = max(1, int(getattr(settings, "budget_shards", 1)))
    budget = dynamo.name(BUDGET)
    caps = {cap.scope: cap for cap in caps_for(settings, guard.caller_id, public=guard.public)}
    counters = list(reservation.counters)
    room = await dynamo.run(plan_room, dynamo.client, budget, counters, caps, reported, reservation.amount, bound, count)
    for plan in plans(reported, reservation.amount, bound, room):
        row = replace(guard.usage_row(reservation, usage, ours, provider, plan.charged, failed), over_bound=True,
                      disputed=plan.disputed, overdraft=plan.how == OVERDRAFT)

        def ops(released: Decimal, plan: Overrun = plan) -> list[TransactAction]:
            return counter_ops(budget, counters, caps, plan, released=released, block=block, count=count)

        settlement = guard.settlement(reservation, row, ops)
        if plan.how == DISPUTE:
            outcome = await dynamo.run(settle_sync, dynamo.client, budget, settlement, settle_attempts)
        else:
            try:
                outcome = await dynamo.run(apply_sync, dynamo.client, settlement, PLAN_ATTEMPTS)
            except (TransactionRefused, TransactionBusy):
                continue  # no room left, or the pool's one overdraft taken: the next plan
        _alarm(guard.run_id, guard.model_id, reported, reservation.amount, plan)
        return await guard.charge_summary(reservation, outcome, row)
    raise AssertionError("the dispute plan is always tried last")  # pragma: no cover


def _alarm(run_id: str, model_id: str, reported: Decimal, reserved: Decimal, plan: Overrun) -> None:
    """The rule (README "The rules of the caps"): charged as reported up to the reservation and the
    bound, the rest disputed; the answer ends, and the chat's pool is blocked until an operator looks."""
    log.error("step cost %s exceeded its bound %s (run %s, model %s): charged %s (%s), disputed %s; "
              "the chat's spending is blocked", money_text(reported), money_text(reserved), run_id, model_id,
              money_text(plan.charged), plan.how, money_text(plan.disputed))
    record_count("SpendOverBound", model=model_id)
    if plan.disputed > 0:
        record_disputed(plan.disputed)
