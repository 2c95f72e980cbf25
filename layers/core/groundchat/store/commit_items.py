"""The items one commit writes: the conversation's part (created, or moved on one version under
the answering run's claim) and each message, as DynamoDB's low-level client takes them."""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from groundchat.store.boto3_helpers import TypeSerializer  # boto3 loads on first use
from groundchat.store.conversation_images import images_attribute
from groundchat.models.messages import Message
from groundchat.store import item_values

if TYPE_CHECKING:
    from groundchat.store.items import Item, StoredItem, TransactAction

_serializer = TypeSerializer()


def serialized(item: StoredItem) -> Item:
    """An item in the low-level client's attribute values, its None values left out."""
    return {k: _serializer.serialize(v) for k, v in item.items() if v is not None}


def conversation_op(table: str, conversation_id: str, owner: str, run_id: str, existing: StoredItem | None, *,
                     title: str, stamp: str, visible: int, written: int, expires: int, with_images: bool,
                     recalled_from: Sequence[str]) -> TransactAction:
    """The conversation's part of a commit: created (the id unused), or moved on one version under
    this run's claim; either way naming the conversations recall copied from (store/recall_copies.py)."""
    if existing is None:
        return {"Put": {
            "TableName": table,
            "Item": serialized({
                "conversation_id": conversation_id, "owner": owner, "title": title[:120],
                "created_at": stamp, "updated_at": stamp, "message_count": visible,
                "next_seq": written, "version": 1, "expires_at": expires, "has_images": with_images or None,
                "recalled_from": set(recalled_from) or None,
            }),
            "ConditionExpression": "attribute_not_exists(conversation_id)",
        }}
    recalled = {":rf": set(recalled_from)} if recalled_from else {}
    return {"Update": {
        "TableName": table,
        "Key": serialized({"conversation_id": conversation_id}),
        "UpdateExpression": "SET version = :new, message_count = message_count + :n, next_seq = next_seq + :k, updated_at = :t, expires_at = :e, has_images = :img REMOVE active_run, active_until"
                            + (" ADD recalled_from :rf" if recalled else ""),
        "ConditionExpression": "version = :old AND active_run = :run AND #o = :owner",
        "ExpressionAttributeNames": {"#o": "owner"},
        "ExpressionAttributeValues": serialized({
            ":new": item_values.whole(existing, "version") + 1, ":old": item_values.whole(existing, "version"), ":n": visible, ":k": written,
            ":t": stamp, ":e": expires, ":run": run_id, ":owner": owner, ":img": with_images, **recalled,
        }),
    }}


def message_item(conversation_id: str, seq: int, message: Message, run_id: str, stamp: str, expires: int) -> StoredItem:
    return {
        "conversation_id": conversation_id,
        "seq": seq,
        "role": message.role,
        "content": message.content,
        "tool_calls": json.dumps([c.model_dump() for c in message.tool_calls]) if message.tool_calls else None,
        "tool_call_id": message.tool_call_id,
        "name": message.name,
        "is_error": message.is_error or None,
        "images": images_attribute(conversation_id, message),
        "run_id": run_id,
        "created_at": stamp,
        "expires_at": expires,
    }
