"""A person's answer as a run: committed to their conversation, traced, and counted.

`chat/answer.py` composes one per question once every check has passed; the loop calls `commit`
for an answer that ended well and `finish` on every exit path. It holds what those need and no
more: the stores it writes (`RunStores`), the conversation's stored item as read under its claim,
the recall plan, and the budget guard as the run's one guard.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from groundchat.chat.answer_record import answer_record
from groundchat.chat.answer_run import COMMITTED_REASONS, AnswerRun, Exchange
from groundchat.chat.stored_counts import stored_count
from groundchat.json_shapes import as_list, as_object
from groundchat.chat.steps import ModelStep, trace_records, wordless_records
from groundchat.observability import record_answer, record_refusal
from groundchat.recall.hooks import index_committed
from groundchat.recall.plan import RecallPlan
from groundchat.spending.budget_guard import BudgetGuard
from groundchat.store.answers_in_progress import ANSWERED, FAILED, STOPPED
from groundchat.store.deletion import forget_unanswered
from groundchat.store.recall_copies import redact_copies_of_deleted

if TYPE_CHECKING:
    from groundchat.store.items import StoredItem
    from groundchat.json_shapes import JsonObject
    from groundchat.recall.index import RecallIndex
    from groundchat.store.answers_in_progress import AnswersInProgress
    from groundchat.store.conversations import ConversationStore
    from groundchat.store.deletion_jobs import Cleaners
    from groundchat.store.dynamo import Dynamo
    from groundchat.store.traces import TraceStore

log = logging.getLogger("groundchat.chat")


@dataclass(frozen=True)
class RunStores:
    """What a person's run writes, besides its spending: the conversation, its record as the answer
    in progress, its trace, what recall keeps of it, and what an unanswered first question removes."""

    dynamo: Dynamo
    conversations: ConversationStore
    answers: AnswersInProgress
    traces: TraceStore
    cleaners: Cleaners
    recall: RecallIndex | None  # None: this run's recall plan indexes nothing


@dataclass(kw_only=True)
class StoredRun(AnswerRun):
    stores: RunStores
    # The conversation's stored item, read under this run's claim; None: a new conversation, which
    # the commit creates (and which holds no claim until then).
    existing: StoredItem | None
    recall: RecallPlan
    # The base's guard, priced: it also renews the run's reservations and gives back what no step used.
    # Narrowed from the base's StepGuard, which a dataclass field cannot say soundly since fields are
    # mutable; nothing assigns it after construction, so the narrowing holds.
    guard: BudgetGuard  # pyright: ignore[reportIncompatibleVariableOverride, reportGeneralTypeIssues]

    @property
    def owner(self) -> str:
        return self.ctx.caller.id

    @property
    def shown_plan(self) -> JsonObject:
        """The recall plan in the reader's words (the done frame, the stored answer's Details)."""
        return self.recall.for_reader()

    async def commit(self, ex: Exchange) -> None:
        stores = self.stores
        # One expiry for the conversation and for what recall keeps of this exchange (recall.sweep).
        expires = stores.conversations.expiry()
        recalled = sorted(ex.answer.recalled_from)
        await stores.conversations.commit_exchange(
            conversation_id=ex.conversation_id, owner=self.owner, run_id=ex.run_id,
            existing=self.existing, messages=ex.new_messages, annotations=ex.annotations,
            title=ex.question, expires_at=expires,
            answer_record=answer_record(ex, recall=self.shown_plan),  # its cost and Details, shown again when reopened
            recalled_from=recalled,
        )
        first_seq = stored_count(self.existing["next_seq"]) if self.existing else 0
        last_answer = max((i for i, m in enumerate(ex.new_messages) if m.role == "assistant"), default=None)
        ex.answer_seq = first_seq + last_answer if last_answer is not None else None
        if recalled:
            # A conversation deleted while this answer ran was not found by its deletion's search
            # for copies (this commit came after it): its words are redacted here instead.
            async def still_held(source: str) -> bool:
                return await stores.conversations.get_owned(source, self.owner) is not None

            await redact_copies_of_deleted(stores.dynamo, ex.conversation_id, recalled, still_held)
            return  # an answer built on recall is not indexed as new material: no echo of the past
        if stores.recall is not None:
            # Only now, committed: never a failed or cancelled exchange.
            await index_committed(stores.recall, self.recall, self.owner, ex, expires)

    async def stop_requested(self) -> bool:
        return await self.stores.answers.stop_requested(self.conversation_id, self.run_id)

    async def beat(self) -> None:
        """This run's claim on its conversation (a new one holds none until its commit) and its
        record as the answer in progress, each by a short lease (store/leases.py)."""
        if self.existing is not None:
            await self.stores.conversations.renew_claim(self.conversation_id, self.run_id)
        await self.stores.answers.renew(self.conversation_id, self.run_id)

    async def renew(self) -> None:
        """Its open reservations, by a minute's lease (store/leases.py)."""
        await self.guard.renew()

    async def finish(self, ex: Exchange) -> None:
        stores = self.stores
        await self.guard.release_unused()  # the precheck's reservations no step used
        if self.existing is not None:
            # A commit already cleared this run's claim; any other ending must not leave the
            # conversation blocked. The release is conditional on the claim, so it is safe either way.
            await stores.conversations.release(ex.conversation_id, ex.run_id)
        state = _answer_state(ex)
        # A new conversation's first question that went unanswered has no conversation to be
        # deleted with: its words go now, and its record and trace are written without them.
        unanswered = self.existing is None and state != ANSWERED
        try:
            if unanswered:
                await forget_unanswered(stores.dynamo, ex.conversation_id, self.owner, ex.run_id,
                                        stores.cleaners, bool(self.question.images))
                await stores.answers.record_ended(ex.conversation_id, self.owner, ex.run_id, state, ex.done_reason,
                                                  ex.started_at)
            else:
                await stores.answers.end(ex.conversation_id, ex.run_id, state, ex.done_reason)
        except Exception:  # the record's lease lapses on its own: a reload then reads `interrupted`
            log.warning("could not record how run %s ended", ex.run_id, exc_info=True)
        steps = trace_records(ex.steps)
        await stores.traces.put(
            run_id=ex.run_id, caller=self.owner, conversation_id=ex.conversation_id, started_at=ex.started_at,
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
    # The report is the citations frame's JSON (grounding/citations.py): read by its shape.
    verified = report["verified"]
    if not isinstance(verified, int):
        raise TypeError(f"a citations report counts its verified refs, not {verified!r}")
    support = as_list(report.get("support", []))
    return {"verified_refs": verified, "unverified_refs": len(as_list(report["unverified"])),
            "unverified_numbers": len(as_list(report.get("unverified_numbers", []))),
            "support_checked": len(support),
            "weak_support": sum(1 for s in support if as_object(s)["verdict"] == "weak"),
            "support_state": str(report.get("support_state", "nothing-to-check"))}


def _record_metrics(ex: Exchange) -> None:
    model_steps = [step for step in ex.steps if isinstance(step, ModelStep)]
    input_tokens = sum(step.input_tokens or 0 for step in model_steps)
    output_tokens = sum(step.output_tokens or 0 for step in model_steps)
    cost = sum((step.charged for step in model_steps), Decimal(0))
    record_answer(cost, input_tokens + output_tokens, input_tokens=input_tokens, output_tokens=output_tokens)
    if ex.done_reason in ("spend-cap", "unmeasurable-cost", "error", "too-large"):
        record_refusal(ex.done_reason)
