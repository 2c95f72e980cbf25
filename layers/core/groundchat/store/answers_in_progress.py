"""The answer in progress on each conversation, in the store: what a reload follows and a stop asks.

One item per conversation (`answers` table), written when a question is accepted, before any
work (for a new conversation it is the claim on its id: `claim_new`), and overwritten by the next
one. Any instance reads it, so a page that reloads, or a client that lost its stream, learns
from whichever process serves it that an answer is running and, later, how it ended; the answering
process never has to be the one asked.

States: `running` (renewed by the answer's heartbeat, like its claim: store/leases.py), then
`answered` (committed: the conversation holds it), `stopped` (its owner asked) or `failed`.

The rule for a stopped answer: the conversation keeps nothing of it, neither the question nor the
partial text. A partial answer never passed the citation and number checks, which read the whole
answer, so storing it would put unchecked words into the history the next question is answered
from. What it spent is settled and recorded (usage rows, the trace, the `done` frame's cost) like
any other answer's; the record here keeps the question, so the page can say what was stopped,
except a new conversation's first question: nothing else holds it, so its words go at once (a
deletion job, store/deletion.py) and the record says how it ended without them. A `running` item
whose lease lapsed belonged to a process that died:
it reads as `interrupted`. Every write after the first is conditional on the run id, so a slow
process can never overwrite the record of the answer that followed it.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import time
from decimal import Decimal
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from groundchat.store.boto3_helpers import Key  # boto3 loads on first use
from groundchat.store.dynamo import Dynamo, all_pages, condition_failed
from groundchat.store.leases import CLAIM_LEASE_SECONDS
from groundchat.store.tables import ANSWERS, MESSAGES
from groundchat.store import item_values

if TYPE_CHECKING:
    from groundchat.store.items import StoredItem, TableRequest

RUNNING, ANSWERED, STOPPED, FAILED, INTERRUPTED = "running", "answered", "stopped", "failed", "interrupted"
# Set on a running record only: the key of the sparse index the sweep reads dead answers from.
RUNNING_FLAG = "running_flag"
# A keyed first question's conversation (`conversation_for_key`): not an id's shape (groundchat.ids).
KEY_PREFIX = "key:"
# How long an ended answer's record stays for a late reconnect to read (TTL removes it after).
KEEP_ENDED_SECONDS = 24 * 3600


# How often a waiting reader reads the record again while the answer runs.
POLL_SECONDS = 0.5

class AnswersInProgress:
    def __init__(self, dynamo: Dynamo) -> None:
        self.dynamo = dynamo
        self.table = dynamo.table(ANSWERS)

    async def begin(self, conversation_id: str, owner: str, run_id: str, question: str, request_key: str | None = None) -> None:
        """The answer has started, on a conversation this run has claimed (store/conversations.py).
        The condition keeps someone else's record under the id from being taken over."""
        await self.dynamo.run(self.table.put_item, ConditionExpression="attribute_not_exists(conversation_id) OR #o = :owner",
                              ExpressionAttributeNames={"#o": "owner"}, ExpressionAttributeValues={":owner": owner},
                              Item=self._running(conversation_id, owner, run_id, question, request_key))

    async def claim_new(self, conversation_id: str, owner: str, run_id: str, question: str,
                        request_key: str | None = None) -> StoredItem | None:
        """The record of a new conversation's first answer, written before any work: the claim on
        the id, since a new conversation has no item to claim yet. None when it is this run's now;
        otherwise the record in the way (someone else's; the owner's answer running under the id;
        the owner's answer to the same `request_key`, which the request then follows)."""
        now = int(time.time())
        condition = "attribute_not_exists(conversation_id) OR (#o = :owner AND (#s <> :running OR active_until < :now)"
        values: StoredItem = {":owner": owner, ":running": RUNNING, ":now": now}
        if request_key:
            condition += " AND NOT (#s = :answered AND request_key = :key)"
            values |= {":answered": ANSWERED, ":key": request_key}
        try:
            await self.dynamo.run(self.table.put_item, ConditionExpression=condition + ")",
                                  ExpressionAttributeNames={"#o": "owner", "#s": "state"}, ExpressionAttributeValues=values,
                                  Item=self._running(conversation_id, owner, run_id, question, request_key))
        except ClientError as exc:
            if condition_failed(exc):
                return await self._get(conversation_id) or {}
            raise
        return None

    async def conversation_for_key(self, owner: str, request_key: str, candidate: str) -> str:
        """The conversation a keyed first question opens: `candidate` the first time, the same one
        for a repeat of the key within `KEEP_ENDED_SECONDS` (TTL removes the mapping after). Kept
        here beside the answers it leads to, under an id no conversation can have."""
        digest = hashlib.sha256(f"{owner}\n{request_key}".encode()).hexdigest()
        now = int(time.time())
        try:
            await self.dynamo.run(self.table.put_item, ConditionExpression="attribute_not_exists(conversation_id) OR expires_at < :now",
                                  ExpressionAttributeValues={":now": now}, Item={
                "conversation_id": f"{KEY_PREFIX}{digest}", "owner": owner, "target": candidate,
                "expires_at": now + KEEP_ENDED_SECONDS})
        except ClientError as exc:
            if not condition_failed(exc):
                raise
            found = await self._get(f"{KEY_PREFIX}{digest}")
            return str(found["target"]) if found else candidate
        return candidate

    async def withdraw(self, conversation_id: str, run_id: str) -> None:
        """A run refused before its first frame (a cap, a bad image) leaves no record: it never began."""
        try:
            await self.dynamo.run(self.table.delete_item, Key={"conversation_id": conversation_id},
                                  ConditionExpression="run_id = :run AND #s = :running",
                                  ExpressionAttributeNames={"#s": "state"}, ExpressionAttributeValues={":run": run_id, ":running": RUNNING})
        except ClientError as exc:
            if not condition_failed(exc):
                raise

    def _running(self, conversation_id: str, owner: str, run_id: str, question: str, request_key: str | None) -> StoredItem:
        now = time.time()
        item: StoredItem = {
            "conversation_id": conversation_id, "owner": owner, "run_id": run_id, "state": RUNNING,
            "question": question, "started_at": _stamp(now), "active_until": int(now) + CLAIM_LEASE_SECONDS,
            "expires_at": int(now) + CLAIM_LEASE_SECONDS + KEEP_ENDED_SECONDS,
        }
        if request_key:
            item["request_key"] = request_key  # a repeat of this request follows this answer (chat/follow.py)
        item[RUNNING_FLAG] = RUNNING  # in the sparse `by_lapse` index while it runs: the sweep finds the dead ones
        return item

    def lapsed_sync(self, now: float) -> list[StoredItem]:
        """Records still `running` whose lease lapsed before `now`: their process died. From the
        sparse index only running records are in, by lease end."""
        kwargs: TableRequest = {"IndexName": "by_lapse", "KeyConditionExpression": Key(RUNNING_FLAG).eq(RUNNING)
                                & Key("active_until").lt(int(now))}
        return all_pages(self.table.query, kwargs)

    async def settle_lapsed(self, conversation_id: str, run_id: str, lapsed_before: float) -> bool:
        """Out of the index, its words kept (a conversation's own deletion removes them): the sweep
        has looked at this dead answer. Only if it is still the same run, lapsed before then."""
        try:
            await self.dynamo.run(self.table.update_item, Key={"conversation_id": conversation_id},
                                  UpdateExpression=f"REMOVE {RUNNING_FLAG}",
                                  ConditionExpression="run_id = :run AND active_until < :now",
                                  ExpressionAttributeValues={":run": run_id, ":now": int(lapsed_before)})
        except ClientError as exc:
            if condition_failed(exc):
                return False
            raise
        return True

    async def get_raw(self, conversation_id: str) -> StoredItem | None:
        """The record whoever owns it, its state as a reader should see it (the route answers
        someone else's as unknown; this is for the checks before an answer)."""
        item = await self._get(conversation_id)
        return {**item, "state": _state(item)} if item else None

    async def renew(self, conversation_id: str, run_id: str) -> bool:
        until = int(time.time()) + CLAIM_LEASE_SECONDS
        return await self._update(conversation_id, run_id, "SET active_until = :u, expires_at = :e",
                                  {":u": until, ":e": until + KEEP_ENDED_SECONDS}, running_only=True)

    async def stop_requested(self, conversation_id: str, run_id: str) -> bool:
        """Read between steps: a consistent read, so a stop asked on another instance is seen."""
        item = await self._get(conversation_id)
        return bool(item and item.get("run_id") == run_id and item.get("stop_requested"))

    async def request_stop(self, conversation_id: str, owner: str) -> str | None:
        """Ask the running answer to stop; its run id, or None when the owner has none running."""
        item = await self._get(conversation_id)
        if not item or item.get("owner") != owner or _state(item) != RUNNING:
            return None
        run_id = str(item["run_id"])
        done = await self._update(conversation_id, run_id, "SET stop_requested = :t, stop_asked_at = :now",
                                  {":t": True, ":now": _stamp(time.time())}, running_only=True)
        return run_id if done else None

    async def end(self, conversation_id: str, run_id: str, state: str, reason: str) -> bool:
        now = time.time()
        return await self._update(
            conversation_id, run_id, "SET #s = :s, reason = :r, ended_at = :now, expires_at = :e REMOVE active_until, running_flag",
            {":s": state, ":r": reason, ":now": _stamp(now), ":e": int(now) + KEEP_ENDED_SECONDS}, names={"#s": "state"})

    async def record_ended(self, conversation_id: str, owner: str, run_id: str, state: str, reason: str,
                           started_at: float) -> bool:
        """How an unanswered first question ended, without its words: written after its deletion
        job removed the record that held them (store/deletion.py), so the reconnect can still say
        `stopped` or `failed`. Never over a record another answer wrote since."""
        now = time.time()
        try:
            await self.dynamo.run(self.table.put_item, ConditionExpression="attribute_not_exists(conversation_id)", Item={
                "conversation_id": conversation_id, "owner": owner, "run_id": run_id, "state": state, "reason": reason,
                "started_at": _stamp(started_at), "ended_at": _stamp(now), "expires_at": int(now) + KEEP_ENDED_SECONDS})
        except ClientError as exc:
            if condition_failed(exc):
                return False
            raise
        return True

    async def read_when_ended(self, conversation_id: str, owner: str, seconds: float,
                              run_id: str | None = None) -> StoredItem | None:
        """`read`, again every POLL_SECONDS while the answer (`run_id`'s, when given) is `running`, for
        at most `seconds`: what the reconnect, the AI SDK's resume and a repeated submit wait on."""
        clock = asyncio.get_running_loop().time  # monotonic; the module's `time` is the leases' wall clock
        deadline = clock() + seconds
        found = await self.read(conversation_id, owner)
        while (found is not None and found["state"] == RUNNING and (run_id is None or found.get("run_id") == run_id)
               and clock() < deadline):
            await asyncio.sleep(POLL_SECONDS)
            found = await self.read(conversation_id, owner)
        return found

    async def read(self, conversation_id: str, owner: str) -> StoredItem | None:
        """The owner's record, its state as a reader should see it; None for nothing or someone else's.

        A record whose process died reads `interrupted`, unless the answer committed before the
        death: the conversation's last message is then this run's, and the record is set right
        (`answered`, with the reason the commit stored), so no one is told to ask and pay again."""
        item = await self._get(conversation_id)
        if not item or item.get("owner") != owner:
            return None
        state = _state(item)
        if state == INTERRUPTED:
            reason = await self._committed_reason(conversation_id, str(item["run_id"]))
            if reason is not None:
                now = time.time()
                await self._update(conversation_id, str(item["run_id"]),
                                   "SET #s = :s, reason = :r, ended_at = :now, expires_at = :e REMOVE active_until, running_flag",
                                   {":s": ANSWERED, ":r": reason, ":now": _stamp(now), ":e": int(now) + KEEP_ENDED_SECONDS},
                                   names={"#s": "state"}, running_only=True)
                return {**item, "state": ANSWERED, "reason": reason, "ended_at": _stamp(now)}
        return {**item, "state": state}

    async def _committed_reason(self, conversation_id: str, run_id: str) -> str | None:
        """How `run_id` ended if the conversation holds its answer (the last message is its
        answer's), else None."""
        resp = await self.dynamo.run(self.dynamo.table(MESSAGES).query, KeyConditionExpression=Key("conversation_id").eq(conversation_id),
                                     ScanIndexForward=False, Limit=1, ConsistentRead=True, ProjectionExpression="run_id, details")
        last = resp.get("Items") or [{}]
        if last[0].get("run_id") != run_id:
            return None
        try:
            details = json.loads(str(last[0].get("details") or "{}"))
        except ValueError:
            details = {}
        return str(details.get("reason") or "complete") if isinstance(details, dict) else "complete"

    async def delete(self, conversation_id: str) -> int:
        resp = await self.dynamo.run(self.table.delete_item, Key={"conversation_id": conversation_id},
                                     ReturnValues="ALL_OLD")
        return 1 if resp.get("Attributes") else 0

    async def _get(self, conversation_id: str) -> StoredItem | None:
        resp = await self.dynamo.run(self.table.get_item, Key={"conversation_id": conversation_id}, ConsistentRead=True)
        return resp.get("Item")

    async def _update(self, conversation_id: str, run_id: str, expression: str, values: StoredItem, *,
                      names: dict[str, str] | None = None, running_only: bool = False) -> bool:
        condition = "run_id = :run" + (" AND #s = :running" if running_only else "")
        values = {**values, ":run": run_id, **({":running": RUNNING} if running_only else {})}
        names = {**(names or {}), **({"#s": "state"} if running_only else {})}
        try:
            await self.dynamo.run(self.table.update_item, Key={"conversation_id": conversation_id},
                                  UpdateExpression=expression, ConditionExpression=condition,
                                  ExpressionAttributeValues=values, **({"ExpressionAttributeNames": names} if names else {}))
        except ClientError as exc:
            if condition_failed(exc):
                return False  # another answer's record now, or this one already ended
            raise
        return True


def _state(item: StoredItem) -> str:
    if item.get("state") == RUNNING and item_values.whole(item, "active_until", 0) < time.time():
        return INTERRUPTED  # its process died (kill -9, a Lambda timeout): nothing will end it
    return str(item.get("state"))


def public_answer(item: StoredItem) -> dict[str, object]:
    """What the reconnect route answers: never the owner, never the stop bookkeeping."""
    out: dict[str, object] = {"state": item["state"], "run_id": item.get("run_id"), "question": item.get("question", ""),
                              "started_at": _number(item.get("started_at"))}
    if item.get("ended_at") is not None:
        out["ended_at"] = _number(item["ended_at"])
        out["reason"] = item.get("reason")
    if item.get("stop_requested") and item["state"] == RUNNING:
        out["stopping"] = True
    return out


def _stamp(seconds: float) -> Decimal:
    return Decimal(str(round(seconds, 3)))  # the store takes no floats


def _number(value: object) -> float | None:
    return float(value) if value is not None else None  # type: ignore[arg-type]
