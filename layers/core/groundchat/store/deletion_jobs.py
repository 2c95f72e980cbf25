"""A conversation's deletion as a durable job: recorded first, finished by whoever comes next.

The job item (`deletions` table, one per conversation id) is written in the same transaction that
removes the conversation item (store/deletion.py), or, for a first question that ended unanswered
and so has no conversation item, before anything of it is removed. From then on nothing can read
the conversation, and the job names what is left: its runs, whether it holds images. Every step
finds its targets again in the store and removing twice changes nothing, so the request that
recorded the job, a second DELETE, or the sweep (every minute) can each run the job from its
first step after a crash at any point. The last step marks it done: a done job holds no words and
stays a day (TTL), so the owner's repeated DELETE is answered as done rather than unknown.

A pending job keeps the id from being taken by a new conversation (`pending_deletion`): the job's
steps remove by conversation id, and must never reach a newer conversation's items.
"""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from botocore.exceptions import ClientError

from groundchat.store import item_values
from groundchat.store.boto3_helpers import Attr, Key, TypeSerializer  # boto3 loads on first use
from groundchat.store.dynamo import Dynamo, all_pages, condition_failed
from groundchat.store.feedback import FeedbackStore
from groundchat.store.recall_copies import conversations_that_recalled, redact_copies
from groundchat.store.retention import delete_keys_sync
from groundchat.store.tables import ANSWERS, DELETIONS, MESSAGES, TRACES

if TYPE_CHECKING:
    from groundchat.store.items import PutAction, StoredItem, TableRequest

log = logging.getLogger("groundchat.store")

PENDING, DONE = "pending", "done"
# What is deleted: a conversation (its item went with the job's record), or a first question that
# ended unanswered (stopped, failed, interrupted), which never had a conversation item.
CONVERSATION, UNANSWERED = "conversation", "unanswered"
KEEP_DONE_SECONDS = 24 * 3600

_ser = TypeSerializer().serialize

# Deletes a conversation's images (S3), returning how many went: `ConversationStore.delete_images`.
RemoveImages = Callable[[str], Awaitable[int]]
# Removes a conversation's recall entries (owner, conversation id), returning how many went.
RemoveRecall = Callable[[str, str], Awaitable[int]]


@dataclass(frozen=True)
class Cleaners:
    """What a job removes outside DynamoDB; None where this process has no such store (the recall
    sweep then removes the entries of a conversation that is gone, and the bucket's lifecycle the images)."""

    remove_images: RemoveImages | None = None
    remove_recall: RemoveRecall | None = None


def cleaners_for(images: Any = None, recall: Any = None) -> Cleaners:
    """The sweep's cleaners: an image store (`attachments.storage.ImageStore`) and a recall index,
    either None where the sweep has none."""
    async def remove_recall(owner: str, conversation_id: str) -> int:
        return await asyncio.to_thread(recall.remove_conversation, owner, conversation_id)

    return Cleaners(remove_images=images.delete_conversation if images is not None else None,
                    remove_recall=remove_recall if recall is not None else None)


@dataclass(frozen=True)
class DeletionJob:
    conversation_id: str
    owner: str
    kind: str = CONVERSATION
    run_ids: tuple[str, ...] = ()
    has_images: bool = False
    state: str = PENDING

    @classmethod
    def from_item(cls, item: StoredItem) -> DeletionJob:
        return cls(str(item["conversation_id"]), str(item["owner"]), str(item.get("kind", CONVERSATION)),
                   tuple(sorted(item_values.strings(item, "run_ids"))), bool(item.get("has_images")),
                   str(item.get("state", PENDING)))

    def item(self) -> StoredItem:
        out: StoredItem = {"conversation_id": self.conversation_id, "owner": self.owner, "kind": self.kind,
                           "state": PENDING, "has_images": self.has_images, "recorded_at": int(time.time())}
        if self.run_ids:
            out["run_ids"] = set(self.run_ids)  # a string set: the store keeps no empty one
        return out


# A job is recorded unless another deletion of the id is pending.
_RECORD_CONDITION = "attribute_not_exists(conversation_id) OR #s = :done"


