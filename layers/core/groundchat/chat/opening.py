"""Opening a question's conversation, before any work: a new one or the caller's own one claimed,
with this run's record as the answer in progress written at once (store/answers_in_progress.py);
a repeat of a keyed request to follow instead (chat/follow.py); or the 404 / 409 that says why not,
before anything is spent. `release_claim` undoes it for a question refused after it.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from groundchat.auth.callers import Caller
from groundchat.chat.stored_counts import stored_count
from groundchat.exchange.refusal import Refusal
from groundchat.ids import is_conversation_id
from groundchat.models.messages import Message
from groundchat.services import Services
from groundchat.store.answers_in_progress import ANSWERED, RUNNING
from groundchat.store.conversations import ConversationBusy, new_conversation_id
from groundchat.store.deletion_jobs import pending_deletion

if TYPE_CHECKING:
    from groundchat.store.items import StoredItem

log = logging.getLogger("groundchat.chat")


@dataclass
class ConversationOpened:
    """The conversation an answer belongs to, as read under its claim."""

    id: str
    existing: StoredItem | None  # its stored item; None: a new conversation, created by the commit
    history: list[Message]


@dataclass(frozen=True)
class Opening:
    """What a question asks of its conversation: which one, for which run, and how it is named."""

    conversation_id: str | None
    run_id: str
    question: str
    client_chosen_id: bool = False
    request_key: str | None = None


@dataclass(frozen=True)
class Repeat:
    """The request repeats an answer running or answered: it follows that one (chat/follow.py)."""

    conversation_id: str
    run_id: str


async def open_conversation(services: Services, caller: Caller, asked: Opening) -> ConversationOpened | Repeat | Refusal:
    """A new conversation, or the caller's own one claimed for this run, with this run's record as
    the answer in progress written before any work; a repeat of a keyed request to follow; or
    404 / 409 (someone else's id, an answer already running) before anything is spent."""
    conversation_id, run_id = asked.conversation_id, asked.run_id
    store, answers = services.conversations, services.answers
    if conversation_id is None:
        fresh = new_conversation_id()  # 128 random bits: nothing else holds it
        await answers.claim_new(fresh, caller.id, run_id, asked.question)
        return ConversationOpened(fresh, None, [])
    limit = services.settings.max_conversation_messages
    # Someone else's, unknown and malformed all get the same answer; a malformed id never reaches the store.
    existing = await store.get_owned(conversation_id, caller.id) if is_conversation_id(conversation_id) else None
    if existing is None and asked.client_chosen_id and is_conversation_id(conversation_id):
        if await pending_deletion(services.dynamo, conversation_id):
            # Its deletion's steps remove by this id: no new conversation may take it until they are done.
            return Refusal(409, "conversation-busy", "This conversation is being deleted: start a new conversation.")
        if not await store.id_in_use(conversation_id):
            # Unused: this run's record claims it now; the commit creates the conversation, conditional
            # on the id still being unused.
            in_the_way = await answers.claim_new(conversation_id, caller.id, run_id, asked.question, asked.request_key)
            if in_the_way is None:
                return ConversationOpened(conversation_id, None, [])
            if in_the_way.get("owner") != caller.id:
                return Refusal(404, "not-found", "No such conversation.")  # someone else's answer holds the id
            return _repeat_of(conversation_id, await answers.get_raw(conversation_id), caller, asked) or _busy()
    if existing is None:
        return Refusal(404, "not-found", "No such conversation.")
    if asked.request_key:
        repeat = _repeat_of(conversation_id, await answers.get_raw(conversation_id), caller, asked)
        if repeat is not None:
            return repeat
    if stored_count(existing.get("message_count", 0)) >= limit:
        return Refusal(409, "conversation-full", f"This conversation has reached {limit} messages: start a new conversation.")
    try:
        await store.claim(conversation_id, run_id)
    except ConversationBusy:
        # The answer holding it may be this very request, sent twice: follow it then.
        repeat = _repeat_of(conversation_id, await answers.get_raw(conversation_id), caller, asked) if asked.request_key else None
        return repeat or _busy()
    claimed = ConversationOpened(conversation_id, existing, [])
    try:
        await answers.begin(conversation_id, caller.id, run_id, asked.question, asked.request_key)
        # Read after the claim: no other answer can change the conversation now.
        claimed.existing = await store.get(conversation_id) or existing
        claimed.history = await store.read_history(conversation_id)
    except BaseException:
        await release_claim(services, claimed, run_id)
        raise
    return claimed


def _busy() -> Refusal:
    return Refusal(409, "conversation-busy", "Another answer to this conversation is in progress: wait for it, then ask again.")


def _repeat_of(conversation_id: str, record: StoredItem | None, caller: Caller, asked: Opening) -> Repeat | Refusal | None:
    """The answer this request repeats (the caller's, under the same key, running or answered), a
    422 when the key came with another question, or None: not a repeat (a failed or stopped answer
    to the same key may be asked again)."""
    if not asked.request_key or not record or record.get("owner") != caller.id or record.get("request_key") != asked.request_key:
        return None
    if record.get("state") not in (RUNNING, ANSWERED):
        return None
    if record.get("question") != asked.question:
        return Refusal(422, "idempotency-key-reused", "This request's key was sent before with another question: "
                                                      "use a new key for a new question.")
    return Repeat(conversation_id, str(record["run_id"]))


async def release_claim(services: Services, conversation: ConversationOpened, run_id: str) -> None:
    try:
        await services.answers.withdraw(conversation.id, run_id)  # a new conversation's claim is its record
        if conversation.existing is not None:
            await services.conversations.release(conversation.id, run_id)
    except Exception:
        # The store that just failed may fail again: the claim then expires on its own, and the
        # original failure is the one the caller must see.
        log.warning("could not release the claim on %s for run %s", conversation.id, run_id)
