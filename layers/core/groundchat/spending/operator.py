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
from groundchat.store import budget_counters as bc
from groundchat.store.tables import BUDGET
from groundchat.store.transactions import MAX_TRANSACTION_ATTEMPTS, TransactionBusy, TransactionRefused, transact_sync

if TYPE_CHECKING:
    from groundchat.config import Settings
    from groundchat.json_shapes import JsonObject
    from groundchat.store.dynamo import Dynamo
    from groundchat.store.items import DynamoClient

log = logging.getLogger("groundchat.spending")


async def sweep_expired(dynamo: Dynamo, now: float | None = None) -> list[JsonObject]:
    """Release every reservation whose expiry has passed; returns what was released.

    Each release deletes the reservation on the condition that it still exists and has expired,
    in the same transaction that gives its amount back, so a settle racing the sweep wins or
    loses whole: the amount is released exactly once.
    """
    now_s = int(time.time() if now is None else now)
    budget = dynamo.name(BUDGET)
    released: list[JsonObject] = []
    for item in await dynamo.run(bc.expired_reservations_sync, dynamo.client, budget, now_s):
        values = bc.plain(item)
        reservation_id = str(values["scope"]).split("#", 1)[1]
        amount = Decimal(values["amount"])
        counters = bc.reservation_counters(item)
        items = [
            bc.close_reservation_op(budget, reservation_id, expired_before=now_s),
            *(bc.release_op(budget, scope, period, amount) for scope, period in counters),
        ]
        try:
            await dynamo.run(transact_sync, dynamo.client, items)
        except TransactionRefused:
            continue  # settled (or swept) meanwhile: nothing to give back
        record = {
            "reservation_id": reservation_id,
            "amount": money_text(amount),
            "run_id": values.get("run_id"),
            "caller": values.get("caller"),
            "expired_at": int(values["expires_at"]),
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


async def budget_status(dynamo: Dynamo, settings: Settings, caller_id: str) -> dict[str, dict[str, str | None]]:
    """What is spent, held and left, for the chat and for this caller (decimal strings); in public
    mode also for the anonymous visitors together."""
    public = getattr(settings, "mode", "private") == "public"
    caps = caps_for(settings, caller_id, public=public)
    budget = dynamo.name(BUDGET)
    counters = [await dynamo.run(bc.read_counter_sync, dynamo.client, budget, cap.scope, cap.period) for cap in caps]
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
            {
                "Put": {
                    "TableName": table,
                    "Item": {
                        **bc.key(bc.RESET_LOG_SCOPE, f"{at}#{uuid.uuid4().hex}"),
                        "counter_scope": {"S": scope},
                        "counter_period": {"S": period},
                        "spent_reset": bc.n(counter.spent),
                        "reserved_kept": bc.n(counter.reserved),
                        "actor": {"S": actor},
                        "at": {"S": at},
                    },
                    "ConditionExpression": "attribute_not_exists(#s)",
                    "ExpressionAttributeNames": {"#s": "scope"},
                }
            },
        ]
        try:
            transact_sync(client, items)
            return record
        except TransactionRefused:
            continue  # a step settled or a reservation moved meanwhile: read again
    raise TransactionBusy(f"could not reset {scope} {period}: the counter kept changing")


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
    """Lift the block a step charged over its bound put on the chat's counter (budget_guard.py),
    once an operator has looked; recorded in the log. None when the counter was not blocked."""
    period = period or bc.period_key(settings.budget_period)
    try:
        await dynamo.run(transact_sync, dynamo.client, [bc.unblock_op(dynamo.name(BUDGET), bc.CHAT_SCOPE, period)])
    except TransactionRefused:
        return None
    record = {"scope": bc.CHAT_SCOPE, "period": period, "unblocked": True, "actor": actor,
              "at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")}
    log.warning("budget unblocked %s", json.dumps(record))
    return record
