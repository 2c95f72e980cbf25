"""A repeated submit follows the answer it repeats, as frames, instead of paying for another.

The same question sent again with the same client id (the AI SDK's message id, an
`Idempotency-Key`) while its answer runs, or after it was answered, is answered from the store:
`start` with the first answer's run id, then, once that answer ended, its stored text and a `done`
that says how it ended and what it cost; no model is called. An answer that ended without
committing (stopped, failed, its process died) is said so, and the question may be asked again.
"""
from __future__ import annotations

import json
from decimal import Decimal
from typing import TYPE_CHECKING, AsyncIterator

from groundchat.chat.stored_counts import stored_count
from groundchat.exchange.frames import DoneFrame, ErrorFrame, Frame, StartFrame, TextFrame
from groundchat.money import cost_text
from groundchat.store.answers_in_progress import ANSWERED, STOPPED

if TYPE_CHECKING:
    from groundchat.exchange.frames import DoneReason
    from groundchat.json_shapes import JsonObject, JsonValue
    from groundchat.services import Services
    from groundchat.store.items import StoredItem, StoredValue

# The reasons a committed answer can have ended with; any other reads as "complete".
_REASONS: tuple[DoneReason, ...] = ("complete", "max-steps", "spend-cap", "unmeasurable-cost")


async def follow_answer(services: Services, owner: str, conversation_id: str, run_id: str) -> AsyncIterator[Frame]:
    """The frames of the answer `run_id` to `conversation_id`, read from the store until it ends.
    Its record lapses to `interrupted` within seconds of a crash, so this always ends."""
    yield StartFrame(conversation_id=conversation_id, run_id=run_id)
    # Its record lapses to `interrupted` within seconds of a crash, so the wait ends without a bound.
    record = await services.answers.read_when_ended(conversation_id, owner, float("inf"), run_id)
    state = record["state"] if record is not None and record.get("run_id") == run_id else None
    answer = await _stored_answer(services, conversation_id, run_id)
    if answer is not None:  # committed: whatever the record says since (a later answer replaced it)
        details = _json(answer.get("details"))
        reason = _committed_reason(str(details.get("reason") or "complete"))
        cost = str(answer.get("cost") or "0")
        yield TextFrame(text=str(answer.get("content") or ""))
        yield DoneFrame(reason=reason, run_id=run_id,
                        cost=cost, cost_text=cost_text(Decimal(cost)), answer_seq=stored_count(answer["seq"]))
        return
    if state == STOPPED:
        yield DoneFrame(reason="stopped", run_id=run_id)
        return
    said = "failed" if state != ANSWERED else "was not stored"
    yield ErrorFrame(code="answer-not-stored", run_id=run_id,
                     message=f"The answer this request repeats {said}: nothing of it was kept, so ask again.")
    yield DoneFrame(reason="error", run_id=run_id)


async def _stored_answer(services: Services, conversation_id: str, run_id: str) -> StoredItem | None:
    """The last assistant message `run_id` stored (its answer), or None."""
    items = await services.conversations.read_items(conversation_id)
    mine = [i for i in items if i.get("run_id") == run_id and i.get("role") == "assistant" and not i.get("tool_calls")]
    return mine[-1] if mine else None


def _committed_reason(said: str) -> DoneReason:
    for known in _REASONS:
        if known == said:
            return known
    return "complete"


def _json(value: StoredValue) -> JsonObject:
    try:
        parsed: JsonValue = json.loads(str(value or "{}"))
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}
