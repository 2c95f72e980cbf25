"""One answer as the loop reads it: built once, before the first frame, by whoever asks.

`chat/answer.py` builds it for every question a person asks (its `commit` stores the exchange and
its `finish` writes the trace); tests and benchmarks build plain ones. Everything the model is sent
(system prompt, offered tools, history, the question's message) is fixed here, so the first
step's reservation, made before the run starts, priced exactly the request step 0 sends.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Awaitable, Callable, Sequence

from groundchat import telemetry
from groundchat.chat.history import Shortened
from groundchat.chat.steps import ModelStep, ToolStep
from groundchat.exchange.frames import Frame
from groundchat.exchange.state import AnswerState
from groundchat.models.messages import ChatModel, Message, ToolSpec
from groundchat.spending.step_guard import NoSpendGuard, StepGuard
from groundchat.tools.base import Registry, ToolContext

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject


@dataclass
class Exchange:
    """What one question produced: the turns to commit, and the trace of the run."""

    conversation_id: str
    run_id: str
    question: str
    new_messages: list[Message] = field(default_factory=list)
    steps: list[ModelStep | ToolStep] = field(default_factory=list)
    # Tool results, annotations (citations, views) and frames tools asked for: shared with tools.
    answer: AnswerState = field(default_factory=AnswerState)
    answer_text: str = ""
    done_reason: str = ""
    failure: JsonObject | None = None
    answer_seq: int | None = None  # set by a commit that stored the answer (the `done` frame says it)
    started_at: float = field(default_factory=time.time)

    @property
    def annotations(self) -> JsonObject:
        """What is stored with the assistant's answer (citations, views)."""
        return self.answer.annotations.stored()


def answer_cost(ex: Exchange) -> Decimal:
    """What the answer was charged: its model steps (a history summary among them) and its searches."""
    steps = sum((step.charged for step in ex.steps if isinstance(step, ModelStep)), Decimal(0))
    return steps + sum(ex.answer.search_charges, Decimal(0))


# How an answer that is committed can end: the loop commits these, and no other.
COMMITTED_REASONS = ("complete", "max-steps", "spend-cap", "unmeasurable-cost")


# A check that runs once the answer is complete and before it commits (citations, freshness).
AfterAnswer = Callable[[Exchange], Awaitable[Sequence[Frame]]]


@dataclass
class LoopLimits:
    max_steps: int = 6
    max_output_tokens: int = 3000
    max_tool_result_chars: int = 60_000


@dataclass(kw_only=True)
class AnswerRun:
    """What one answer needs. The base commits and records nothing: an answer nobody stores."""

    model: ChatModel
    system: str
    registry: Registry
    # The tool specs the model is offered, read once from the registry for this caller.
    offered: list[ToolSpec]
    # What the tools reach; its `answer` is this run's state, shared with the exchange.
    ctx: ToolContext
    question: Message
    conversation_id: str
    run_id: str
    # The earlier messages the model is sent (already shortened, if they had to be).
    history: list[Message] = field(default_factory=list)
    # What shortening the conversation's history did, sent as a `history` frame; None: nothing to say.
    shortening: Shortened | None = None
    guard: StepGuard = field(default_factory=NoSpendGuard)
    limits: LoopLimits = field(default_factory=LoopLimits)
    checks: Sequence[AfterAnswer] = ()
    # The context the answer was asked in (the caller's trace, when a `traceparent` came with the
    # question): read where the run is built, since the frames may be drawn in another context.
    trace_parent: object = field(default_factory=telemetry.caller_context)

    async def begin(self) -> None:
        """Called once, before the first frame: the answer is now in progress (a record others read)."""

    async def stop_requested(self) -> bool:
        """Read at each step boundary: True ends the answer there, as `stopped` (store/answers_in_progress.py)."""
        return False

    async def commit(self, ex: Exchange) -> None:
        """Store the exchange: called once, after the checks, only for an answer that ended well."""

    async def finish(self, ex: Exchange) -> None:
        """Called on every exit path, after the commit or the failure (trace, claims, metrics)."""

    async def beat(self) -> None:
        """Called every `BEAT_SECONDS` while the answer runs: renews what a reader judges it by (its
        record as the answer in progress, its claim on the conversation), so they lapse within
        15 s of a crash (store/leases.py)."""

    async def renew(self) -> None:
        """Called every `RENEW_SECONDS` while the answer runs: renews its spending reservations, so
        they lapse about a minute after a crash."""

    def exchange(self) -> Exchange:
        return Exchange(conversation_id=self.conversation_id, run_id=self.run_id, question=self.question.content,
                        new_messages=[self.question], answer=self.ctx.answer)


async def offered_specs(registry: Registry, ctx: ToolContext) -> list[ToolSpec]:
    """The specs a caller is offered: what `AnswerRun.offered` holds."""
    return [tool.spec() for tool in await registry.offered(ctx.caller)]
