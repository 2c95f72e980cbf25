"""Usage: one row per model step and per search, with what it cost and who asked.

Rows are written inside the same transaction that moves the money in the budget counters, so the
counters always equal the sum of the rows (less what an operator reset, which the budget table's
reset log records). Rows are only ever added: the put is conditional on the key being new, no
code path deletes or rewrites one, and the table has no TTL, because money spent is never
forgotten.

Key: the run, then an entry sortable by time whose tail is the reservation id, so a settle that is
retried after a lost reply finds its own row instead of writing a second one.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from groundchat.store.budget_counters import n, plain
from groundchat.store.items import Item, TransactAction
from groundchat.store import item_values

if TYPE_CHECKING:
    from groundchat.store.items import ClientRead, DynamoClient, RequestParam, StoredItem


KIND_MODEL_STEP = "model-step"
# A model step that summarised a long conversation's oldest exchanges (chat/summarise.py).
KIND_HISTORY_SUMMARY = "history-summary"
KIND_SEARCH = "search"


def entry_key(created_at: str, reservation_id: str) -> str:
    return f"{created_at}#{reservation_id}"


@dataclass(frozen=True)
class UsageRow:
    """One usage row's fields (a model step's or a search's), before it becomes the table's item."""

    run_id: str
    entry: str  # `entry_key(created_at, reservation id)`
    created_at: str
    conversation_id: str
    caller: str
    model: str
    kind: str
    charged: Decimal
    our_cost: Decimal
    reserved: Decimal
    provider_cost: Decimal | None
    provider_cost_trusted: bool
    measured: bool
    counters: list[tuple[str, str]]
    step: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    failed: bool = False
    reservation_expired: bool = False
    over_bound: bool = False
    disputed: Decimal | None = None
    overdraft: bool = False


def usage_item(row: UsageRow) -> Item:
    item: Item = {
        "run_id": {"S": row.run_id},
        "entry": {"S": row.entry},
        "created_at": {"S": row.created_at},
        "conversation_id": {"S": row.conversation_id or "-"},
        "caller": {"S": row.caller},
        "model": {"S": row.model},
        "kind": {"S": row.kind},
        "charged": n(row.charged),
        "our_cost": n(row.our_cost),
        "reserved": n(row.reserved),
        "provider_cost_trusted": {"BOOL": row.provider_cost_trusted},
        # False: the model reported no usage, so the whole reservation was charged.
        "measured": {"BOOL": row.measured},
        "failed": {"BOOL": row.failed},
        "counters": {"L": [{"L": [{"S": s}, {"S": p}]} for s, p in row.counters]},
    }
    if row.reservation_expired:
        # The sweep released this reservation before the step settled (it outlived its expiry).
        item["reservation_expired"] = {"BOOL": True}
    if row.over_bound:
        # Charged more than the step could cost (its reservation): counted all the same, and the
        # chat's spending blocked until an operator looks (spending/budget_guard.py).
        item["over_bound"] = {"BOOL": True}
    if row.disputed:
        # Reported beyond what the step may be charged (its reservation and the operator's bound,
        # or the reservation alone when the caps had no room): recorded, never charged.
        item["disputed"] = n(row.disputed)
    if row.overdraft:
        # This step's overrun passed the caps: the one a pool allows until an operator unblocks it.
        item["overdraft"] = {"BOOL": True}
    if row.provider_cost is not None:
        item["provider_cost"] = n(row.provider_cost)
    for name, value in (
        ("step", row.step),
        ("input_tokens", row.input_tokens),
        ("output_tokens", row.output_tokens),
        ("cache_read_tokens", row.cache_read_tokens),
        ("cache_write_tokens", row.cache_write_tokens),
    ):
        if value is not None:
            item[name] = {"N": str(int(value))}
    return item


def put_usage_op(table_name: str, item: Item) -> TransactAction:
    """Add a row; never replace one."""
    return {"Put": {"TableName": table_name, "Item": item, "ConditionExpression": "attribute_not_exists(run_id)"}}


def get_usage_row_sync(client: DynamoClient, table_name: str, run_id: str, entry: str) -> StoredItem | None:
    got = client.get_item(TableName=table_name, Key={"run_id": {"S": run_id}, "entry": {"S": entry}}, ConsistentRead=True)
    return plain(got["Item"]) if "Item" in got else None


def rows_for_run_sync(client: DynamoClient, table_name: str, run_id: str) -> list[StoredItem]:
    return _paged(client.query, TableName=table_name, KeyConditionExpression="run_id = :r",
                  ExpressionAttributeValues={":r": {"S": run_id}}, ConsistentRead=True)


def all_rows_sync(client: DynamoClient, table_name: str) -> list[StoredItem]:
    """Every row (reconciliation and tests; the table is read whole, so not for requests)."""
    return _paged(client.scan, TableName=table_name, ConsistentRead=True)


def total_charged(rows: list[StoredItem]) -> Decimal:
    return sum((item_values.amount(r, "charged") for r in rows), Decimal(0))


def _paged(call: ClientRead, **kwargs: RequestParam) -> list[StoredItem]:
    rows: list[StoredItem] = []
    while True:
        page = call(**kwargs)
        rows.extend(plain(item) for item in page.get("Items", []))
        if "LastEvaluatedKey" not in page:
            return rows
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
