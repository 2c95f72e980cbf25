"""Budget counters and reservations on DynamoDB.

One item per cap and period: the chat's total (`scope="chat"`) and each person's
(`scope="user#<id>"`); `period` is "total" or the month ("2026-11") when caps reset monthly. Each
counter keeps `spent`, `reserved` and `committed`. DynamoDB conditions can compare an attribute
with a value but cannot add attributes together, so `committed` (always spent + reserved, because
every write changes them in the same expression) is what the cap condition reads:
`committed <= cap - this` holds exactly when `spent + reserved + this <= cap`.

Reservations are items of the same table (`scope="reservation#<id>"`), so a reservation and the
counters it holds move in one transaction. They carry their expiry in a sparse index that only
open reservations have, which is what the sweep reads. The table has no TTL on purpose: a TTL
deleting a reservation would leave its amount held in the counters for good.
"""
from __future__ import annotations

import calendar
import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from groundchat.money import money_text
from groundchat.store.dynamo import all_client_pages
from groundchat.store.boto3_helpers import TypeDeserializer  # boto3 loads on first use
from groundchat.store.items import Item, Request
from groundchat.store import item_values

if TYPE_CHECKING:
    from groundchat.store.items import (AttributeValue, DeleteAction, DeleteRequest, DynamoClient, PutAction, StoredItem,
                                        UpdateAction)


CHAT_SCOPE = "chat"
# What all anonymous visitors of a public chat spend together (public mode only).
PUBLIC_SCOPE = "public"
# The caps held as a pool of shards (store/budget_shards.py); a person's cap is one counter.
POOLS = (CHAT_SCOPE, PUBLIC_SCOPE)
RESERVATION_OPEN = "open"
RESET_LOG_SCOPE = "reset-log"
NO_PERIOD = "-"

_deserializer = TypeDeserializer()


def user_scope(caller_id: str) -> str:
    return f"user#{caller_id}"


def pool_of(scope: str) -> str | None:
    """The pool a counter scope is a shard of ("chat#3" -> "chat"), or None (a person's counter)."""
    head, _, tail = scope.partition("#")
    if head in POOLS and (not tail or tail.isdigit()):
        return head
    return None


def reservation_scope(reservation_id: str) -> str:
    return f"reservation#{reservation_id}"


def period_key(budget_period: str, now: dt.datetime | None = None) -> str:
    """The counter period a spend at `now` falls in."""
    if budget_period == "total":
        return "total"
    if budget_period == "month":
        now = now or dt.datetime.now(dt.timezone.utc)
        return f"{now.year:04d}-{now.month:02d}"
    raise ValueError(f"GROUNDCHAT_BUDGET_PERIOD must be 'total' or 'month', not {budget_period!r}")


def resets_at(budget_period: str, now: dt.datetime | None = None) -> str | None:
    """When the current period's counters stop counting (start of next month, UTC), if ever."""
    if budget_period != "month":
        return None
    now = now or dt.datetime.now(dt.timezone.utc)
    days = calendar.monthrange(now.year, now.month)[1]
    start = dt.datetime(now.year, now.month, 1, tzinfo=dt.timezone.utc)
    return (start + dt.timedelta(days=days)).isoformat().replace("+00:00", "Z")


def n(amount: Decimal | int) -> dict[str, str]:
    """A DynamoDB number, written from a Decimal without a float or an exponent."""
    return {"N": money_text(Decimal(amount))}


def key(scope: str, period: str) -> Item:
    return {"scope": {"S": scope}, "period": {"S": period}}


def plain(item: Item | None) -> StoredItem:
    """A low-level item as Python values (numbers as Decimal)."""
    return {k: _deserializer.deserialize(v) for k, v in (item or {}).items()}


# On a counter: nothing more may be held or charged against it (a step reported more than its
# bound, `spending.budget_guard`), until an operator runs `groundchat budget unblock`.
BLOCKED = "blocked"


@dataclass(frozen=True)
class Counter:
    scope: str
    period: str
    spent: Decimal = Decimal(0)
    reserved: Decimal = Decimal(0)
    committed: Decimal = Decimal(0)
    blocked: str | None = None

    @classmethod
    def from_item(cls, scope: str, period: str, item: Item | None) -> "Counter":
        values = plain(item)
        return cls(
            scope=scope,
            period=period,
            spent=item_values.amount(values, "spent", 0),
            reserved=item_values.amount(values, "reserved", 0),
            committed=item_values.amount(values, "committed", 0),
            blocked=item_values.optional_text(values, BLOCKED),
        )


def read_counter_sync(client: DynamoClient, table_name: str, scope: str, period: str) -> Counter:
    got = client.get_item(TableName=table_name, Key=key(scope, period), ConsistentRead=True)
    return Counter.from_item(scope, period, got.get("Item"))


