"""Holding an amount against every cap of a caller in one transaction, the pooled caps (the chat's
total, the visitors' ceiling) on one of their shards (store/budget_shards.py).

A hold first tries one shard of each pool chosen at random, so concurrent steps spread over the
pool's N items. When that shard is short of room (or not set for this cap), the pool is read and
the hold is planned again: on the shard with the most room, with what it lacks lent by the others
in the same conditional transaction. It is refused as over the cap only when the shards together
cannot hold it. A transaction cancelled by a conflict is retried with jitter (`transact_sync`), and
with several shards moved to another one after a few attempts; one that stays cancelled, or a plan
the pool keeps changing under, is refused as busy (`SpendingBusy`), before anything is spent.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Callable

from groundchat.spending.caps import Cap, refusal
from groundchat.spending.step_guard import SpendingBusy
from groundchat.store import budget_counters as bc
from groundchat.store import budget_shards as bs
from groundchat.store.tables import BUDGET
from groundchat.store.transactions import TransactionBusy, TransactionRefused, transact_sync

if TYPE_CHECKING:
    from groundchat.config import Settings
    from groundchat.store.dynamo import Dynamo
    from groundchat.store.items import DynamoClient, TransactAction

# Plans tried before a hold is refused as busy: each follows a refusal that changed what was read.
HOLD_ROUNDS = 4
# With more than one shard, a hold that keeps conflicting moves to another shard chosen at random
# after this many attempts, up to HOPS times: a conflict says its shard is busy right now.
HOP_ATTEMPTS = 3
HOPS = 4
REBASE_ATTEMPTS = 5
BUSY = "The budget is too busy to reserve this step; nothing was spent. Try again."

Counters = list[tuple[str, str]]


@dataclass
class PoolPlan:
    """Where one pooled cap's share of a hold goes: a shard, and the loans it takes (shard, amount)."""

    shard: int
    loans: list[tuple[int, Decimal]] = field(default_factory=list)

    def ops(self, table: str, cap: Cap, amount: Decimal, count: int, into: str) -> list[TransactAction]:
        pool = cap.scope
        borrowed = sum((lent for _, lent in self.loans), Decimal(0))
        return [bs.shard_hold_op(table, bs.shard_scope(pool, self.shard), cap.period, amount, cap.limit, count,
                                 into=into, borrowed=borrowed),
                *(bs.lend_op(table, bs.shard_scope(pool, i), cap.period, lent, cap.limit, count) for i, lent in self.loans)]


def plan_from(shards: list[bs.Shard], amount: Decimal) -> PoolPlan | None:
    """A shard with room for `amount`, or one that borrows what it lacks from the others; None
    when the pool's rooms together cannot hold it. Chosen at random, so that holds planned at the
    same moment from the same reading do not all meet on the same shards. A lender with room to
    spare gives half of it (at least what is lacking): the borrower then holds the next steps too
    without borrowing again."""
    if sum((s.free for s in shards), Decimal(0)) < amount:
        return None
    fits = [s for s in shards if s.free >= amount]
    if fits:
        return PoolPlan(random.choice(fits).index)
    borrower = random.choice(shards)
    lenders = [s for s in shards if s.free > 0 and s.index != borrower.index]
    random.shuffle(lenders)
    need = amount - borrower.free
    loans: list[tuple[int, Decimal]] = []
    for lender in lenders:
        if need <= 0:
            break
        lent = min(lender.free, max(need, lender.free / 2))
        loans.append((lender.index, lent))
        need -= lent
    return PoolPlan(borrower.index, loans)


def rebase_sync(client: DynamoClient, table: str, cap: Cap, count: int, *, force: bool = False) -> list[bs.Shard]:
    """Set the pool for this cap and N (budget_shards' rule) unless it already is (`force`: even
    then); the pool as it is after. A blocked pool is left as it is."""
    for _ in range(REBASE_ATTEMPTS):
        shards = bs.read_pool_sync(client, table, cap.scope, cap.period)
        if any(s.blocked for s in shards) or not (force or bs.needs_rebase(shards, cap.limit, count)):
            return shards[:count]
        try:
            transact_sync(client, bs.rebase_ops(table, cap.scope, cap.period, shards, cap.limit, count))
            force = False
        except TransactionRefused:
            continue  # a shard moved (or another process rebased first): read again
    raise TransactionBusy(f"the {cap.scope} pool kept changing while it was rebased")


def replan_sync(client: DynamoClient, table: str, cap: Cap, amount: Decimal, count: int) -> PoolPlan:
    """Read the pool (rebasing it first when it is not set for this cap and N) and plan the hold,
    or raise the refusal that says why it cannot be held."""
    shards = bs.read_pool_sync(client, table, cap.scope, cap.period, count)
    if not any(s.blocked for s in shards) and bs.needs_rebase(shards, cap.limit, count):
        shards = rebase_sync(client, table, cap, count)
    blocked = next((s.blocked for s in shards if s.blocked), None)
    if blocked:
        raise refusal(cap, amount, bc.Counter(cap.scope, cap.period, blocked=blocked))
    plan = plan_from(shards, amount)
    if plan is None:
        left = sum((s.free for s in shards), Decimal(0))
        raise refusal(cap, amount, bc.Counter(cap.scope, cap.period, committed=cap.limit - left))
    return plan


async def hold_within_caps(dynamo: Dynamo, settings: Settings, caps: list[Cap], amount: Decimal, *, into: str,
                           rest: Callable[[Counters], list[TransactAction]]) -> Counters:
    """Hold (`into="reserved"`) or charge (`into="spent"`) `amount` on every cap at once, with the
    items `rest` adds for the counters chosen (the reservation, or the usage row), in one
    transaction. Returns those counters (scope, period), shard scopes included."""
    count = max(1, int(getattr(settings, "budget_shards", 1)))
    table = dynamo.name(BUDGET)
    pooled = [cap.scope for cap in caps if bc.pool_of(cap.scope)]
    plans = {scope: PoolPlan(random.randrange(count)) for scope in pooled}
    hops = 0
    for _ in range(HOLD_ROUNDS + HOPS):
        items: list[TransactAction] = []
        owners: list[Cap] = []
        counters: Counters = []
        for cap in caps:
            plan = plans.get(cap.scope)
            ops = plan.ops(table, cap, amount, count, into) if plan else [bc.within_cap_op(table, cap.scope, cap.period, amount, cap.limit, into=into)]
            items.extend(ops)
            owners.extend([cap] * len(ops))
            counters.append((bs.shard_scope(cap.scope, plan.shard) if plan else cap.scope, cap.period))
        try:
            await dynamo.run(transact_sync, dynamo.client, [*items, *rest(counters)], HOP_ATTEMPTS if count > 1 else None)
            return counters
        except TransactionBusy:
            hops += 1
            if count == 1 or not pooled or hops > HOPS:
                raise SpendingBusy(caps[0].public_scope, BUSY) from None
            plans = {scope: PoolPlan(random.randrange(count)) for scope in pooled}
            continue
        except TransactionRefused as refused:
            index = next((i for i in range(len(owners)) if refused.failed(i)), None)
            if index is None:
                raise
            cap = owners[index]
            if cap.scope not in plans:
                old = refused.old_item(index)
                raise refusal(cap, amount, bc.Counter.from_item(cap.scope, cap.period, old) if old else None) from None
            try:
                plans[cap.scope] = await dynamo.run(replan_sync, dynamo.client, table, cap, amount, count)
            except TransactionBusy:
                raise SpendingBusy(cap.public_scope, BUSY) from None
    raise SpendingBusy(caps[0].public_scope, BUSY)
