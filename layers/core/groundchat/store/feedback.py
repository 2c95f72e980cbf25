"""Readers' ratings of answers: 👍 or 👎 with the reasons a grounded chat's operators act on.

One item per person per answer in the `feedback` table, beside the conversation's messages
(`entry` = "<seq>#<person>"): rating again replaces it. An answer is rated by its owner, or by a
signed-in reader of its shared page; the two are kept apart (`audience`) and counted separately,
since the owner asked the question and a reader did not. Items carry the answer's run id, so the
run's trace shows them, and go with the conversation when it is deleted (store/deletion.py), or
expire with it (a commit that extends the conversation extends them). The reasons are a vocabulary in data/feedback_reasons.json.
"""
from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Iterator

from botocore.exceptions import ClientError

from groundchat.store.boto3_helpers import Key  # boto3 loads on first use
from groundchat.store.dynamo import Dynamo, all_pages, condition_failed
from groundchat.store.retention import delete_keys_sync
from groundchat.store.tables import FEEDBACK
from groundchat.store import item_values

if TYPE_CHECKING:
    from groundchat.store.items import StoredItem, TableRequest

OWNER, READER = "owner", "reader"
MAX_TEXT_CHARS = 500


@dataclass(frozen=True)
class Reason:
    id: str
    label: str
    alarm: bool  # counted by the daily alarm on wrong numbers and citations


@lru_cache(maxsize=1)
def reasons() -> tuple[Reason, ...]:
    data = json.loads(resources.files("groundchat").joinpath("data/feedback_reasons.json").read_text("utf-8"))
    return tuple(Reason(r["id"], r["label"], bool(r["alarm"])) for r in data["reasons"])


def reason_ids() -> tuple[str, ...]:
    return tuple(r.id for r in reasons())


def alarming(reason_list: list[str]) -> bool:
    flagged = {r.id for r in reasons() if r.alarm}
    return any(r in flagged for r in reason_list)


def entry_key(seq: int, person: str) -> str:
    return f"{seq:08d}#{person}"  # zero-padded: an answer's ratings sort together, in message order


class FeedbackStore:
    def __init__(self, dynamo: Dynamo) -> None:
        self.dynamo = dynamo
        self.table = dynamo.table(FEEDBACK)

    async def put(self, *, conversation_id: str, seq: int, run_id: str | None, person: str, audience: str,
                  rating: str, reasons: list[str], text: str, expires_at: int) -> StoredItem:
        now = dt.datetime.now(dt.timezone.utc)
        item: StoredItem = {
            "conversation_id": conversation_id, "entry": entry_key(seq, person), "seq": seq, "person": person,
            "audience": audience, "rating": rating, "reasons": list(reasons), "text": text,
            "at": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "day": now.strftime("%Y-%m-%d"), "expires_at": int(expires_at),
        }
        if run_id:
            item["run_id"] = run_id
        await self.dynamo.run(self.table.put_item, Item=item)
        return item

    async def for_conversation(self, conversation_id: str) -> list[StoredItem]:
        kwargs: TableRequest = {"KeyConditionExpression": Key("conversation_id").eq(conversation_id), "ConsistentRead": True}
        return await self.dynamo.run(all_pages, self.table.query, kwargs)

    async def mine(self, conversation_id: str, person: str) -> dict[int, StoredItem]:
        """This person's ratings in the conversation, by message seq (what the page shows them)."""
        return {item_values.whole(i, "seq"): i for i in await self.for_conversation(conversation_id) if i.get("person") == person}

    async def for_run(self, conversation_id: str, run_id: str) -> list[StoredItem]:
        return [i for i in await self.for_conversation(conversation_id) if i.get("run_id") == run_id]

    async def refresh_expiry(self, conversation_id: str, expires: int) -> int:
        """Give the conversation's ratings its new expiry (a commit extends it): a rating never
        lapses while its answer lives. Each update is conditional on the rating still existing."""
        changed = 0
        for item in await self.for_conversation(conversation_id):
            if item_values.whole(item, "expires_at", 0) == expires:
                continue
            try:
                await self.dynamo.run(self.table.update_item, Key={"conversation_id": conversation_id, "entry": item["entry"]},
                                      UpdateExpression="SET expires_at = :e", ConditionExpression="attribute_exists(entry)",
                                      ExpressionAttributeValues={":e": int(expires)})
                changed += 1
            except ClientError as exc:
                if not condition_failed(exc):
                    raise
        return changed

    async def delete_for_conversation(self, conversation_id: str) -> int:
        found = await self.for_conversation(conversation_id)
        keys = [{"conversation_id": conversation_id, "entry": i["entry"]} for i in found]
        await self.dynamo.run(delete_keys_sync, self.dynamo, FEEDBACK, keys)
        return len(keys)

    def on_days_sync(self, days: list[str]) -> Iterator[StoredItem]:
        """Every rating given on these days (UTC), oldest first: one Query of the day index each."""
        for day in days:
            kwargs: TableRequest = {"IndexName": "by_day", "KeyConditionExpression": Key("day").eq(day)}
            yield from all_pages(self.table.query, kwargs)


def public_feedback(item: StoredItem) -> dict[str, object]:
    return {"rating": item["rating"], "reasons": item_values.texts(item, "reasons"), "text": item.get("text", ""),
            "at": item.get("at"), "audience": item.get("audience")}


def export_row(item: StoredItem) -> dict[str, object]:
    """One rating as an operator's export has it (JSONL or CSV): no one's words but the rater's."""
    return {"at": item.get("at"), "conversation_id": item["conversation_id"], "seq": item_values.whole(item, "seq"),
            "run_id": item.get("run_id"), "audience": item.get("audience"), "person": item.get("person"),
            "rating": item["rating"], "reasons": item_values.texts(item, "reasons"), "text": item.get("text", "")}


def counts(items: list[StoredItem]) -> dict[str, dict[str, int]]:
    """Per audience: ratings up and down, and how often each reason was given."""
    out: dict[str, Counter[str]] = {}
    for item in items:
        tally = out.setdefault(str(item.get("audience")), Counter())
        tally[str(item["rating"])] += 1
        for reason in item_values.texts(item, "reasons"):
            tally[f"reason:{reason}"] += 1
    return {audience: dict(sorted(tally.items())) for audience, tally in sorted(out.items())}