def record_op(dynamo: Dynamo, job: DeletionJob) -> PutAction:
    """The job's record, for a transaction: refused while another deletion of the id is pending
    (a done one is replaced: the id was used again since)."""
    return {"Put": {
        "TableName": dynamo.name(DELETIONS),
        "Item": {k: _ser(v) for k, v in job.item().items()},
        "ConditionExpression": _RECORD_CONDITION,
        "ExpressionAttributeNames": {"#s": "state"},
        "ExpressionAttributeValues": {":done": _ser(DONE)},
    }}


async def record(dynamo: Dynamo, job: DeletionJob) -> bool:
    """Record a job on its own; False when a deletion of the id is already pending."""
    try:
        await dynamo.run(dynamo.table(DELETIONS).put_item, Item=job.item(), ConditionExpression=_RECORD_CONDITION,
                         ExpressionAttributeNames={"#s": "state"}, ExpressionAttributeValues={":done": DONE})
    except ClientError as exc:
        if condition_failed(exc):
            return False
        raise
    return True


async def read(dynamo: Dynamo, conversation_id: str) -> DeletionJob | None:
    resp = await dynamo.run(dynamo.table(DELETIONS).get_item, Key={"conversation_id": conversation_id}, ConsistentRead=True)
    item = resp.get("Item")
    return DeletionJob.from_item(item) if item else None


async def pending_deletion(dynamo: Dynamo, conversation_id: str) -> bool:
    job = await read(dynamo, conversation_id)
    return job is not None and job.state == PENDING


# Each step: (dynamo, job, cleaners) -> how many it removed. Run in this order, every one of them
# each time the job runs; a step a job's kind has nothing for removes nothing.
Step = Callable[[Dynamo, DeletionJob, Cleaners], Awaitable[int]]


async def _messages(dynamo: Dynamo, job: DeletionJob, cleaners: Cleaners) -> int:
    """What the transaction could not hold (it takes up to 98 messages with the conversation)."""
    if job.kind != CONVERSATION:
        return 0  # an unanswered first question stored none: its commit is all or nothing
    keys = await dynamo.run(message_keys_sync, dynamo, job.conversation_id)
    await dynamo.run(delete_keys_sync, dynamo, MESSAGES, [{"conversation_id": k["conversation_id"], "seq": k["seq"]} for k in keys])
    return len(keys)


async def _traces(dynamo: Dynamo, job: DeletionJob, cleaners: Cleaners) -> int:
    """The runs' records hold the questions and the tools' arguments. Found by the job's run ids
    and, for a conversation, by the owner's runs on it (a failed run left no message)."""
    return await dynamo.run(_delete_traces_sync, dynamo, job)


async def _images(dynamo: Dynamo, job: DeletionJob, cleaners: Cleaners) -> int:
    # An unanswered question's commit may have stored its images before its transaction failed.
    if cleaners.remove_images is None or not job.has_images:
        return 0
    return await cleaners.remove_images(job.conversation_id)


async def _recall(dynamo: Dynamo, job: DeletionJob, cleaners: Cleaners) -> int:
    if cleaners.remove_recall is None or job.kind != CONVERSATION:
        return 0  # only a committed exchange is ever indexed
    return await cleaners.remove_recall(job.owner, job.conversation_id)


async def _recalled_copies(dynamo: Dynamo, job: DeletionJob, cleaners: Cleaners) -> int:
    """The words recall copied into the owner's other conversations (store/recall_copies.py)."""
    if job.kind != CONVERSATION:
        return 0
    copies = 0
    for other in await dynamo.run(conversations_that_recalled, dynamo, job.owner, job.conversation_id):
        copies += await dynamo.run(redact_copies, dynamo, other, job.conversation_id)
    return copies


async def _feedback(dynamo: Dynamo, job: DeletionJob, cleaners: Cleaners) -> int:
    return await FeedbackStore(dynamo).delete_for_conversation(job.conversation_id) if job.kind == CONVERSATION else 0


