"""The summarising history strategy ("long-authoring"): the oldest exchanges become a summary
written by the configured model, and the person's opening message stays word for word.

What the model is sent: one context turn (the opening message, then the summary of everything
before the kept exchanges), the kept exchanges, the question. The summary is kept on the
conversation (`store/history_summary.py`), so the next answer starts from it; when the history
outgrows the limit again, the next oldest exchanges are folded into it with the previous summary
(a compaction). Each summarising call is a model step like any other: reserved against the caps
before it runs (SpendCapReached goes up: the question is refused with 429 before the answer),
settled after, in the usage table as `history-summary`, and recorded in the run's trace.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from groundchat.chat.history import WARN_FRACTION, HistoryPolicy, Shortened, near_limit
from groundchat.chat.steps import ModelStep, charged_text
from groundchat.chat.summary_prompt import summary_request, turn_chars_for
from groundchat.models.failures import classify
from groundchat.models.messages import ChatModel, Message, ModelRequest, StopEvent, TextDelta, ToolSpec, UsageEvent
from groundchat.spending.step_guard import StepGuard
from groundchat.spending.token_estimate import estimate_request_tokens
from groundchat.store.dynamo import Dynamo
from groundchat.store.history_summary import StoredSummary, save_summary
from groundchat.store.usage import KIND_HISTORY_SUMMARY

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject

# A compaction leaves the history at this share of the limit, so the next few answers fit as they
# are instead of each paying for a summary.
COMPACT_TO = 0.6
# The summary's own ceiling, as a share of the limit (and never above the step's output ceiling).
SUMMARY_SHARE = 0.1
# Folding the excerpt into the summary one part at a time, at most this many model steps.
MAX_ROUNDS = 4


class CompactionFailed(Exception):
    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@dataclass
class Summariser:
    """The compactor of one answer: its model, its guard, and the conversation it may write to."""

    model: ChatModel
    guard: StepGuard
    dynamo: Dynamo | None
    conversation_id: str
    run_id: str
    stored: StoredSummary | None
    bot_name: str
    max_output_tokens: int
    steps: list[ModelStep] = field(default_factory=list)

    async def compact(self, history: list[Message], question: Message, system: str, tools: list[ToolSpec],
                      policy: HistoryPolicy) -> Shortened:
        limit = policy.max_input_tokens

        def count(messages: list[Message]) -> int:
            return estimate_request_tokens(ModelRequest(system=system, messages=messages, tools=tools))

        overhead = count([])
        if overhead > limit:
            return Shortened("failed", [], ["history.overhead_exceeds_limit"], "overhead_exceeds_limit", overhead, limit)
        opening = history[0].content if history[0].role == "user" else ""
        stored = self.stored if self.stored and 0 < self.stored.through <= len(history) else None
        through = stored.through if stored else 0
        sent = _sent(opening, stored.text if stored else "", through, history)
        total = count([*sent, question])
        if total <= limit:
            if stored is None:
                return near_limit(Shortened("unchanged", list(history), [], None, total, limit))
            codes = ["history.summary_reused"] + (["history.near_limit"] if total > WARN_FRACTION * limit else [])
            return Shortened("reduced", sent, codes, None, total, limit, summarised_messages=through)
        summary_tokens = max(64, min(self.max_output_tokens, int(limit * SUMMARY_SHARE)))
        if count([context_message(opening, "x" * (summary_tokens * 4), len(history)), question]) > limit:
            # Even with everything summarised the question would not fit: no summary is paid for.
            return Shortened("failed", [], ["history.cannot_reduce"], "cannot_reduce", count([question]), limit,
                             dropped_messages=len(history))
        fold = _fold_until(history, through, opening, summary_tokens, count, question, int(limit * COMPACT_TO))
        try:
            text = await self._summarise(history[through:fold], through, stored, summary_tokens, limit)
        except CompactionFailed as failed:
            return Shortened("failed", [], ["history.compaction_failed", f"history.{failed.code}"], "compaction_failed",
                             total, limit, dropped_messages=len(history), steps=self.steps)
        summary = StoredSummary(text, fold, (stored.compactions if stored else 0) + 1)
        if self.dynamo is not None:
            await save_summary(self.dynamo, self.conversation_id, self.run_id, summary)
        self.stored = summary
        sent = _sent(opening, text, fold, history)
        total = count([*sent, question])
        if total > limit:
            return Shortened("failed", [], ["history.cannot_reduce"], "cannot_reduce", total, limit,
                             dropped_messages=len(history), summarised_messages=fold, steps=self.steps)
        return Shortened("reduced", sent, ["history.summarised"], None, total, limit, summarised_messages=fold,
                         steps=self.steps)

    async def _summarise(self, folded: list[Message], first_seq: int, stored: StoredSummary | None,
                         summary_tokens: int, limit: int) -> str:
        """The previous summary with `folded` added, in as few steps as fit the model's window."""
        text, through = (stored.text, stored.through) if stored else (None, 0)
        remaining = _exchanges_of(folded)
        for round_ in range(MAX_ROUNDS):
            part = 1
            while part < len(remaining) and self._fits(remaining[: part + 1], first_seq, text, through, summary_tokens, limit):
                part += 1
            messages = [m for group in remaining[:part] for m in group]
            request = summary_request(messages, first_seq, text, through, bot_name=self.bot_name,
                                      max_output_tokens=summary_tokens, max_turn_chars=turn_chars_for(limit))
            if estimate_request_tokens(request) > limit:
                raise CompactionFailed("excerpt_too_large")
            text = await self._step(request, round_)
            first_seq += len(messages)
            through = first_seq
            remaining = remaining[part:]
            if not remaining:
                return text
        raise CompactionFailed("too_many_rounds")

    def _fits(self, groups: list[list[Message]], first_seq: int, text: str | None, through: int,
              summary_tokens: int, limit: int) -> bool:
        messages = [m for group in groups for m in group]
        request = summary_request(messages, first_seq, text, through, bot_name=self.bot_name, max_output_tokens=summary_tokens,
                                  max_turn_chars=turn_chars_for(limit))
        return estimate_request_tokens(request) <= limit

    async def _step(self, request: ModelRequest, index: int) -> str:
        """One summarising model call between its reservation and its settlement."""
        reservation = await self.guard.reserve(request, index, kind=KIND_HISTORY_SUMMARY)
        parts: list[str] = []
        usage: UsageEvent | None = None
        stop = ""
        started = time.perf_counter()
        try:
            async for event in self.model(request):
                if isinstance(event, TextDelta):
                    parts.append(event.text)
                elif isinstance(event, UsageEvent):
                    usage = event
                elif isinstance(event, StopEvent):
                    stop = event.reason
        except Exception as exc:
            charge = await self.guard.settle(reservation, usage, failed=True)
            self.steps.append(self._record(index, usage, charged_text(charge), stop, started, classify(exc).trace_record()))
            raise CompactionFailed("summary_step_failed") from exc
        charge = await self.guard.settle(reservation, usage)
        self.steps.append(self._record(index, usage, charged_text(charge), stop, started, None))
        if usage is None and self.guard.requires_usage:
            raise CompactionFailed("unmeasurable_cost")  # charged in full, and the request ends, as any step
        text = "".join(parts).strip()
        if not text:
            raise CompactionFailed("empty_summary")
        return text

    def _record(self, index: int, usage: UsageEvent | None, cost: str | None, stop: str, started: float,
                failure: JsonObject | None) -> ModelStep:
        return ModelStep(step=index, model=self.model.model_id, input_tokens=usage.input_tokens if usage else None,
                         output_tokens=usage.output_tokens if usage else None, cost=cost, stop=stop,
                         latency_ms=round((time.perf_counter() - started) * 1000, 2), failure=failure,
                         purpose="history-summary")


