"""Conversations and their messages. An exchange reaches the store in one conditional transaction.

`message_count` counts what a person sees (questions and answers); tool turns are stored as their
own items, each under the item size limit, but do not count towards the 40-message cap.
"""
from __future__ import annotations

import json
import secrets
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Literal, cast

from botocore.exceptions import ClientError

from groundchat.attachments.storage import ImageStore
from groundchat.store.boto3_helpers import Key  # boto3 loads on first use
from groundchat.store.answer_records import answer_attributes, public_answer_record
from groundchat.store.commit_items import conversation_op, message_item, serialized
from groundchat.store.conversation_images import (
    delete_conversation_images,
    images_from_attribute,
    public_images,
    renew_images,
    store_images,
)
from groundchat.store.dynamo import Dynamo, condition_failed
from groundchat.store.feedback import FeedbackStore
from groundchat.store.leases import CLAIM_LEASE_SECONDS
from groundchat.store.recall_copies import withheld_on_a_shared_page
from groundchat.store.retention import expires_at_text, expiry_after, is_expired, refresh_messages
from groundchat.store.tables import CONVERSATIONS, MESSAGES
from groundchat.models.messages import Message
from groundchat.store import item_values

if TYPE_CHECKING:
    from collections.abc import Mapping

    from groundchat.json_shapes import JsonValue
    from groundchat.store.items import StoredItem, StoredValue, TableRequest, TransactAction

# DynamoDB allows 100 items per transaction; one is the conversation itself.
MAX_ITEMS_PER_EXCHANGE = 99
# The roles a stored message has: the ones of the Message it was written from (models/messages.py).
Role = Literal["user", "assistant", "tool"]
# A run that crashed without releasing its claim on a conversation stops blocking it after this.
CLAIM_SECONDS = CLAIM_LEASE_SECONDS  # renewed every beat while the answer runs (store/leases.py)



class ConversationBusy(Exception):
    """Another answer to this conversation is in flight, or committed first."""


class ExchangeTooLarge(Exception):
    code = "too-large"
    message = "This answer has too many parts to store; ask a narrower question."


