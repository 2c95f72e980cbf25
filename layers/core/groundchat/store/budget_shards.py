"""The chat's total and the visitors' ceiling as a pool of shards that lend each other room.

Why: every step's reservation and settlement and every search's charge writes the pool's counter
in a transaction, and DynamoDB cancels transactions that meet on an item (TransactionConflict) and
serves about 1,000 write units a second per item. One counter for the whole chat is therefore the
ceiling of the whole chat (docs/engineering/capacity.md). `GROUNDCHAT_BUDGET_SHARDS` (N) splits
the pool's counter into N items, so concurrent steps mostly write different items.

The rule that keeps the cap exact (escrow): each shard item keeps `room`, the part of the cap it
may still hold or charge. A hold on a shard is conditional on `room >= amount` and takes the amount
out of `room` as it adds it to `committed` (spent + reserved, as on every counter). A settlement
gives back what its step did not use; a lender moves room to a borrower in the same conditional
transaction as the borrower's hold. Every write therefore keeps `room + committed`, summed over the
pool, unchanged, and that sum is set to the cap when the pool is rebased: the rooms together are
always the cap less what the pool has committed, no shard's room is negative, so nothing is held
beyond the cap however many steps reserve at once. Shard 0 is the item the chat had before shards
(`scope="chat"`, `"public"`); shard i is `"chat#i"`.

Rebasing, the one write that changes the sum: every shard carries the cap and the shard count its
rooms were set for (`cap`, `shards`), and every hold or loan is conditional on them being the
process's own settings. A pool that is new, was written before shards existed, or whose cap or N
the operator has changed since is rebased first, in one transaction over every shard item there is
(up to `MAX_SHARDS`), each conditional on being as it was read: the room left (the new cap less
everything committed, in every shard, old ones beyond N included) is split evenly over the first N
shards and every other shard's room is set to zero. So raising the cap gives the new room at once,
lowering it below what is committed leaves every shard without room (refused, as the single
counter would be), and changing N moves the room of dropped shards to the kept ones; reservations
already held stay where they are and settle there. While two versions with different caps run side
by side (a deploy), each rebases the pool to its own cap before holding: every hold is still
within the cap of the process that made it. Code from before shards keeps no `room`: set N above 1
only once every process runs this code.

A blocked pool (a step charged over its bound, `spending.budget_guard`) has the block on every
shard below N; a pool with any blocked shard is never rebased and refuses every hold, and
`groundchat budget unblock` lifts the block from every shard and rebases.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal
from typing import TYPE_CHECKING

from groundchat.store.budget_counters import BLOCKED, POOLS, key, n, plain
from groundchat.store import item_values

if TYPE_CHECKING:
    from groundchat.store.items import DynamoClient, Item, KeysToGet, TransactAction, UpdateAction

# The most shards a pool can have (the setting's bound): a rebase writes them all in one
# transaction, and DynamoDB takes up to 100 items in one.
MAX_SHARDS = 64
# Rooms are split to this precision; the remainder of the split stays with shard 0.
_SPLIT_QUANTUM = Decimal("1e-9")
_GUARD = f"cap = :cap AND shards = :shards AND attribute_not_exists({BLOCKED})"


def shard_scope(pool: str, index: int) -> str:
    return pool if index == 0 else f"{pool}#{index}"


@dataclass(frozen=True)
class Shard:
    index: int
    scope: str
    exists: bool
    room: Decimal | None  # None: never given any (a shard no rebase has reached yet)
    spent: Decimal
    reserved: Decimal
    committed: Decimal | None  # None: no hold ever reached it (absent, or only blocked)
    cap: Decimal | None
    shards: int | None
    blocked: str | None

    @classmethod
    def from_item(cls, pool: str, index: int, item: Item | None) -> "Shard":
        values = plain(item)
        return cls(index=index, scope=shard_scope(pool, index), exists=item is not None,
                   room=item_values.amount(values, "room") if values.get("room") is not None else None,
                   spent=item_values.amount(values, "spent", 0), reserved=item_values.amount(values, "reserved", 0),
                   committed=item_values.amount(values, "committed") if "committed" in values else None,
                   cap=item_values.amount(values, "cap") if "cap" in values else None,
                   shards=item_values.whole(values, "shards") if "shards" in values else None,
                   blocked=item_values.optional_text(values, BLOCKED))

    def set_for(self, cap: Decimal, shards: int) -> bool:
        return self.cap == cap and self.shards == shards

    @property
    def free(self) -> Decimal:
        return max(Decimal(0), self.room or Decimal(0))


def read_pool_sync(client: DynamoClient, table: str, pool: str, period: str, count: int = MAX_SHARDS) -> list[Shard]:
    """Shards 0..count-1 of a pool, read consistently in one BatchGetItem (absent ones too)."""
    keys = [key(shard_scope(pool, i), period) for i in range(count)]
    request: dict[str, KeysToGet[Item]] = {table: {"Keys": keys, "ConsistentRead": True}}
    found: dict[str, Item] = {}
    for attempt in range(8):
        page = client.batch_get_item(RequestItems=request)
        for item in page.get("Responses", {}).get(table, []):
            found[item["scope"]["S"]] = item
        request = page.get("UnprocessedKeys") or {}
        if not request:
            return [Shard.from_item(pool, i, found.get(shard_scope(pool, i))) for i in range(count)]
        time.sleep(min(0.05 * 2 ** attempt, 1.0))  # throttled: back off, then ask for the rest
    raise RuntimeError(f"DynamoDB left shards of {pool!r} unread after 8 tries")


def needs_rebase(shards: list[Shard], cap: Decimal, count: int) -> bool:
    """Shard 0 is not set for this cap and N, or a shard in use is set for another."""
    first = shards[0]
    return not first.set_for(cap, count) or any(s.shards is not None and not s.set_for(cap, count) for s in shards[1:count])


def split(amount: Decimal, count: int) -> list[Decimal]:
    """`amount` in `count` parts that add up to it exactly (shard 0 takes the remainder)."""
    share = (amount / count).quantize(_SPLIT_QUANTUM, rounding=ROUND_FLOOR)
    return [amount - share * (count - 1), *[share] * (count - 1)]


def rebase_ops(table: str, pool: str, period: str, shards: list[Shard], cap: Decimal, count: int) -> list[TransactAction]:
    """Set every shard for (cap, count): the cap less all that is committed, split over the first
    `count`; each write conditional on its shard being as read (see the module's docstring)."""
    # A pool committed past its cap (a step charged beyond its reservation) has no room left,
    # never a negative one that a later loan or hold would read as a debt to others.
    left = max(Decimal(0), cap - sum((s.committed or Decimal(0) for s in shards), Decimal(0)))
    rooms = split(left, count)
    ops: list[TransactAction] = []
    for shard in shards:
        if shard.index >= count and not shard.exists:
            continue
        values: Item = {":room": n(rooms[shard.index] if shard.index < count else 0), ":cap": n(cap), ":shards": n(count)}
        conditions = [f"attribute_not_exists({BLOCKED})"]
        for name, value in (("room", shard.room), ("committed", shard.committed)):
            if value is None:
                conditions.append(f"attribute_not_exists({name})")
            else:
                conditions.append(f"{name} = :was_{name}")
                values[f":was_{name}"] = n(value)
        ops.append({"Update": {
            "TableName": table, "Key": key(shard.scope, period),
            "ConditionExpression": " AND ".join(conditions),
            "UpdateExpression": "SET room = :room, cap = :cap, shards = :shards",
            "ExpressionAttributeValues": values,
        }})
    return ops


def shard_hold_op(table: str, scope: str, period: str, amount: Decimal, cap: Decimal, count: int, *,
                  into: str, borrowed: Decimal = Decimal(0)) -> UpdateAction:
    """Hold (`into="reserved"`) or charge (`into="spent"`) `amount` on one shard, with `borrowed`
    lent to it in the same transaction: only if its room and the loan cover the amount, it is set
    for this cap and N, and it is not blocked."""
    other = {"reserved": "spent", "spent": "reserved"}[into]
    return {"Update": {
        "TableName": table, "Key": key(scope, period),
        "ConditionExpression": f"room >= :need AND {_GUARD}",
        "UpdateExpression": f"SET {other} = if_not_exists({other}, :zero) ADD room :room, committed :amount, {into} :amount",
        "ExpressionAttributeValues": {":need": n(amount - borrowed), ":room": n(borrowed - amount), ":amount": n(amount),
                                      ":zero": n(0), ":cap": n(cap), ":shards": n(count)},
        # On refusal the shard as it stood says why (no room, blocked, or set for another cap).
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }}


def lend_op(table: str, scope: str, period: str, amount: Decimal, cap: Decimal, count: int) -> UpdateAction:
    """Move `amount` of a shard's room out (to the borrower in the same transaction)."""
    return {"Update": {
        "TableName": table, "Key": key(scope, period),
        "ConditionExpression": f"room >= :amount AND {_GUARD}",
        "UpdateExpression": "ADD room :lent",
        "ExpressionAttributeValues": {":amount": n(amount), ":lent": n(-amount), ":cap": n(cap), ":shards": n(count)},
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }}


def block_op(table: str, scope: str, period: str, why: str) -> UpdateAction:
    """Block a shard (made if it was never written: a shard nobody wrote yet is blocked too)."""
    return {"Update": {"TableName": table, "Key": key(scope, period), "UpdateExpression": f"SET {BLOCKED} = :why",
                       "ExpressionAttributeValues": {":why": {"S": why}}}}


def unblock_shard_op(table: str, scope: str, period: str) -> UpdateAction:
    """Lift the block, and the pool's one overdraft with it (spending/overrun.py)."""
    return {"Update": {"TableName": table, "Key": key(scope, period), "ConditionExpression": f"attribute_exists({BLOCKED})",
                       "UpdateExpression": f"REMOVE {BLOCKED}, overdrawn"}}


def reset_shard_op(table: str, shard: Shard, period: str) -> UpdateAction:
    """`spent` back to zero on one shard, its room given back with it (reservations stay held),
    only if the shard is as read, so the reset log says exactly what was reset."""
    return {"Update": {
        "TableName": table, "Key": key(shard.scope, period),
        "ConditionExpression": "spent = :old AND reserved = :reserved",
        "UpdateExpression": "SET spent = :zero ADD committed :minus, room :old",
        "ExpressionAttributeValues": {":old": n(shard.spent), ":reserved": n(shard.reserved), ":zero": n(0), ":minus": n(-shard.spent)},
    }}