async def _answer_record(dynamo: Dynamo, job: DeletionJob, cleaners: Cleaners) -> int:
    """The record of the last answer holds its question. A conversation's goes whatever run it
    names (no answer can start on a conversation being deleted); an unanswered question's only if
    it is still that question's."""
    kwargs: TableRequest = {"Key": {"conversation_id": job.conversation_id}, "ReturnValues": "ALL_OLD"}
    if job.kind != CONVERSATION:
        kwargs |= {"ConditionExpression": Attr("run_id").is_in(list(job.run_ids) or [""])}
    try:
        resp = await dynamo.run(dynamo.table(ANSWERS).delete_item, **kwargs)
    except ClientError as exc:
        if condition_failed(exc):
            return 0
        raise
    return 1 if resp.get("Attributes") else 0


STEPS: tuple[tuple[str, Step], ...] = (
    ("messages", _messages), ("traces", _traces), ("images", _images), ("recall_entries", _recall),
    ("recalled_copies", _recalled_copies), ("feedback", _feedback), ("answer_record", _answer_record),
)


async def finish(dynamo: Dynamo, job: DeletionJob, cleaners: Cleaners) -> dict[str, int]:
    """Run every step, then mark the job done; what each step removed. A step that raises leaves
    the job pending, for the next request or sweep to run again."""
    removed = {name: await step(dynamo, job, cleaners) for name, step in STEPS}
    await _mark_done(dynamo, job)
    return removed


async def _mark_done(dynamo: Dynamo, job: DeletionJob) -> None:
    now = int(time.time())
    await dynamo.run(dynamo.table(DELETIONS).update_item, Key={"conversation_id": job.conversation_id},
                     UpdateExpression="SET #s = :done, finished_at = :now, expires_at = :e REMOVE run_ids",
                     ExpressionAttributeNames={"#s": "state"},
                     ExpressionAttributeValues={":done": DONE, ":now": now, ":e": now + KEEP_DONE_SECONDS})


def pending_jobs_sync(dynamo: Dynamo) -> list[DeletionJob]:
    """Every pending job. The table holds only jobs under way and a day of done ones, so a Scan
    reads little; a consistent one, so a job recorded just now is seen."""
    kwargs: TableRequest = {"FilterExpression": Attr("state").eq(PENDING), "ConsistentRead": True}
    return [DeletionJob.from_item(i) for i in all_pages(dynamo.table(DELETIONS).scan, kwargs)]


async def finish_pending(dynamo: Dynamo, cleaners: Cleaners) -> dict[str, int]:
    """The sweep's part: finish every pending job; how many finished and how many failed again
    (they stay pending, and are logged)."""
    finished = failed = 0
    for job in await dynamo.run(pending_jobs_sync, dynamo):
        try:
            await finish(dynamo, job, cleaners)
            finished += 1
        except Exception:
            failed += 1
            log.exception("the deletion of conversation %s is still unfinished", job.conversation_id)
    return {"finished": finished, "failed": failed}


def message_keys_sync(dynamo: Dynamo, conversation_id: str) -> list[StoredItem]:
    kwargs: TableRequest = {"KeyConditionExpression": Key("conversation_id").eq(conversation_id),
                            "ProjectionExpression": "conversation_id, seq, run_id", "ConsistentRead": True}
    return all_pages(dynamo.table(MESSAGES).query, kwargs)


def _delete_traces_sync(dynamo: Dynamo, job: DeletionJob) -> int:
    found = set(job.run_ids)
    if job.kind == CONVERSATION:
        kwargs: TableRequest = {"IndexName": "by_caller", "KeyConditionExpression": Key("caller").eq(job.owner),
                                "FilterExpression": Attr("conversation_id").eq(job.conversation_id),
                                "ProjectionExpression": "run_id"}
        found |= {str(i["run_id"]) for i in all_pages(dynamo.table(TRACES).query, kwargs)}
    existing = [run_id for run_id in sorted(found)
                if "Item" in dynamo.table(TRACES).get_item(Key={"run_id": run_id}, ProjectionExpression="run_id")]
    delete_keys_sync(dynamo, TRACES, [{"run_id": run_id} for run_id in existing])
    return len(existing)