def new_conversation_id() -> str:
    return secrets.token_hex(16)  # 128 random bits: unguessable


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class ConversationStore:
    def __init__(self, dynamo: Dynamo) -> None:
        self.dynamo = dynamo
        self.conversations = dynamo.table(CONVERSATIONS)
        self.messages = dynamo.table(MESSAGES)
        self.images = ImageStore(dynamo.settings)

    def _expiry(self) -> int:
        return expiry_after(time.time(), self.dynamo.settings.retention_days)

    def expiry(self) -> int:
        """The expiry a commit made now gives the conversation (and what it left elsewhere: recall)."""
        return self._expiry()

    async def get(self, conversation_id: str) -> StoredItem | None:
        """The conversation, or None; an expired one is gone already (TTL deletes it within days)."""
        resp = await self.dynamo.run(self.conversations.get_item, Key={"conversation_id": conversation_id}, ConsistentRead=True)
        item = resp.get("Item")
        return None if is_expired(item) else item

    async def id_in_use(self, conversation_id: str) -> bool:
        """Whether any item holds this id, an expired one too (TTL deletes within days): a new
        conversation cannot take it until it is gone, since its commit is conditional on that."""
        resp = await self.dynamo.run(self.conversations.get_item, Key={"conversation_id": conversation_id},
                                     ConsistentRead=True, ProjectionExpression="conversation_id")
        return "Item" in resp

    async def get_owned(self, conversation_id: str, owner: str) -> StoredItem | None:
        """The conversation if `owner` owns it; None for unknown and foreign alike."""
        item = await self.get(conversation_id)
        if item is None or item.get("owner") != owner:
            return None
        return item

    async def list_for_owner(self, owner: str, limit: int = 50) -> list[dict[str, StoredValue]]:
        resp = await self.dynamo.run(
            self.conversations.query,
            IndexName="by_owner",
            KeyConditionExpression=Key("owner").eq(owner),
            ScanIndexForward=False,
            Limit=limit,
        )
        return [_public(i) for i in resp.get("Items", []) if not is_expired(i)]

    async def list_shared(self, limit: int = 50) -> list[dict[str, StoredValue]]:
        resp = await self.dynamo.run(
            self.conversations.query,
            IndexName="by_shared",
            KeyConditionExpression=Key("shared_flag").eq("1"),
            ScanIndexForward=False,
            Limit=limit,
        )
        return [_public(i) for i in resp.get("Items", []) if not is_expired(i)]

    async def read_items(self, conversation_id: str) -> list[StoredItem]:
        items: list[StoredItem] = []
        kwargs: TableRequest = {"KeyConditionExpression": Key("conversation_id").eq(conversation_id), "ConsistentRead": True}
        while True:
            resp = await self.dynamo.run(self.messages.query, **kwargs)
            items.extend(resp.get("Items", []))
            if "LastEvaluatedKey" not in resp:
                return items
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]

    async def read_history(self, conversation_id: str) -> list[Message]:
        """Earlier turns, tool results included, exactly as the server stored them."""
        return [message_from_item(i) for i in await self.read_items(conversation_id)]

    async def claim(self, conversation_id: str, run_id: str) -> None:
        """Mark an answer in flight so a concurrent second answer is refused up front (409)."""
        now = int(time.time())
        try:
            await self.dynamo.run(
                self.conversations.update_item,
                Key={"conversation_id": conversation_id},
                UpdateExpression="SET active_run = :r, active_until = :u",
                ConditionExpression="attribute_exists(conversation_id) AND (attribute_not_exists(active_run) OR active_until < :now)",
                ExpressionAttributeValues={":r": run_id, ":u": now + CLAIM_SECONDS, ":now": now},
            )
        except ClientError as exc:
            if condition_failed(exc):
                raise ConversationBusy("another answer to this conversation is in progress") from exc
            raise

    async def renew_claim(self, conversation_id: str, run_id: str) -> bool:
        """Extends this run's claim by a lease; False when it no longer holds it."""
        try:
            await self.dynamo.run(
                self.conversations.update_item, Key={"conversation_id": conversation_id},
                UpdateExpression="SET active_until = :u", ConditionExpression="active_run = :r",
                ExpressionAttributeValues={":r": run_id, ":u": int(time.time()) + CLAIM_SECONDS})
        except ClientError as exc:
            if condition_failed(exc):
                return False
            raise
        return True

    async def release(self, conversation_id: str, run_id: str) -> None:
        try:
            await self.dynamo.run(
                self.conversations.update_item,
                Key={"conversation_id": conversation_id},
                UpdateExpression="REMOVE active_run, active_until",
                ConditionExpression="active_run = :r",
                ExpressionAttributeValues={":r": run_id},
            )
        except ClientError as exc:
            if not condition_failed(exc):
                raise

    async def commit_exchange(
        self,
        *,
        conversation_id: str,
        owner: str,
        run_id: str,
        existing: StoredItem | None,
        messages: list[Message],
        annotations: Mapping[str, object],
        title: str,
        expires_at: int | None = None,
        answer_record: Mapping[str, object] | None = None,
        recalled_from: Sequence[str] = (),
    ) -> int:
        """Write the question and its answer in one TransactWriteItems. Returns the new version.

        For an existing conversation the write is conditional on the version read before the
        answer began and on this run's claim; for a new one, on the id being unused. `expires_at`
        defaults to `expiry()`; `answer_record` (cost, details) goes on the answer (answer_records.py).
        `recalled_from`: the caller's other conversations whose words the recall tool handed this
        answer; the answer's messages and the conversation name them (store/recall_copies.py).
        """
        if len(messages) > MAX_ITEMS_PER_EXCHANGE:
            raise ExchangeTooLarge()
        first_seq = item_values.whole(existing, "next_seq") if existing else 0
        visible = sum(1 for m in messages if m.role == "user" or (m.role == "assistant" and not m.tool_calls))
        stamp = now_iso()
        expires = int(expires_at) if expires_at is not None else self._expiry()
        if existing is not None and item_values.whole(existing, "expires_at", 0) != expires:
            # Before the commit writes the new expiry on the conversation: its messages must never
            # expire before it, nor the older ones before the newer (store/retention.py).
            await refresh_messages(self.dynamo, conversation_id, expires)
            await FeedbackStore(self.dynamo).refresh_expiry(conversation_id, expires)
        # Before any message names them; the conversation then says it holds images.
        with_images = await store_images(self.images, conversation_id, messages) or bool(existing and existing.get("has_images"))
        msg_table = self.dynamo.name(MESSAGES)
        version = item_values.whole(existing, "version") + 1 if existing else 1
        ops: list[TransactAction] = [conversation_op(
            self.dynamo.name(CONVERSATIONS), conversation_id, owner, run_id, existing, title=title, stamp=stamp,
            visible=visible, written=len(messages), expires=expires, with_images=with_images, recalled_from=recalled_from)]
        last_answer = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=None)
        on_answer = answer_attributes(annotations, answer_record)
        for offset, message in enumerate(messages):
            item = message_item(conversation_id, first_seq + offset, message, run_id, stamp, expires)
            if recalled_from and message.role != "user":
                item["recalled_from"] = set(recalled_from)  # what may carry another conversation's words
            ops.append({"Put": {"TableName": msg_table, "Item": serialized({**item, **(on_answer if offset == last_answer else {})}),
                                "ConditionExpression": "attribute_not_exists(seq)"}})
        try:
            await self.dynamo.run(self.dynamo.client.transact_write_items, TransactItems=ops)
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "TransactionCanceledException":
                raise ConversationBusy("the conversation changed while this answer was written") from exc
            raise
        if existing is not None and existing.get("has_images") and item_values.whole(existing, "expires_at", 0) != expires:
            await renew_images(self.images, conversation_id)  # they expire with the conversation
        return version

    async def delete_images(self, conversation_id: str) -> int:
        """The images of a conversation being deleted (S3); returns how many went."""
        return await delete_conversation_images(self.images, conversation_id)

    async def set_shared(self, conversation_id: str, owner: str, shared: bool) -> dict[str, StoredValue] | None:
        """Owner only: sets or clears `shared_at`. None when not the owner's (or unknown)."""
        try:
            if shared:
                stamp = now_iso()
                resp = await self.dynamo.run(
                    self.conversations.update_item,
                    Key={"conversation_id": conversation_id},
                    UpdateExpression="SET shared_at = if_not_exists(shared_at, :t), shared_flag = :one",
                    ConditionExpression="#o = :owner",
                    ExpressionAttributeNames={"#o": "owner"},
                    ExpressionAttributeValues={":t": stamp, ":one": "1", ":owner": owner},
                    ReturnValues="ALL_NEW",
                )
            else:
                resp = await self.dynamo.run(
                    self.conversations.update_item,
                    Key={"conversation_id": conversation_id},
                    UpdateExpression="REMOVE shared_at, shared_flag",
                    ConditionExpression="#o = :owner",
                    ExpressionAttributeNames={"#o": "owner"},
                    ExpressionAttributeValues={":owner": owner},
                    ReturnValues="ALL_NEW",
                )
        except ClientError as exc:
            if condition_failed(exc):
                return None
            raise
        return _public(resp.get("Attributes", {}))

    async def get_shared(self, conversation_id: str) -> StoredItem | None:
        item = await self.get(conversation_id)
        if item is None or not item.get("shared_at"):
            return None
        return item


