"""Deleting a conversation, by its owner: everything it holds goes, except the money.

In one conditional transaction: the deletion job's record (store/deletion_jobs.py), the
conversation item (and with it the share link: a shared page reads the same item) and its first
messages. The condition is the owner, the version read, and no answer in progress: an answer that
holds the claim makes the delete a 409, and one that committed between the read and the delete
makes it look again. Then the job removes what the conversation owns elsewhere (its other
messages, traces, images, recall entries, recall's copies, feedback, the answer record), and a
crash anywhere in that leaves the job for a second DELETE or the sweep to finish. Usage rows stay:
they hold the money spent, the caller and the conversation id, and no text of the conversation.

With no conversation item, the owner's DELETE still finishes what is theirs under the id: a
deletion left pending, or a first question that ended unanswered (its answer record and trace):
`FINISHED`, which the route answers 204.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from groundchat.store import deletion_jobs as jobs
from groundchat.store.answers_in_progress import AnswersInProgress
from groundchat.store.boto3_helpers import TypeSerializer  # boto3 loads on first use
from groundchat.store.conversations import ConversationBusy
from groundchat.store.deletion_jobs import CONVERSATION, UNANSWERED, Cleaners, DeletionJob, message_keys_sync
from groundchat.store.dynamo import Dynamo
from groundchat.store.leases import CLAIM_LEASE_SECONDS
from groundchat.store.retention import is_expired
from groundchat.store.tables import CONVERSATIONS, MESSAGES
from groundchat.store.transactions import TransactionRefused, transact_sync
from groundchat.store import item_values

if TYPE_CHECKING:
    from groundchat.store.items import StoredItem, TransactAction

# DynamoDB allows 100 items per transaction; one is the conversation itself, one the job's record.
MESSAGES_IN_TRANSACTION = 98
# A conversation that keeps changing under the delete (answers committing in a row) is a 409.
ATTEMPTS = 3
# What a DELETE that found no conversation item but finished the owner's leftovers returns.
FINISHED = "finished"

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


async def delete_conversation(dynamo: Dynamo, conversation_id: str, owner: str,
                              cleaners: Cleaners = Cleaners()) -> Deleted | str | None:
    """The conversation deleted; `FINISHED` when only the owner's leftovers under the id were
    (see the module); None when `owner` has nothing under it (unknown, someone else's, expired:
    one answer); ConversationBusy while an answer to it is in progress."""
    for _ in range(ATTEMPTS):
        item = (await dynamo.run(dynamo.table(CONVERSATIONS).get_item, Key={"conversation_id": conversation_id},
                                 ConsistentRead=True)).get("Item")
        if item is None or item.get("owner") != owner or is_expired(item):
            return await finish_leftovers(dynamo, conversation_id, owner, cleaners) if item is None else None
        now = int(time.time())
        if item.get("active_run") and item_values.whole(item, "active_until", 0) >= now:
            raise ConversationBusy("an answer to this conversation is in progress")
        keys = await dynamo.run(message_keys_sync, dynamo, conversation_id)
        job = DeletionJob(conversation_id, owner, CONVERSATION, tuple(sorted({str(k["run_id"]) for k in keys if k.get("run_id")})),
                          bool(item.get("has_images")))
        first = keys[:MESSAGES_IN_TRANSACTION]
        try:
            await dynamo.run(transact_sync, dynamo.client, [_delete_conversation_op(dynamo, item, now), jobs.record_op(dynamo, job),
                                                             *(_delete_message_op(dynamo, k) for k in first)])
        except TransactionRefused as refused:
            if refused.failed(0):
                continue  # claimed, answered or deleted since the read: look again
            raise
        removed = await jobs.finish(dynamo, job, cleaners)
        return Deleted(conversation_id, len(keys), bool(item.get("shared_at")), removed["traces"], removed["images"],
                       removed["recall_entries"], removed["recalled_copies"], removed["feedback"])
    raise ConversationBusy("the conversation kept changing while it was deleted")


async def finish_leftovers(dynamo: Dynamo, conversation_id: str, owner: str, cleaners: Cleaners) -> str | None:
    """No conversation item: the owner's unanswered first question (its record, not running) is
    deleted as a job, a pending deletion of theirs finished; `FINISHED`, or None for nothing of theirs."""
    record = await AnswersInProgress(dynamo).read(conversation_id, owner)
    if record is not None:
        if record["state"] == "running":
            raise ConversationBusy("an answer to this conversation is in progress")
        job = DeletionJob(conversation_id, owner, UNANSWERED, (str(record["run_id"]),))
        if await jobs.record(dynamo, job):
            await jobs.finish(dynamo, job, cleaners)
    job = await jobs.read(dynamo, conversation_id)
    if job is None or job.owner != owner:
        return FINISHED if record is not None else None
    if job.state == jobs.PENDING:
        await jobs.finish(dynamo, job, cleaners)
    return FINISHED


async def forget_unanswered(dynamo: Dynamo, conversation_id: str, owner: str, run_id: str, cleaners: Cleaners,
                            had_images: bool = False) -> None:
    """A first question that ended unanswered (stopped, failed): no conversation item holds it, so
    nothing would delete its words. Recorded as a deletion job, then finished here (or, after a
    crash, by the sweep). `had_images`: its commit may have stored them before it failed."""
    job = DeletionJob(conversation_id, owner, UNANSWERED, (run_id,), had_images)
    if await jobs.record(dynamo, job):
        await jobs.finish(dynamo, job, cleaners)


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


async def forget_dead_first_questions(dynamo: Dynamo, cleaners: Cleaners, now: float | None = None) -> int:
    """The sweep's part for answers whose process died (kill -9, a Lambda timeout): nothing ended
    them. A first question's record is all that holds its words, so they go, as for one that
    failed; an answer to an existing conversation is set right if it committed and otherwise kept
    (the conversation's deletion removes its record). How many first questions were forgotten."""
    at = now if now is not None else time.time()
    answers, forgotten = AnswersInProgress(dynamo), 0
    # A lease lapsed a further lease ago: a live answer that missed beats has long renewed it.
    cutoff = at - CLAIM_LEASE_SECONDS
    for item in await dynamo.run(answers.lapsed_sync, cutoff):
        conversation_id, owner, run_id = str(item["conversation_id"]), str(item["owner"]), str(item["run_id"])
        held = (await dynamo.run(dynamo.table(CONVERSATIONS).get_item, Key={"conversation_id": conversation_id},
                                 ProjectionExpression="conversation_id", ConsistentRead=True)).get("Item")
        if held:
            await answers.read(conversation_id, owner)  # an answer that committed first reads `answered` from now on
            await answers.settle_lapsed(conversation_id, run_id, cutoff)
            continue
        await forget_unanswered(dynamo, conversation_id, owner, run_id, cleaners)
        forgotten += 1
    return forgotten


async def sweep_deletions(dynamo: Dynamo, cleaners: Cleaners, now: float | None = None) -> dict[str, int]:
    """Every minute (the sweep function, the local stack's sweep): the deletions a crash left
    pending finished, and the words of first questions whose process died forgotten."""
    summary = await jobs.finish_pending(dynamo, cleaners)
    return {**summary, "forgotten": await forget_dead_first_questions(dynamo, cleaners, now)}
