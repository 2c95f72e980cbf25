"""Deleting a conversation, by its owner: everything it holds goes, except the money.

In one conditional transaction, the conversation item (and with it the share link: a shared page
reads the same item) and its messages (up to what a transaction holds; the rest right after, when
nothing can reach them any more). The condition is the owner, the version read, and no answer in
progress: an answer that holds the claim makes the delete a 409, and one that committed between
the read and the delete makes it look again. Then what the conversation owns elsewhere, in
`_remove_owned_elsewhere`, the one place a new kind of such data is added. Usage rows stay: they
hold the money spent, the caller and the conversation id, and no text of the conversation.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Awaitable, Callable

from groundchat.store.boto3_helpers import Attr, Key, TypeSerializer  # boto3 loads on first use
from groundchat.store.answers_in_progress import AnswersInProgress
from groundchat.store.conversations import ConversationBusy
from groundchat.store.dynamo import Dynamo, all_pages
from groundchat.store.feedback import FeedbackStore
from groundchat.store.recall_copies import conversations_that_recalled, redact_copies
from groundchat.store.retention import delete_keys_sync, is_expired
from groundchat.store.tables import CONVERSATIONS, MESSAGES, TRACES
from groundchat.store.transactions import TransactionRefused, transact_sync

if TYPE_CHECKING:
    from groundchat.store.items import StoredItem, TableRequest, TransactAction

# DynamoDB allows 100 items per transaction; one is the conversation itself.
MESSAGES_IN_TRANSACTION = 99
# A conversation that keeps changing under the delete (answers committing in a row) is a 409.
ATTEMPTS = 3

_ser = TypeSerializer().serialize


@dataclass(frozen=True)
class Deleted:
    conversation_id: str
    messages: int
    was_shared: bool
    traces: int
    images: int = 0
    recall_entries: int = 0
    # Messages of the owner's other conversations that quoted this one through recall, redacted.
    recalled_copies: int = 0
    # Readers' ratings of its answers (store/feedback.py).
    feedback: int = 0

    def public(self) -> dict[str, str | int | bool]:
        return {"conversation_id": self.conversation_id, "messages": self.messages, "share_link": self.was_shared,
                "traces": self.traces, "images": self.images, "recall_entries": self.recall_entries,
                "recalled_copies": self.recalled_copies, "feedback": self.feedback, "usage_rows": "kept"}


# Deletes a conversation's images (S3), returning how many went: `ConversationStore.delete_images`.
RemoveImages = Callable[[str], Awaitable[int]]
# Removes a conversation's recall entries (owner, conversation id), returning how many went.
RemoveRecall = Callable[[str, str], Awaitable[int]]


async def delete_conversation(dynamo: Dynamo, conversation_id: str, owner: str, *,
                              remove_images: RemoveImages | None = None,
                              remove_recall: RemoveRecall | None = None) -> Deleted | None:
    """None when `owner` has no such conversation (unknown, someone else's, expired: one answer);
    ConversationBusy while an answer to it is in progress."""
    for _ in range(ATTEMPTS):
        item = (await dynamo.run(dynamo.table(CONVERSATIONS).get_item, Key={"conversation_id": conversation_id},
                                 ConsistentRead=True)).get("Item")
        if item is None or item.get("owner") != owner or is_expired(item):
            return None
        now = int(time.time())
        if item.get("active_run") and int(item.get("active_until", 0)) >= now:
            raise ConversationBusy("an answer to this conversation is in progress")
        keys = await dynamo.run(_message_keys_sync, dynamo, conversation_id)
        first, rest = keys[:MESSAGES_IN_TRANSACTION], keys[MESSAGES_IN_TRANSACTION:]
        try:
            await dynamo.run(transact_sync, dynamo.client, [_delete_conversation_op(dynamo, item, now),
                                                             *(_delete_message_op(dynamo, k) for k in first)])
        except TransactionRefused as refused:
            if refused.failed(0):
                continue  # claimed, answered or deleted since the read: look again
            raise
        await dynamo.run(delete_keys_sync, dynamo, MESSAGES, [{"conversation_id": conversation_id, "seq": k["seq"]} for k in rest])
        run_ids = {k["run_id"] for k in keys if k.get("run_id")}
        removed = await _remove_owned_elsewhere(dynamo, item, run_ids, remove_images, remove_recall)
        return Deleted(conversation_id, len(keys), bool(item.get("shared_at")), removed["traces"], removed["images"],
                       removed["recall_entries"], removed["recalled_copies"], removed["feedback"])
    raise ConversationBusy("the conversation kept changing while it was deleted")


async def _remove_owned_elsewhere(dynamo: Dynamo, item: StoredItem, run_ids: set[str],
                                  remove_images: RemoveImages | None,
                                  remove_recall: RemoveRecall | None = None) -> dict[str, int]:
    """What the conversation owns outside its own item and messages, once they are gone: the one
    place for it. Recall entries (the person's past conversations as a search source) go here
    too, and the copies recall made of its words in the owner's other conversations
    (store/recall_copies.py); usage rows never do."""
    conversation_id, owner = item["conversation_id"], item["owner"]
    traces = await dynamo.run(_delete_traces_sync, dynamo, conversation_id, owner, run_ids)
    images = await remove_images(conversation_id) if remove_images is not None and item.get("has_images") else 0
    recall = await remove_recall(owner, conversation_id) if remove_recall is not None else 0
    copies = 0
    for other in await dynamo.run(conversations_that_recalled, dynamo, owner, conversation_id):
        copies += await dynamo.run(redact_copies, dynamo, other, conversation_id)
    feedback = await FeedbackStore(dynamo).delete_for_conversation(conversation_id)
    await AnswersInProgress(dynamo).delete(conversation_id)  # it holds the last question's words
    return {"traces": traces, "images": images, "recall_entries": recall, "recalled_copies": copies, "feedback": feedback}


def _delete_conversation_op(dynamo: Dynamo, item: StoredItem, now: int) -> TransactAction:
    return {"Delete": {
        "TableName": dynamo.name(CONVERSATIONS),
        "Key": {"conversation_id": _ser(item["conversation_id"])},
        "ConditionExpression": "#o = :owner AND version = :v AND (attribute_not_exists(active_run) OR active_until < :now)",
        "ExpressionAttributeNames": {"#o": "owner"},
        "ExpressionAttributeValues": {":owner": _ser(item["owner"]), ":v": _ser(item.get("version", 0)), ":now": _ser(now)},
    }}


def _delete_message_op(dynamo: Dynamo, key: StoredItem) -> TransactAction:
    return {"Delete": {"TableName": dynamo.name(MESSAGES),
                       "Key": {"conversation_id": _ser(key["conversation_id"]), "seq": _ser(key["seq"])}}}


def _message_keys_sync(dynamo: Dynamo, conversation_id: str) -> list[StoredItem]:
    kwargs: TableRequest = {"KeyConditionExpression": Key("conversation_id").eq(conversation_id),
                              "ProjectionExpression": "conversation_id, seq, run_id", "ConsistentRead": True}
    return all_pages(dynamo.table(MESSAGES).query, kwargs)


def _delete_traces_sync(dynamo: Dynamo, conversation_id: str, owner: str, run_ids: set[str]) -> int:
    """The runs' records hold the questions and the tools' arguments: they go too. Found by the
    messages' run ids and by the owner's runs on this conversation (a failed run left no message)."""
    kwargs: TableRequest = {"IndexName": "by_caller", "KeyConditionExpression": Key("caller").eq(owner),
                              "FilterExpression": Attr("conversation_id").eq(conversation_id), "ProjectionExpression": "run_id"}
    found = run_ids | {i["run_id"] for i in all_pages(dynamo.table(TRACES).query, kwargs)}
    delete_keys_sync(dynamo, TRACES, [{"run_id": run_id} for run_id in sorted(found)])
    return len(found)
