"""Retention: a conversation expires `GROUNDCHAT_RETENTION_DAYS` after its last answer, whole.

Every item of a conversation (the conversation and each of its messages) carries the SAME
`expires_at`, so DynamoDB's TTL removes them together, never the oldest exchanges first. Each
commit moves that expiry: the existing messages are given the new one before the commit writes
it on the conversation, so a conversation item that says E means every message says E (a refresh
cut short leaves the conversation at its older expiry, and the next commit refreshes again).
The expiry is the end of a UTC day, so a conversation's items are rewritten at most once a day.

DynamoDB deletes expired items within a few days, not on the second: readers treat an expired
conversation as gone already. Locally, where nothing deletes by TTL, `expire_due` applies the
same rule (the local stack's sweep runs it). What a conversation left outside its tables (recall
entries) carries the same expiry and is swept by `groundchat.recall.sweep`, which reads the
conversations' expiries here (`conversation_expiries_sync`).
"""
from __future__ import annotations

import asyncio
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from groundchat.store.boto3_helpers import TypeDeserializer  # boto3 loads on first use
from groundchat.store.dynamo import Dynamo, condition_failed
from groundchat.store.tables import ALL_TABLES, CONVERSATIONS, MESSAGES, TableDef
from groundchat.store import item_values

if TYPE_CHECKING:
    from collections.abc import Mapping

    from groundchat.store.items import Item, KeysToGet, StoredItem, StoredValue, TableRequest

DAY = 86_400
# Conditional updates in flight at once while a conversation's expiry moves.
REFRESH_CONCURRENCY = 16


def expiry_after(now: float, days: int) -> int:
    """The end of the UTC day `days` days from `now`: at least `days` days, less than one more."""
    return (int(now) // DAY + days + 1) * DAY


def is_expired(item: Mapping[str, StoredValue] | None, now: float | None = None) -> bool:
    if item is None or item.get("expires_at") is None:
        return False
    return item_values.whole(item, "expires_at") <= int(now if now is not None else time.time())


def expires_at_text(item: Mapping[str, StoredValue]) -> str | None:
    """`expires_at` as ISO-8601 UTC, as pages show it."""
    if item.get("expires_at") is None:
        return None
    return datetime.fromtimestamp(item_values.whole(item, "expires_at"), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


async def refresh_messages(dynamo: Dynamo, conversation_id: str, expires: int) -> int:
    """Give every stored message of the conversation `expires`; returns how many changed. A message
    already gone stays gone: each update is conditional on the item existing."""
    keys = await dynamo.run(_stale_seqs_sync, dynamo, conversation_id, expires)
    for start in range(0, len(keys), REFRESH_CONCURRENCY):
        await asyncio.gather(*(dynamo.run(_refresh_one_sync, dynamo, conversation_id, seq, expires)
                               for seq in keys[start:start + REFRESH_CONCURRENCY]))
    return len(keys)


def _stale_seqs_sync(dynamo: Dynamo, conversation_id: str, expires: int) -> list[int]:
    table = dynamo.table(MESSAGES)
    kwargs: TableRequest = {
        "KeyConditionExpression": "conversation_id = :c",
        "ProjectionExpression": "seq, expires_at",
        "ExpressionAttributeValues": {":c": conversation_id},
        "ConsistentRead": True,
    }
    seqs: list[int] = []
    while True:
        page = table.query(**kwargs)
        seqs.extend(item_values.whole(i, "seq") for i in page.get("Items", []) if item_values.whole(i, "expires_at", 0) != expires)
        if "LastEvaluatedKey" not in page:
            return seqs
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _refresh_one_sync(dynamo: Dynamo, conversation_id: str, seq: int, expires: int) -> None:
    try:
        dynamo.table(MESSAGES).update_item(
            Key={"conversation_id": conversation_id, "seq": seq},
            UpdateExpression="SET expires_at = :e",
            ConditionExpression="attribute_exists(seq)",
            ExpressionAttributeValues={":e": expires},
        )
    except ClientError as exc:
        if not condition_failed(exc):
            raise


async def expire_due(dynamo: Dynamo, now: float | None = None) -> dict[str, int]:
    """DynamoDB's TTL rule where no TTL runs (the local stack): every item of a table with a TTL
    attribute whose time has come is deleted. Returns how many per table."""
    cutoff = int(now if now is not None else time.time())
    return {table.logical: await dynamo.run(_expire_table_sync, dynamo, table, cutoff)
            for table in ALL_TABLES if table.ttl_attribute}


def _expire_table_sync(dynamo: Dynamo, table: TableDef, cutoff: int) -> int:
    key_names = [table.hash_key[0], *([table.range_key[0]] if table.range_key else [])]
    names = {f"#k{i}": name for i, name in enumerate(key_names)} | {"#ttl": table.ttl_attribute}
    kwargs: TableRequest = {
        "FilterExpression": "#ttl <= :now",
        "ProjectionExpression": ", ".join(f"#k{i}" for i in range(len(key_names))),
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": {":now": cutoff},
    }
    handle = dynamo.table(table)
    keys: list[StoredItem] = []
    while True:
        page = handle.scan(**kwargs)
        keys.extend(page.get("Items", []))
        if "LastEvaluatedKey" not in page:
            break
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    delete_keys_sync(dynamo, table, keys)
    return len(keys)


# DynamoDB's BatchGetItem reads at most 100 keys a call.
BATCH_GET_KEYS = 100
_deserialize = TypeDeserializer().deserialize


def conversation_expiries_sync(dynamo: Dynamo, conversation_ids: list[str]) -> dict[str, StoredItem]:
    """Owner and `expires_at` of each of these conversations that still has an item (expired or
    not: `is_expired` tells), read by BatchGetItem; keys DynamoDB leaves unprocessed are asked again."""
    name = dynamo.name(CONVERSATIONS)
    found: dict[str, StoredItem] = {}
    ids = list(dict.fromkeys(conversation_ids))
    for start in range(0, len(ids), BATCH_GET_KEYS):
        request: dict[str, KeysToGet[Item]] = {name: {
            "Keys": [{"conversation_id": {"S": cid}} for cid in ids[start:start + BATCH_GET_KEYS]],
            "ProjectionExpression": "conversation_id, #o, expires_at",
            "ExpressionAttributeNames": {"#o": "owner"},
            "ConsistentRead": True,
        }}
        for attempt in range(8):
            page = dynamo.client.batch_get_item(RequestItems=request)
            for raw in page.get("Responses", {}).get(name, []):
                item = {key: _deserialize(value) for key, value in raw.items()}
                found[item_values.text(item, "conversation_id")] = item
            request = page.get("UnprocessedKeys") or {}
            if not request:
                break
            time.sleep(min(0.05 * 2 ** attempt, 1.0))  # throttled: back off, then ask for the rest
        else:
            raise RuntimeError("DynamoDB left conversations unread after 8 tries; the next sweep tries again")
    return found


def delete_keys_sync(dynamo: Dynamo, table: TableDef, keys: list[StoredItem]) -> None:
    """Delete items by key, in batches; boto3's batch writer resends what DynamoDB leaves unprocessed."""
    with dynamo.table(table).batch_writer() as batch:
        for key in keys:
            batch.delete_item(Key=key)
