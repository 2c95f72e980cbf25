"""Settlements recorded for the sweep, when the budget stayed too busy to take them at once.

A settlement records money already spent, so it is never dropped: when its transaction keeps
meeting others (TransactionConflict) past its attempts, the transaction itself is written as one
item of the budget table (`scope="settlement#<reservation id>"`), with a plain conditional put that
no transaction of anyone else touches. The sweep lists these items (they are in the `by_expiry`
index under their own state) and runs each transaction, deleting the item in it, before it releases
any expired reservation; the release of a reservation checks in its own transaction that no such
item exists, so a step's money is never given back as if unspent. Until then the reservation still
holds the step's worst case against the caps, which is at least what it costs.
"""
from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from groundchat.store.budget_counters import NO_PERIOD, key
from groundchat.store import item_values
from groundchat.store.dynamo import all_client_pages

if TYPE_CHECKING:
    from groundchat.store.items import DynamoClient, Item, Request, TransactAction

PENDING_STATE = "settling"


def pending_scope(reservation_id: str) -> str:
    return f"settlement#{reservation_id}"


def put_pending_sync(client: DynamoClient, table: str, reservation_id: str, run_id: str,
                     normal: list[TransactAction], late: list[TransactAction]) -> None:
    """Record a settlement (the transaction as it would run, and its form for a reservation the
    sweep released first). A second record of the same one is refused by the condition."""
    item: Item = {
        **key(pending_scope(reservation_id), NO_PERIOD),
        "reservation_state": {"S": PENDING_STATE},
        "expires_at": {"N": str(int(time.time()))},
        "run_id": {"S": run_id},
        "transaction": {"S": json.dumps(normal)},
        "late_transaction": {"S": json.dumps(late)},
    }
    client.put_item(TableName=table, Item=item, ConditionExpression="attribute_not_exists(#s)",
                    ExpressionAttributeNames={"#s": "scope"})


def pending_sync(client: DynamoClient, table: str) -> list[Item]:
    kwargs: Request = {
        "TableName": table,
        "IndexName": "by_expiry",
        "KeyConditionExpression": "reservation_state = :pending",
        "ExpressionAttributeValues": {":pending": {"S": PENDING_STATE}},
    }
    return all_client_pages(client.query, kwargs)


def recorded(item: Item) -> tuple[str, list[TransactAction], list[TransactAction]]:
    """(reservation id, transaction, late transaction) of a recorded settlement."""
    return (item_values.client_text(item, "scope").split("#", 1)[1],
            json.loads(item_values.client_text(item, "transaction")),
            json.loads(item_values.client_text(item, "late_transaction")))


def delete_pending_op(table: str, reservation_id: str) -> TransactAction:
    return {"Delete": {"TableName": table, "Key": key(pending_scope(reservation_id), NO_PERIOD),
                       "ConditionExpression": "attribute_exists(#s)", "ExpressionAttributeNames": {"#s": "scope"}}}


def no_pending_check(table: str, reservation_id: str) -> TransactAction:
    """A release's guard: the reservation has no settlement waiting for the sweep."""
    return {"ConditionCheck": {"TableName": table, "Key": key(pending_scope(reservation_id), NO_PERIOD),
                               "ConditionExpression": "attribute_not_exists(#s)", "ExpressionAttributeNames": {"#s": "scope"}}}
