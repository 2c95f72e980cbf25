"""The operator's side of spending: release reservations left by crashed requests (the sweep),
what is spent, held and left (the budget endpoint and `groundchat budget status`), and resetting a
counter with a record of who reset what."""
from __future__ import annotations

import datetime as dt
import json
import logging
import time
import uuid
from decimal import Decimal
from typing import TYPE_CHECKING

from groundchat.spending.caps import Cap, caps_for
from groundchat.money import money_text
from groundchat.spending.pooled_hold import rebase_sync
from groundchat.spending.settlement import settle_recorded
from groundchat.store import budget_counters as bc
from groundchat.store import budget_shards as bs
from groundchat.store import pending_settlements as ps
from groundchat.store.tables import BUDGET
from groundchat.store.transactions import MAX_TRANSACTION_ATTEMPTS, TransactionBusy, TransactionRefused, transact_sync
from groundchat.store import item_values

if TYPE_CHECKING:
    from groundchat.config import Settings
    from groundchat.json_shapes import JsonObject
    from groundchat.store.dynamo import Dynamo
    from groundchat.store.items import DynamoClient, TransactAction

log = logging.getLogger("groundchat.spending")


async def sweep_expired(dynamo: Dynamo, now: float | None = None) -> list[JsonObject]:
    """Release every reservation whose expiry has passed; returns what was released.

    Each release deletes the reservation on the condition that it still exists and has expired,
    in the same transaction that gives its amount back, so a settle racing the sweep wins or
    loses whole: the amount is released exactly once.
    """
    now_s = int(time.time() if now is None else now)
    budget = dynamo.name(BUDGET)
    # Settlements recorded while the budget was busy first: their reservations are spent, not free.
    await settle_recorded(dynamo, budget)
    released: list[JsonObject] = []
    for item in await dynamo.run(bc.expired_reservations_sync, dynamo.client, budget, now_s):
        values = bc.plain(item)
        reservation_id = str(values["scope"]).split("#", 1)[1]
        amount = item_values.amount(values, "amount")
        counters = bc.reservation_counters(item)
        items = [
            bc.close_reservation_op(budget, reservation_id, expired_before=now_s),
            *(bc.release_op(budget, scope, period, amount) for scope, period in counters),
            ps.no_pending_check(budget, reservation_id),
        ]
        try:
            await dynamo.run(transact_sync, dynamo.client, items)
        except TransactionRefused:
            continue  # settled, swept or recorded for settling meanwhile: nothing to give back
        record = {
            "reservation_id": reservation_id,
            "amount": money_text(amount),
            "run_id": values.get("run_id"),
            "caller": values.get("caller"),
            "expired_at": item_values.whole(values, "expires_at"),
        }
        log.warning("released expired reservation %s", json.dumps(record))
        released.append(record)
    return released


def _status(cap: Cap, counter: bc.Counter) -> dict[str, str | None]:
    return {
        "spent": money_text(counter.spent),
        "reserved": money_text(counter.reserved),
        "remaining": money_text(max(Decimal(0), cap.limit - counter.committed)),
        "cap": money_text(cap.limit),
        "period": cap.period,
        "resets_at": cap.resets_at,
        **({"blocked": counter.blocked} if counter.blocked else {}),
    }


def read_cap_sync(client: DynamoClient, table: str, scope: str, period: str) -> bc.Counter:
    """One cap's counter; for a pool, the sum over every shard it has (budget_shards.MAX_SHARDS
    read, so shards beyond today's N still count), blocked when any shard is."""
    if not bc.pool_of(scope):
        return bc.read_counter_sync(client, table, scope, period)
    shards = bs.read_pool_sync(client, table, scope, period)
    total = sum((s.committed or Decimal(0) for s in shards), Decimal(0))
    return bc.Counter(scope, period, spent=sum((s.spent for s in shards), Decimal(0)),
                      reserved=sum((s.reserved for s in shards), Decimal(0)), committed=total,
                      blocked=next((s.blocked for s in shards if s.blocked), None))


async def budget_status(dynamo: Dynamo, settings: Settings, caller_id: str) -> dict[str, dict[str, str | None]]:
    """What is spent, held and left, for the chat and for this caller (decimal strings); in public
    mode also for the anonymous visitors together."""
    public = getattr(settings, "mode", "private") == "public"
    caps = caps_for(settings, caller_id, public=public)
    budget = dynamo.name(BUDGET)
    counters = [await dynamo.run(read_cap_sync, dynamo.client, budget, cap.scope, cap.period) for cap in caps]
    status = {"chat": _status(caps[0], counters[0]), "you": _status(caps[-1], counters[-1])}
    if public:
        status["visitors"] = _status(caps[1], counters[1])
    return status


def parse_scope(text: str) -> str:
    """"chat" or "user:<id>" (the CLI's spelling) to a counter scope."""
    if text == "chat":
        return bc.CHAT_SCOPE
    if text == "public":
        return bc.PUBLIC_SCOPE
    if text.startswith("user:") and len(text) > len("user:"):
        return bc.user_scope(text[len("user:"):])
    raise ValueError(f"scope must be 'chat', 'public' or 'user:<id>', not {text!r}")