def message_from_item(item: StoredItem) -> Message:
    return Message(
        role=cast(Role, item_values.text(item, "role")),
        content=item_values.text(item, "content", ""),
        tool_calls=json.loads(item_values.text(item, "tool_calls")) if item.get("tool_calls") else [],
        tool_call_id=item_values.optional_text(item, "tool_call_id"),
        name=item_values.optional_text(item, "name"),
        is_error=bool(item.get("is_error", False)),
        images=images_from_attribute(item_values.optional_text(item, "images")),
    )


def _public(item: StoredItem) -> dict[str, StoredValue]:
    return {
        "conversation_id": item["conversation_id"],
        "title": item.get("title", ""),
        "created_at": item.get("created_at"),
        "updated_at": item.get("updated_at"),
        "message_count": item_values.whole(item, "message_count", 0),
        "version": item_values.whole(item, "version", 0),
        "shared_at": item.get("shared_at"),
        # When the whole conversation expires (GROUNDCHAT_RETENTION_DAYS after its last answer).
        "expires_at": expires_at_text(item),
    }


def public_conversation(item: StoredItem) -> dict[str, StoredValue]:
    return _public(item)


def public_message(item: StoredItem, *, answer_record: bool = False, shared: bool = False) -> dict[str, StoredValue | JsonValue]:
    """A stored message as every route renders it (the chat's conversation view and the share).

    `answer_record`: also the answer's `cost`, `cost_text` and `details` (store/answer_records.py),
    on its last assistant message; only the owner's view asks for them. `shared`: the page anyone
    with the link reads, where what recall brought from the owner's other conversations is withheld
    (store/recall_copies.py)."""
    if shared and item.get("recalled_from"):
        item = withheld_on_a_shared_page(item)
    return {
        "seq": item_values.whole(item, "seq"),
        "role": item["role"],
        "content": item.get("content", ""),
        "tool_calls": json.loads(item_values.text(item, "tool_calls")) if item.get("tool_calls") else [],
        "tool_call_id": item.get("tool_call_id"),
        "name": item.get("name"),
        "is_error": bool(item.get("is_error", False)),
        "annotations": json.loads(item_values.text(item, "annotations")) if item.get("annotations") else None,
        # A question's images (only when it has some): hash, type, size and alt text each; the
        # page draws them from the conversation's image route (never from the S3 key).
        **({"images": public_images(item_values.optional_text(item, "images"))} if item.get("images") else {}),
        "run_id": item.get("run_id"),
        "created_at": item.get("created_at"),
        **(public_answer_record(item) if answer_record else {}),
    }
