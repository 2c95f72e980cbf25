"""A step whose provider reports more than its reservation could cost: what it is charged.

The rule: what the provider reports is charged up to the step's reservation plus the operator's
bound (`GROUNDCHAT_STEP_OVERRUN_USD`); what it reports beyond that is recorded on the usage row as
`disputed` and alarmed (`SpendDisputed`), never charged. The part charged beyond the reservation,
the overrun (at most the bound), is taken from the caps' room like any hold, in the settlement's
own transaction: conditional on the step's shard having it, lent by the pool's other shards where
it lacks it, and on the person's counter staying within their cap. Where the caps have no room for
it, the overrun may pass them only once: the step that takes the pool's overdraft (a marker on its
shard 0, set in the same transaction and lifted only by `groundchat budget unblock`) is charged it
beyond the caps; any other step is charged its reservation and the rest is disputed. So answers
running at once pass a cap together by at most one bound, however many of them over-report.

Every such report also blocks the chat's pool (budget_guard.py): nothing more is held until an
operator has looked. Each plan is a whole settlement (spending/settlement.py), tried in order:
room, overdraft, dispute; the last is an ordinary settlement that cannot be refused by the caps.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING

from groundchat.store import budget_counters as bc
from groundchat.store import budget_shards as bs
from groundchat.store.budget_counters import BLOCKED, n

if TYPE_CHECKING:
    from groundchat.spending.caps import Cap
    from groundchat.store.items import DynamoClient, TransactAction, UpdateAction, UpdateRequest

ROOM, OVERDRAFT, DISPUTE = "room", "overdraft", "dispute"
# On a pool's shard 0: the overrun that passed the cap since the last unblock (one at most).
OVERDRAWN = "overdrawn"


@dataclass(frozen=True)
class Overrun:
    """One plan for an over-reporting step: what it charges and what stays disputed."""

    how: str
    charged: Decimal
    disputed: Decimal
    overrun: Decimal  # charged beyond the reservation
    loans: dict[str, list[tuple[int, Decimal]]] = field(default_factory=dict)  # pool -> (shard, lent)

    @property
    def borrowed(self) -> dict[str, Decimal]:
        return {pool: sum((lent for _, lent in loans), Decimal(0)) for pool, loans in self.loans.items()}


def bounded(reported: Decimal, reserved: Decimal, bound: Decimal) -> Decimal:
    """What an over-reporting step may be charged at most: its reservation and the bound."""
    return min(reported, reserved + bound)


def plans(reported: Decimal, reserved: Decimal, bound: Decimal, room_plan: Overrun | None) -> list[Overrun]:
    """The plans to try, in order (the room plan only when the caps have room for the overrun)."""
    charged = bounded(reported, reserved, bound)
    overrun = charged - reserved
    tried: list[Overrun] = []
    if overrun > 0:
        if room_plan is not None:
            tried.append(room_plan)
        tried.append(Overrun(OVERDRAFT, charged, reported - charged, overrun))
    tried.append(Overrun(DISPUTE, reserved, reported - reserved, Decimal(0)))
    return tried


def plan_room(client: DynamoClient, table: str, counters: list[tuple[str, str]], caps: dict[str, Cap],
              reported: Decimal, reserved: Decimal, bound: Decimal, count: int) -> Overrun | None:
    """The room plan: for each pool the reservation holds a shard of, that shard's room or loans
    from the others; None when a pool's rooms together (or a person's cap) cannot take the overrun."""
    charged = bounded(reported, reserved, bound)
    overrun = charged - reserved
    loans: dict[str, list[tuple[int, Decimal]]] = {}
    for scope, period in counters:
        pool = bc.pool_of(scope)
        if pool is None:
            cap = caps.get(scope)
            if cap is None or cap.limit < overrun:
                return None
            continue
        shards = bs.read_pool_sync(client, table, pool, period, count)
        own = next((s for s in shards if s.scope == scope), None)
        if own is None:
            return None
        need = overrun - own.free
        pool_loans: list[tuple[int, Decimal]] = []
        for lender in shards:
            if need <= 0:
                break
            if lender.index != own.index and lender.free > 0 and not lender.blocked:
                lent = min(lender.free, need)
                pool_loans.append((lender.index, lent))
                need -= lent
        if need > 0:
            return None
        loans[pool] = pool_loans
    return Overrun(ROOM, charged, reported - charged, overrun, loans)


def counter_ops(table: str, counters: list[tuple[str, str]], caps: dict[str, Cap], plan: Overrun, *,
                released: Decimal, block: str | None, count: int) -> list[TransactAction]:
    """The settlement's writes to the counters for `plan` (the usage row and the reservation's
    close are the guard's): each counter held charged, the loans, the chat's pool blocked."""
    ops: list[TransactAction] = []
    held = {scope for scope, _ in counters}
    for scope, period in counters:
        pool = bc.pool_of(scope)
        op = bc.settle_op(table, scope, period, plan.charged, released, block=block if pool == bc.CHAT_SCOPE else None)
        update = op["Update"]
        values = update.setdefault("ExpressionAttributeValues", {})
        if pool is None and plan.how == ROOM:
            cap = caps[scope]
            _also_on(update, "committed <= :bound")
            values[":bound"] = n(cap.limit - (plan.charged - released))
        elif pool is not None and plan.how == ROOM:
            borrowed = plan.borrowed.get(pool, Decimal(0))
            _also_on(update, "room >= :need")
            values[":need"] = n(plan.charged - released - borrowed)
            values[":room"] = n(released - plan.charged + borrowed)
        elif pool is not None and plan.how == OVERDRAFT:
            values[":room"] = n(released - plan.charged + plan.overrun)  # the overrun lands past the cap
            if scope == pool:
                _mark_overdrawn(update, plan.overrun)
        ops.append(op)
        if pool is not None:
            ops.extend(_pool_ops(table, pool, period, plan, held, caps, block if pool == bc.CHAT_SCOPE else None, count))
    return ops


def _pool_ops(table: str, pool: str, period: str, plan: Overrun, held: set[str], caps: dict[str, Cap],
              block: str | None, count: int) -> list[TransactAction]:
    """Every other shard of the pool: lending (room plan), marked (shard 0, overdraft), blocked."""
    lent = dict(plan.loans.get(pool, []))
    cap = next(c for c in caps.values() if c.scope == pool)
    ops: list[TransactAction] = []
    for index in range(count):
        scope = bs.shard_scope(pool, index)
        if scope in held:
            continue
        if index in lent:
            op = bs.lend_op(table, scope, period, lent[index], cap.limit, count)
            if block:
                op["Update"]["UpdateExpression"] += f" SET {BLOCKED} = :why"
                op["Update"].setdefault("ExpressionAttributeValues", {})[":why"] = {"S": block}
            ops.append(op)
        elif block or (plan.how == OVERDRAFT and index == 0):
            op: UpdateAction = bs.block_op(table, scope, period, block) if block else {"Update": {
                "TableName": table, "Key": bc.key(scope, period), "UpdateExpression": "", "ExpressionAttributeValues": {}}}
            if plan.how == OVERDRAFT and index == 0:
                _mark_overdrawn(op["Update"], plan.overrun)
            ops.append(op)
    return ops


def _also_on(update: UpdateRequest, condition: str) -> None:
    """The update's condition and this one (the settlement's own condition is kept)."""
    own = update.get("ConditionExpression")
    update["ConditionExpression"] = f"{own} AND {condition}" if own else condition


def _mark_overdrawn(update: UpdateRequest, overrun: Decimal) -> None:
    """Only one overdraft per pool until an operator unblocks it."""
    _also_on(update, f"attribute_not_exists({OVERDRAWN})")
    expression = update["UpdateExpression"]
    assignment = f"{OVERDRAWN} = :overdrawn"
    if expression.startswith("SET "):
        expression = f"SET {assignment}, {expression[4:]}"
    elif " SET " in expression:
        expression = expression.replace(" SET ", f" SET {assignment}, ", 1)
    else:
        expression = f"{expression} SET {assignment}".strip()
    update["UpdateExpression"] = expression
    update.setdefault("ExpressionAttributeValues", {})[":overdrawn"] = n(overrun)
