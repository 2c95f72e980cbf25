"""Many reservers at once against the pooled cap, with DynamoDB's conflict rule applied
(groundchat_testkit.dynamo_conflicts): what the spending tests and bench/budget.py both drive.

A reserver is one answer's spending: it reserves a model step, settles it at a measured cost below
its worst case, and charges one search. Each has a person of its own, so what the reservers share
is the chat's pool alone.
"""
from __future__ import annotations

import asyncio
import time
from collections import Counter as Tally
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import Decimal

from groundchat.models.messages import Message, ModelRequest, UsageEvent
from groundchat.spending.budget_guard import BudgetGuard
from groundchat.spending.operator import read_cap_sync, sweep_expired
from groundchat.spending.step_guard import SpendCapReached, SpendingBusy
from groundchat.store import budget_counters as bc
from groundchat.store import budget_shards as bs
from groundchat.store import usage as us
from groundchat.store.tables import BUDGET, USAGE
from groundchat_testkit.dynamo_conflicts import ConflictRule
from groundchat.spending.search_charge import SearchCharge

REQUEST = ModelRequest(system="bench", messages=[Message(role="user", content="How do the contexts compare?")], tools=[],
                       max_output_tokens=1000)
USED = UsageEvent(input_tokens=40, output_tokens=300)


def small_cap(worst: Decimal, reservers: int) -> Decimal:
    """A cap that holds a quarter of the reservers' worst cases: at the peak most reservations
    meet it, though settled steps (charged well below their worst case) give room back."""
    return (worst * reservers / 4).quantize(Decimal("0.0001"))


@dataclass
class Run:
    reservers: int
    shards: int
    cap: Decimal
    outcomes: Tally = field(default_factory=Tally)
    transactions: int = 0
    cancelled: int = 0
    pending_settlements: int = 0
    seconds: float = 0.0
    charged: Decimal = Decimal(0)
    pool: bc.Counter | None = None
    rooms: Decimal = Decimal(0)
    people_match_rows: bool = False

    @property
    def reservations(self) -> int:
        return sum(self.outcomes.values())

    @property
    def answered_per_second(self) -> float:
        return self.outcomes["answered"] / max(self.seconds, 1e-9)

    @property
    def conflicts_per_reservation(self) -> float:
        return self.cancelled / max(1, self.reservations)

    @property
    def overspend(self) -> Decimal:
        return max(Decimal(0), self.charged - self.cap)


async def one_answer(dynamo, settings, i: int, model_id: str = "scripted") -> tuple[str, int]:
    """(outcome, how many settlements were recorded for the sweep)."""
    guard = BudgetGuard(dynamo, settings, f"reserver-{i}", f"conv-{i}", f"run-{i}", model_id)
    try:
        held = await guard.reserve(REQUEST, 0)
    except SpendingBusy:
        return "busy", 0
    except SpendCapReached:
        return "capped", 0
    settled = await guard.settle(held, USED)
    try:
        await SearchCharge.of_run(guard)("how do the contexts compare")
    except SpendCapReached:
        pass  # a search refused before it runs costs nothing
    return "answered", int(settled.get("settlement") == "pending")


async def run_reservers(dynamo, settings, reservers: int, *, hold_seconds: float = 0.01, model_id: str = "scripted") -> Run:
    """`reservers` answers at once on their own threads (as many Lambdas would), through the
    conflict rule; then the sweep, and the pool and the usage rows read back."""
    rule = ConflictRule(dynamo.client, hold_seconds=hold_seconds)
    dynamo.__dict__["client"] = rule  # Dynamo.client is a cached property: this instance's client is the rule
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(max_workers=min(reservers, 64)))
    run = Run(reservers, settings.budget_shards, Decimal(settings.budget_usd))
    started = time.perf_counter()
    results = await asyncio.gather(*(one_answer(dynamo, settings, i, model_id) for i in range(reservers)))
    run.seconds = time.perf_counter() - started
    run.transactions, run.cancelled = rule.transactions, rule.cancelled
    run.outcomes = Tally(outcome for outcome, _ in results)
    run.pending_settlements = sum(p for _, p in results)
    dynamo.__dict__["client"] = rule._client
    await sweep_expired(dynamo, now=0)  # recorded settlements only: no reservation has expired at time 0
    budget = dynamo.name(BUDGET)
    rows = us.all_rows_sync(dynamo.client, dynamo.name(USAGE))
    run.charged = us.total_charged(rows)
    run.pool = read_cap_sync(dynamo.client, budget, bc.CHAT_SCOPE, "total")
    run.rooms = sum((s.room or Decimal(0) for s in bs.read_pool_sync(dynamo.client, budget, bc.CHAT_SCOPE, "total")), Decimal(0))
    by_person = Tally()
    for row in rows:
        by_person[row["caller"]] += row["charged"]
    run.people_match_rows = all(
        bc.read_counter_sync(dynamo.client, budget, bc.user_scope(person), "total").spent == spent for person, spent in by_person.items())
    return run
