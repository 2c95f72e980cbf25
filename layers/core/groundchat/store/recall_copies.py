"""Where recall copied one conversation's words into another, and what becomes of the copies.

The recall tool hands an answer excerpts of the caller's other conversations (their questions,
part of their answers, their links), and the answer quotes them. So the commit marks the messages
that may carry them, and the conversation, with `recalled_from` (the ids they came from). Two rules
follow:

- **A shared page never shows them:** the recall result becomes how many past conversations were
  consulted, and an answer built on them says it drew on them instead of its words.
- **Deleting a conversation deletes its copies:** every other conversation of the owner that
  recalled it has the copies redacted in place: the recall result keeps its refs without their
  text, the answer's words (which quoted them) are replaced by a note, and a history summary
  written from them is dropped. What the deleted
  conversation's words can no longer reach is then nothing; an answer built on recall is never
  indexed for recall itself (chat/stored_run.py), so no entry echoes them either.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from groundchat.json_shapes import JsonList, as_list
from groundchat.store import item_values
from groundchat.store.boto3_helpers import Attr, Key
from groundchat.store.dynamo import all_pages, condition_failed
from groundchat.store.history_summary import SUMMARY_ATTRIBUTE
from groundchat.store.tables import CONVERSATIONS, MESSAGES

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from groundchat.json_shapes import JsonValue
    from groundchat.store.dynamo import Dynamo
    from groundchat.store.items import StoredItem, Table

RECALL_TOOL = "search_my_conversations"  # the tool's name (tools/recall_tool.py); the store sits below it
SHARED_ANSWER = "This answer drew on the owner's earlier conversations, which a shared page does not show."
SHARED_RESULT_NOTE = "consulted; a shared page does not show them"
REDACTED_ANSWER = "This answer quoted a conversation that has since been deleted, so its words were removed."
REDACTED_EXCERPT = "(from a conversation since deleted)"


def withheld_on_a_shared_page(item: StoredItem) -> StoredItem:
    """The message as a shared page may show it: no words of the owner's other conversations."""
    if item.get("role") == "tool" and item.get("name") == RECALL_TOOL:
        result = _result(item)
        consulted = len(as_list(result.get("excerpts") or [])) if isinstance(result, dict) else 0
        content = json.dumps({"outcome": "withheld", "consulted": consulted, "excerpts": [],
                              "note": f"{consulted} past conversation{'' if consulted == 1 else 's'} {SHARED_RESULT_NOTE}"})
        return {**item, "content": content}
    if item.get("role") == "assistant":
        return {**item, "content": SHARED_ANSWER if item.get("content") else "", "annotations": None}
    return item


def conversations_that_recalled(dynamo: Dynamo, owner: str, conversation_id: str) -> list[str]:
    """The owner's other conversations whose answers were handed words of this one."""
    found = all_pages(dynamo.table(CONVERSATIONS).query, {
        "IndexName": "by_owner", "KeyConditionExpression": Key("owner").eq(owner),
        "FilterExpression": Attr("recalled_from").contains(conversation_id), "ProjectionExpression": "conversation_id"})
    return [str(i["conversation_id"]) for i in found if i["conversation_id"] != conversation_id]


def redact_copies(dynamo: Dynamo, conversation_id: str, deleted_id: str) -> int:
    """Redacts, in `conversation_id`, every message that may carry words of `deleted_id`; returns
    how many were. Each write is conditional on the message still existing (a redaction must never
    bring back a message deleted meanwhile)."""
    messages = dynamo.table(MESSAGES)
    carrying = all_pages(messages.query, {"KeyConditionExpression": Key("conversation_id").eq(conversation_id),
                                          "FilterExpression": Attr("recalled_from").contains(deleted_id),
                                          "ConsistentRead": True})
    redacted = sum(_redact(messages, item, deleted_id) for item in carrying)
    try:
        dynamo.table(CONVERSATIONS).update_item(
            # A summary of the older messages may have been written from the copies: it goes too, and
            # the next answer summarises the redacted messages again.
            Key={"conversation_id": conversation_id}, UpdateExpression=f"DELETE recalled_from :gone REMOVE {SUMMARY_ATTRIBUTE}",
            ConditionExpression="attribute_exists(conversation_id)", ExpressionAttributeValues={":gone": {deleted_id}})
    except ClientError as exc:
        if not condition_failed(exc):
            raise
    return redacted


async def redact_copies_of_deleted(dynamo: Dynamo, conversation_id: str, recalled_from: Sequence[str],
                                   still_held: Callable[[str], Awaitable[bool]]) -> int:
    """After a commit that recalled `recalled_from`: the words of each of them that is no longer
    held (deleted, or expired, while the answer ran: its deletion's search for copies came before
    this commit and found none) are redacted here. How many messages were."""
    redacted = 0
    for source in recalled_from:
        if not await still_held(source):
            redacted += await dynamo.run(redact_copies, dynamo, conversation_id, source)
    return redacted


def _redact(messages: Table, item: StoredItem, deleted_id: str) -> int:
    if item.get("role") == "tool" and item.get("name") == RECALL_TOOL:
        result = _result(item)
        if isinstance(result, dict):
            kept: JsonList = [_without_words(x) if isinstance(x, dict) and _from(x, deleted_id) else x
                              for x in as_list(result.get("excerpts") or [])]
            result["excerpts"] = kept
        update, values = "SET content = :c", {":c": json.dumps(result)}
    elif item.get("role") == "assistant":
        update, values = "SET content = :c REMOVE annotations", {":c": REDACTED_ANSWER if item.get("content") else ""}
    else:
        return 0
    try:
        messages.update_item(
            Key={"conversation_id": item["conversation_id"], "seq": item["seq"]},
            UpdateExpression=f"{update} DELETE recalled_from :gone",
            ConditionExpression="attribute_exists(seq)",
            ExpressionAttributeValues={**values, ":gone": {deleted_id}})
    except ClientError as exc:
        if condition_failed(exc):
            return 0
        raise
    return 1


def _result(item: StoredItem) -> JsonValue:
    try:
        return json.loads(item_values.optional_text(item, "content") or "null")
    except ValueError:
        return None


def _from(excerpt: JsonValue, conversation_id: str) -> bool:
    return isinstance(excerpt, dict) and excerpt.get("source") == "conversation" and excerpt.get("section") == conversation_id


def _without_words(excerpt: dict[str, JsonValue]) -> dict[str, JsonValue]:
    return {"ref": excerpt.get("ref"), "source": "conversation", "removed": True, "text": REDACTED_EXCERPT}