def _reset_sync(client: DynamoClient, table: str, scope: str, period: str, actor: str, attempts: int = MAX_TRANSACTION_ATTEMPTS) -> dict[str, str] | None:
    if bc.pool_of(scope):
        return _reset_pool_sync(client, table, scope, period, actor, attempts)
    for _ in range(attempts):
        got = client.get_item(TableName=table, Key=bc.key(scope, period), ConsistentRead=True)
        if "Item" not in got:
            return None
        counter = bc.Counter.from_item(scope, period, got["Item"])
        at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
        record = {
            "scope": scope,
            "period": period,
            "spent_reset": money_text(counter.spent),
            "reserved_kept": money_text(counter.reserved),
            "actor": actor,
            "at": at,
        }
        items = [
            {
                "Update": {
                    "TableName": table,
                    "Key": bc.key(scope, period),
                    # Only if the counter is as read: the log then says exactly what was reset.
                    # Reservations in flight stay held; their steps settle against the new zero.
                    "ConditionExpression": "spent = :old AND reserved = :reserved",
                    "UpdateExpression": "SET spent = :zero, committed = :reserved",
                    "ExpressionAttributeValues": {":old": bc.n(counter.spent), ":zero": bc.n(0), ":reserved": bc.n(counter.reserved)},
                }
            },
            _reset_log_op(table, record),
        ]
        try:
            transact_sync(client, items)
            return record
        except TransactionRefused:
            continue  # a step settled or a reservation moved meanwhile: read again
    raise TransactionBusy(f"could not reset {scope} {period}: the counter kept changing")


def _reset_log_op(table: str, record: dict[str, str]) -> TransactAction:
    return {"Put": {
        "TableName": table,
        "Item": {
            **bc.key(bc.RESET_LOG_SCOPE, f"{record['at']}#{uuid.uuid4().hex}"),
            "counter_scope": {"S": record["scope"]},
            "counter_period": {"S": record["period"]},
            "spent_reset": bc.n(item_values.amount(record, "spent_reset")),
            "reserved_kept": bc.n(item_values.amount(record, "reserved_kept")),
            "actor": {"S": record["actor"]},
            "at": {"S": record["at"]},
        },
        "ConditionExpression": "attribute_not_exists(#s)",
        "ExpressionAttributeNames": {"#s": "scope"},
    }}


def _reset_pool_sync(client: DynamoClient, table: str, pool: str, period: str, actor: str, attempts: int) -> dict[str, str] | None:
    """The pool's reset: every shard's spent to zero and given back as room, in one transaction
    with the log of the totals, each shard only if as read."""
    for _ in range(attempts):
        shards = [s for s in bs.read_pool_sync(client, table, pool, period) if s.committed is not None]
        if not shards:
            return None
        at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
        record = {"scope": pool, "period": period, "spent_reset": money_text(sum((s.spent for s in shards), Decimal(0))),
                  "reserved_kept": money_text(sum((s.reserved for s in shards), Decimal(0))), "actor": actor, "at": at}
        try:
            transact_sync(client, [*(bs.reset_shard_op(table, s, period) for s in shards), _reset_log_op(table, record)])
            return record
        except TransactionRefused:
            continue  # a step settled or a reservation moved meanwhile: read again
    raise TransactionBusy(f"could not reset {pool} {period}: the counter kept changing")


async def reset_budget(dynamo: Dynamo, settings: Settings, scope_text: str, *, period: str | None = None, actor: str = "operator") -> dict[str, str] | None:
    """Set a counter's `spent` back to zero (reservations in flight stay held), and record the
    reset in the budget table's reset log. Usage rows are kept: they are the record of money
    spent. Returns what was reset, or None if the counter has never been written."""
    scope = parse_scope(scope_text)
    period = period or bc.period_key(settings.budget_period)
    record = await dynamo.run(_reset_sync, dynamo.client, dynamo.name(BUDGET), scope, period, actor)
    if record is not None:
        log.warning("budget reset %s", json.dumps(record))
    return record


async def unblock_budget(dynamo: Dynamo, settings: Settings, *, period: str | None = None, actor: str = "operator") -> dict[str, str | bool] | None:
    """Lift the block a step charged over its bound put on the chat's pool (budget_guard.py), from
    every shard of it, once an operator has looked, and set the pool's rooms again from what it has
    committed (the charge over the bound included); recorded in the log. None when not blocked."""
    period = period or bc.period_key(settings.budget_period)
    budget = dynamo.name(BUDGET)
    shards = await dynamo.run(bs.read_pool_sync, dynamo.client, budget, bc.CHAT_SCOPE, period)
    blocked = [s for s in shards if s.blocked]
    if not blocked:
        return None
    try:
        await dynamo.run(transact_sync, dynamo.client, [bs.unblock_shard_op(budget, s.scope, period) for s in blocked])
    except TransactionRefused:
        return None  # another operator lifted it meanwhile
    count = max(1, int(getattr(settings, "budget_shards", 1)))
    # A charge over its bound may have left its shard's room below zero beside others' room: the
    # rooms are set again from what the pool has committed, so none says more than is left.
    cap = Cap(bc.CHAT_SCOPE, period, Decimal(settings.budget_usd), None)
    await dynamo.run(rebase_sync, dynamo.client, budget, cap, count, force=True)
    record = {"scope": bc.CHAT_SCOPE, "period": period, "unblocked": True, "actor": actor,
              "at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")}
    log.warning("budget unblocked %s", json.dumps(record))
    return record