def within_cap_op(table_name: str, scope: str, period: str, amount: Decimal, cap: Decimal, *, into: str) -> UpdateAction:
    """Add `amount` to `into` ("reserved" for a hold, "spent" for a charge known in advance) and to
    committed, only if committed stays within the cap and the counter is not blocked (`BLOCKED`)."""
    other = {"reserved": "spent", "spent": "reserved"}[into]
    return {
        "Update": {
            "TableName": table_name,
            "Key": key(scope, period),
            # A counter that does not exist yet has committed nothing; the caller has already
            # refused amounts larger than the cap, so the bound is never negative here.
            "ConditionExpression": f"(attribute_not_exists(committed) OR committed <= :bound) AND attribute_not_exists({BLOCKED})",
            "UpdateExpression": f"SET cap = :cap, {other} = if_not_exists({other}, :zero) ADD committed :amount, {into} :amount",
            "ExpressionAttributeValues": {":bound": n(cap - amount), ":cap": n(cap), ":zero": n(0), ":amount": n(amount)},
            # On refusal the counter as it stood says how much was left.
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
    }


def settle_op(table_name: str, scope: str, period: str, charged: Decimal, released: Decimal,
              *, block: str | None = None) -> UpdateAction:
    """Move a reservation into spent: spent += charged, reserved -= released, committed follows.
    `block`: why nothing more may be held on this counter until an operator unblocks it."""
    values: dict[str, AttributeValue] = {":charged": n(charged), ":release": n(-released), ":delta": n(charged - released)}
    # A shard of a pool keeps its room beside committed: what the step did not use is room again.
    room = ", room :room" if pool_of(scope) else ""
    if room:
        values[":room"] = n(released - charged)
    blocking = ""
    if block is not None:
        blocking = f" SET {BLOCKED} = :why"
        values[":why"] = {"S": block}
    return {
        "Update": {
            "TableName": table_name,
            "Key": key(scope, period),
            # The counter exists: the reservation being settled (or charged) was added to it.
            "ConditionExpression": "attribute_exists(committed)",
            "UpdateExpression": "ADD spent :charged, reserved :release, committed :delta" + room + blocking,
            "ExpressionAttributeValues": values,
        }
    }


def release_op(table_name: str, scope: str, period: str, amount: Decimal) -> UpdateAction:
    values: dict[str, AttributeValue] = {":release": n(-amount)}
    room = ""
    if pool_of(scope):
        room, values[":room"] = ", room :room", n(amount)
    return {
        "Update": {
            "TableName": table_name,
            "Key": key(scope, period),
            "ConditionExpression": "attribute_exists(committed)",
            "UpdateExpression": "ADD reserved :release, committed :release" + room,
            "ExpressionAttributeValues": values,
        }
    }


def reservation_item(
    reservation_id: str,
    *,
    amount: Decimal,
    counters: list[tuple[str, str]],
    expires_at: int,
    created_at: str,
    caller: str,
    run_id: str,
    conversation_id: str,
    model: str,
    kind: str,
    step: int | None,
) -> Item:
    item: Item = {
        **key(reservation_scope(reservation_id), NO_PERIOD),
        "reservation_state": {"S": RESERVATION_OPEN},
        "amount": n(amount),
        "counters": {"L": [{"L": [{"S": s}, {"S": p}]} for s, p in counters]},
        "expires_at": {"N": str(int(expires_at))},
        "created_at": {"S": created_at},
        "caller": {"S": caller},
        "run_id": {"S": run_id},
        "conversation_id": {"S": conversation_id},
        "model": {"S": model},
        "kind": {"S": kind},
    }
    if step is not None:
        item["step"] = {"N": str(step)}
    return item


def put_reservation_op(table_name: str, item: Item) -> PutAction:
    # "scope" is a DynamoDB reserved word, hence the name placeholder.
    return {"Put": {"TableName": table_name, "Item": item, "ConditionExpression": "attribute_not_exists(#s)", "ExpressionAttributeNames": {"#s": "scope"}}}


def close_reservation_op(table_name: str, reservation_id: str, *, expired_before: int | None = None) -> DeleteAction:
    """Delete an open reservation. Whoever deletes it (settle or sweep) is the only one who
    releases its amount: the condition makes the second one fail instead of releasing twice."""
    op: DeleteRequest = {
        "TableName": table_name,
        "Key": key(reservation_scope(reservation_id), NO_PERIOD),
        "ConditionExpression": "attribute_exists(#s)",
        "ExpressionAttributeNames": {"#s": "scope"},
    }
    if expired_before is not None:
        op["ConditionExpression"] = "attribute_exists(#s) AND expires_at < :now"
        op["ExpressionAttributeValues"] = {":now": {"N": str(int(expired_before))}}
    return {"Delete": op}


def renew_reservation_sync(client: DynamoClient, table_name: str, reservation_id: str, until: int) -> bool:
    """Moves an open reservation's expiry (its lease) to `until`; False when it is gone (settled or swept)."""
    try:
        client.update_item(TableName=table_name, Key=key(reservation_scope(reservation_id), NO_PERIOD),
                           UpdateExpression="SET expires_at = :u", ConditionExpression="attribute_exists(#s)",
                           ExpressionAttributeNames={"#s": "scope"}, ExpressionAttributeValues={":u": {"N": str(int(until))}})
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
            return False
        raise
    return True


def reservation_counters(item: Item) -> list[tuple[str, str]]:
    return item_values.string_pairs(plain(item), "counters")


def expired_reservations_sync(client: DynamoClient, table_name: str, now: int) -> list[Item]:
    """Open reservations whose expiry has passed (the index is eventually consistent; the
    release itself is conditional, so a stale entry is harmless)."""
    kwargs: Request = {
        "TableName": table_name,
        "IndexName": "by_expiry",
        "KeyConditionExpression": "reservation_state = :open AND expires_at < :now",
        "ExpressionAttributeValues": {":open": {"S": RESERVATION_OPEN}, ":now": {"N": str(int(now))}},
    }
    return all_client_pages(client.query, kwargs)


def open_reservations_sync(client: DynamoClient, table_name: str) -> list[Item]:
    kwargs: Request = {
        "TableName": table_name,
        "IndexName": "by_expiry",
        "KeyConditionExpression": "reservation_state = :open",
        "ExpressionAttributeValues": {":open": {"S": RESERVATION_OPEN}},
    }
    return all_client_pages(client.query, kwargs)
