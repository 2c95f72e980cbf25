"""The summary of a conversation's oldest messages, kept on the conversation item.

The stored messages never change; the summary sits beside them so the next answer starts from it
instead of summarising the same exchanges again (and paying for it again). It goes wherever the
conversation goes: deleted with it, expiring with it.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from groundchat.store.dynamo import Dynamo, condition_failed
from groundchat.store.tables import CONVERSATIONS

if TYPE_CHECKING:
    from groundchat.store.items import StoredItem

SUMMARY_ATTRIBUTE = "history_summary"


@dataclass(frozen=True)
class StoredSummary:
    text: str
    # The summary stands for the messages with seq < through.
    through: int
    # How many times the history was compacted into it.
    compactions: int = 1


def stored_summary(conversation: StoredItem | None) -> StoredSummary | None:
    raw = (conversation or {}).get(SUMMARY_ATTRIBUTE)
    if not raw or not isinstance(raw, str):  # absent, or not the JSON text this module writes
        return None
    try:
        data = json.loads(raw)
        return StoredSummary(str(data["text"]), int(data["through"]), int(data.get("compactions", 1)))
    except (ValueError, KeyError, TypeError):  # unreadable: summarise afresh rather than fail the answer
        return None


async def save_summary(dynamo: Dynamo, conversation_id: str, run_id: str, summary: StoredSummary) -> bool:
    """Kept only while this run holds the conversation's claim; False when it no longer does (the
    summary still serves this answer, and the next one summarises again)."""
    try:
        await dynamo.run(
            dynamo.table(CONVERSATIONS).update_item,
            Key={"conversation_id": conversation_id},
            UpdateExpression="SET #s = :s",
            ConditionExpression="active_run = :run",
            ExpressionAttributeNames={"#s": SUMMARY_ATTRIBUTE},
            ExpressionAttributeValues={":s": json.dumps(asdict(summary), ensure_ascii=False), ":run": run_id},
        )
    except ClientError as exc:
        if condition_failed(exc):
            return False
        raise
    return True
