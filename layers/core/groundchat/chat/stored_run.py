"""A person's answer as a run: committed to their conversation, traced, and counted.

`chat/answer.py` builds one per question once every check has passed; the loop calls `commit` for
an answer that ended well and `finish` on every exit path.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from groundchat.auth.callers import Caller
from groundchat.chat.answer_record import answer_record
from groundchat.chat.answer_run import COMMITTED_REASONS, AnswerRun, Exchange
from groundchat.chat.steps import ModelStep, trace_records, wordless_records
from groundchat.models.messages import Message
from groundchat.observability import record_answer, record_refusal
from groundchat.recall.hooks import index_committed
from groundchat.recall.plan import RecallPlan
from groundchat.services import Services
from groundchat.spending.budget_guard import BudgetGuard
from groundchat.store.answers_in_progress import ANSWERED, FAILED, STOPPED
from groundchat.store.deletion import forget_unanswered
from groundchat.store.recall_copies import redact_copies_of_deleted

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject

log = logging.getLogger("groundchat.chat")


@dataclass
class ConversationOpened:
    """The conversation an answer belongs to, as read under its claim."""

    id: str
    existing: dict[str, object] | None  # its stored item; None: a new conversation, created by the commit
    history: list[Message]


@dataclass(kw_only=True)
class StoredRun(AnswerRun):
    services: Services
    caller: Caller
    conversation: ConversationOpened
    recall: RecallPlan
    spend: BudgetGuard

    @property
    def shown_plan(self) -> JsonObject:
        """The recall plan in the reader's words (the done frame, the stored answer's Details)."""
        return self.recall.for_reader()

    async def commit(self, ex: Exchange) -> None:
        services = self.services
        # One expiry for the conversation and for what recall keeps of this exchange (recall.sweep).
        expires = services.conversations.expiry()
        recalled = sorted(ex.answer.recalled_from)
        await services.conversations.commit_exchange(
            conversation_id=ex.conversation_id, owner=self.caller.id, run_id=ex.run_id,
            existing=self.conversation.existing, messages=ex.new_messages, annotations=ex.annotations,
            title=ex.question, expires_at=expires,
            answer_record=answer_record(ex, recall=self.shown_plan),  # its cost and Details, shown again when reopened
            recalled_from=recalled,
        )
        first_seq = int(self.conversation.existing["next_seq"]) if self.conversation.existing else 0  # type: ignore[arg-type]
        last_answer = max((i for i, m in enumerate(ex.new_messages) if m.role == "assistant"), default=None)
        ex.answer_seq = first_seq + last_answer if last_answer is not None else None
        if recalled:
            # A conversation deleted while this answer ran was not found by its deletion's search
            # for copies (this commit came after it): its words are redacted here instead.
            async def still_held(source: str) -> bool:
                return await services.conversations.get_owned(source, self.caller.id) is not None

            await redact_copies_of_deleted(services.dynamo, ex.conversation_id, recalled, still_held)
            return  # an answer built on recall is not indexed as new material: no echo of the past
        # Only now, committed: never a failed or cancelled exchange.
        await index_committed(services.recall, self.recall, self.caller.id, ex, expires)

    async def stop_requested(self) -> bool:
        return await self.services.answers.stop_requested(self.conversation.id, self.run_id)

    async def beat(self) -> None:
        """This run's claim on its conversation (a new one holds none until its commit) and its
        record as the answer in progress, each by a short lease (store/leases.py)."""
        if self.conversation.existing is not None:
            await self.services.conversations.renew_claim(self.conversation.id, self.run_id)
        await self.services.answers.renew(self.conversation.id, self.run_id)

    async def renew(self) -> None:
        """Its open reservations, by a minute's lease (store/leases.py)."""
        await self.spend.renew()

    async def finish(self, ex: Exchange) -> None:
        services = self.services
        await self.spend.release_unused()  # the precheck's reservations no step used
        if self.conversation.existing is not None:
            # A commit already cleared this run's claim; any other ending must not leave the
            # conversation blocked. The release is conditional on the claim, so it is safe either way.
            await services.conversations.release(ex.conversation_id, ex.run_id)
        state = _answer_state(ex)
        # A new conversation's first question that went unanswered has no conversation to be
        # deleted with: its words go now, and its record and trace are written without them.
        unanswered = self.conversation.existing is None and state != ANSWERED
        try:
            if unanswered:
                await forget_unanswered(services.dynamo, ex.conversation_id, self.caller.id, ex.run_id,
                                        services.deletion_cleaners(), bool(self.question.images))
                await services.answers.record_ended(ex.conversation_id, self.caller.id, ex.run_id, state, ex.done_reason,
                                                    ex.started_at)
            else:
                await services.answers.end(ex.conversation_id, ex.run_id, state, ex.done_reason)
        except Exception:  # the record's lease lapses on its own: a reload then reads `interrupted`
            log.warning("could not record how run %s ended", ex.run_id, exc_info=True)
        steps = trace_records(ex.steps)
        await services.traces.put(
            run_id=ex.run_id, caller=self.caller.id, conversation_id=ex.conversation_id, started_at=ex.started_at,
            outcome=ex.done_reason, steps=wordless_records(steps) if unanswered else steps, failure=ex.failure,
            question="" if unanswered else ex.question, checks=_check_counts(ex), recall=self.recall.record(),
        )
        _record_metrics(ex)


def _answer_state(ex: Exchange) -> str:
    if ex.done_reason == "stopped":
        return STOPPED
    return ANSWERED if ex.done_reason in COMMITTED_REASONS else FAILED


def _check_counts(ex: Exchange) -> dict[str, int | str] | None:
    report = ex.answer.annotations.citations
    if report is None:
        return None
    support = report.get("support", [])
    return {"verified_refs": report["verified"], "unverified_refs": len(report["unverified"]),
            "unverified_numbers": len(report.get("unverified_numbers", [])),
            "support_checked": len(support), "weak_support": sum(1 for s in support if s["verdict"] == "weak"),
            "support_state": report.get("support_state", "nothing-to-check")}


def _record_metrics(ex: Exchange) -> None:
    model_steps = [step for step in ex.steps if isinstance(step, ModelStep)]
    input_tokens = sum(step.input_tokens or 0 for step in model_steps)
    output_tokens = sum(step.output_tokens or 0 for step in model_steps)
    cost = sum((step.charged for step in model_steps), Decimal(0))
    record_answer(cost, input_tokens + output_tokens, input_tokens=input_tokens, output_tokens=output_tokens)
    if ex.done_reason in ("spend-cap", "unmeasurable-cost", "error", "too-large"):
        record_refusal(ex.done_reason)