CONTEXT_HEAD = "(Context, not a new question: the start of this conversation, shortened to fit.)"


def context_message(opening: str, summary: str, through: int) -> Message:
    """The turn that stands for messages 1..through: the opening message verbatim, then the summary."""
    lines = [CONTEXT_HEAD]
    if opening:
        lines += ["The person's opening message, word for word:", opening.strip()]
    lines += [f"A summary of messages 1-{through} (written to save space; the person's words are above):", summary.strip()]
    return Message(role="user", content="\n".join(lines))


def _sent(opening: str, summary: str, through: int, history: list[Message]) -> list[Message]:
    return [context_message(opening, summary, through), *history[through:]] if through else list(history)


def _exchanges_of(messages: list[Message]) -> list[list[Message]]:
    groups: list[list[Message]] = []
    for message in messages:
        if message.role == "user" or not groups:
            groups.append([message])
        else:
            groups[-1].append(message)
    return groups


def _fold_until(history: list[Message], through: int, opening: str, summary_tokens: int, count: Callable[[list[Message]], int], question: Message,
                target: int) -> int:
    """Where the new summary ends: whole exchanges after `through`, oldest first, until what is left
    (with a summary of the largest size allowed) is under `target`; all of them if it never is."""
    placeholder = "x" * (summary_tokens * 4)  # the longest summary the step may write, counted high
    end = through
    for group in _exchanges_of(history[through:]):
        end += len(group)
        if count([context_message(opening, placeholder, end), *history[end:], question]) <= target:
            break
    return end
