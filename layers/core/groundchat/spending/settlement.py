"""Running a step's settlement: it lands, or it is recorded for the sweep; it is never dropped.

A settlement is two transactions of which one runs: the normal one closes the reservation, moves
the charge into the counters it held and writes the usage row (always its last item); the late one,
for a reservation the sweep already released (the step outlived its lease), charges the counters
without releasing anything a second time. Both are kept as data, so the sweep can run a settlement
recorded when the budget stayed too busy (store/pending_settlements.py) exactly as the step would.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from groundchat.store import item_values
from groundchat.store import pending_settlements as ps
from groundchat.store.transactions import TransactionBusy, TransactionRefused, transact_sync

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject
    from groundchat.store.dynamo import Dynamo
    from groundchat.store.items import DynamoClient, TransactAction

log = logging.getLogger("groundchat.spending")

SETTLED = "settled"
LATE = "late"  # the sweep had released the reservation: charged, nothing released again
ALREADY = "already"  # an earlier attempt of this very settlement went through (its row exists)
PENDING = "pending"  # recorded for the sweep


@dataclass(frozen=True)
class Settlement:
    reservation_id: str
    run_id: str
    normal: list[TransactAction]
    late: list[TransactAction]


def apply_sync(client: DynamoClient, s: Settlement, attempts: int | None = None, also: Sequence[TransactAction] = ()) -> str:
    """Run the settlement (with `also` in the same transaction); which of the outcomes it had."""
    try:
        transact_sync(client, [*s.normal, *also], attempts)
        return SETTLED
    except TransactionRefused as refused:
        if refused.failed(len(s.normal) - 1):
            return ALREADY
        if not refused.failed(0):
            raise
    try:
        transact_sync(client, [*s.late, *also], attempts)
        return LATE
    except TransactionRefused as again:
        if again.failed(len(s.late) - 1):
            return ALREADY
        raise


def settle_sync(client: DynamoClient, table: str, s: Settlement, attempts: int) -> str:
    """Apply, or record for the sweep when the transaction stayed busy past `attempts`."""
    try:
        return apply_sync(client, s, attempts)
    except TransactionBusy:
        ps.put_pending_sync(client, table, s.reservation_id, s.run_id, s.normal, s.late)
        log.warning("settlement of reservation %s recorded for the sweep: the budget stayed busy (run %s)",
                    s.reservation_id, s.run_id)
        return PENDING


async def settle_recorded(dynamo: Dynamo, table: str) -> list[JsonObject]:
    """The sweep's first task: run every recorded settlement, deleting its record in the same
    transaction; returns what each did. One still busy is left for the next sweep."""
    done: list[JsonObject] = []
    for item in await dynamo.run(ps.pending_sync, dynamo.client, table):
        reservation_id, normal, late = ps.recorded(item)
        s = Settlement(reservation_id, item_values.client_text(item, "run_id") if "run_id" in item else "", normal, late)
        try:
            outcome = await dynamo.run(apply_sync, dynamo.client, s, None, [ps.delete_pending_op(table, reservation_id)])
        except TransactionBusy:
            continue
        except TransactionRefused as refused:
            if not refused.failed(len(refused.codes) - 1):
                raise
            continue  # another sweep ran it and deleted the record meanwhile
        if outcome == ALREADY:
            await dynamo.run(transact_sync, dynamo.client, [ps.delete_pending_op(table, reservation_id)])
        record: JsonObject = {"reservation_id": reservation_id, "run_id": s.run_id, "outcome": outcome}
        log.warning("settled recorded settlement %s", json.dumps(record))
        done.append(record)
    return done
