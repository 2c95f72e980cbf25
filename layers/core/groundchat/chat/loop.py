"""The loop: one question in, typed frames out, tools called on the model's behalf.

`done` is emitted exactly once, here, on every exit path. The exchange (question, assistant turns,
tool results) is handed to `commit` before `done` leaves; a failed exchange is not committed.
"""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, AsyncIterator, Awaitable, Callable

from groundchat.exchange.frames import (
    DoneFrame,
    ErrorFrame,
    Frame,
    LimitFrame,
    StartFrame,
    TextFrame,
    ToolCallFrame,
    ToolResultFrame,
)
from groundchat.chat.history import Shortened
from groundchat.chat.steps import ModelStep, ToolStep
from groundchat.exchange.state import AnswerState
from groundchat.grounding.result_ceiling import fit_result
from groundchat.models.failures import ModelFailure, classify
from groundchat.models.messages import (
    ChatModel,
    ImageRef,
    Message,
    ModelRequest,
    StopEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    UsageEvent,
    tool_result_text,
)
from groundchat.chat.reader_debug import for_reader
from groundchat.spending.step_guard import NoSpendGuard, SpendCapReached, StepGuard
from groundchat.money import cost_text, money_text
from groundchat.store.availability import STORE_UNAVAILABLE, STORE_UNAVAILABLE_MESSAGE, store_unavailable
from groundchat.tools.base import ToolContext, ToolError, ToolRefused, ToolRegistry


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
    failure: dict[str, Any] | None = None
    started_at: float = field(default_factory=time.time)

    @property
    def annotations(self) -> dict[str, Any]:
        """What is stored with the assistant's answer (citations, views)."""
        return self.answer.annotations.stored()


AfterAnswer = Callable[[Exchange], Awaitable[list[Frame]]]
Commit = Callable[[Exchange], Awaitable[None]]


@dataclass
class LoopLimits:
    max_steps: int = 6
    max_output_tokens: int = 3000
    max_tool_result_chars: int = 60_000


@dataclass
class _StepOutcome:
    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    usage: UsageEvent | None = None
    stop: str = ""
    capped: bool = False  # the step's reservation was refused: it never ran


async def run_exchange(
    *,
    model: ChatModel,
    system: str,
    registry: ToolRegistry,
    ctx: ToolContext,
    history: list[Message],
    question: str,
    conversation_id: str,
    run_id: str | None = None,
    guard: StepGuard | None = None,
    limits: LoopLimits | None = None,
    after_answer: list[AfterAnswer] | None = None,
    commit: Commit | None = None,
    on_finish: Commit | None = None,
    history_shortening: Shortened | None = None,
    question_images: list[ImageRef] | None = None,
) -> AsyncIterator[Frame]:
    """`history_shortening` says what of `history` to send; its outcome goes out as a `history`
    frame, and a failed one ends the answer as `too-large`."""
    limits = limits or LoopLimits()
    guard = guard or NoSpendGuard()
    run_id = run_id or ctx.run_id or uuid.uuid4().hex
    ex = Exchange(conversation_id=conversation_id, run_id=run_id, question=question)
    ex.new_messages.append(Message(role="user", content=question, images=list(question_images or [])))
    ctx.answer = ex.answer
    reason = "error"
    try:
        yield StartFrame(conversation_id=conversation_id, run_id=run_id)
        specs = [t.spec() for t in await registry.offered(ctx.caller)]
        too_large = False
        if history_shortening is not None:
            ex.steps.extend(history_shortening.steps)  # a summarising step belongs to this run's trace
            if history or history_shortening.outcome != "unchanged":
                yield history_shortening.frame()
            too_large = history_shortening.outcome == "failed"
            history = history_shortening.messages
        reason = "too-large" if too_large else "max-steps"
        for step in range(0 if too_large else limits.max_steps):
            request = ModelRequest(system=system, messages=[*history, *ex.new_messages], tools=specs,
                                   max_output_tokens=limits.max_output_tokens)
            outcome = _StepOutcome()
            async for frame in _model_step(step, request, model, guard, ex, outcome):
                yield frame
            if outcome.capped:
                reason = "spend-cap"
                break
            if outcome.usage is None and guard.requires_usage:
                reason = "unmeasurable-cost"
                yield _unmeasured(ex, outcome)
                break
            if not outcome.calls:
                reason = "complete"
                break
            for call in outcome.calls:
                yield ToolCallFrame(id=call.id, name=call.name, args=call.args)
                async for frame in _run_tool(call, registry, ctx, ex, limits):
                    yield frame
        if reason in ("complete", "max-steps", "spend-cap", "unmeasurable-cost"):
            ex.done_reason = reason  # the commit stores how the answer ended (chat.answer_record)
            for check in after_answer or []:
                for frame in await check(ex):
                    yield frame
            if commit is not None:
                await commit(ex)
    except Exception as exc:  # a model that failed, a bug, or a commit that failed: still one done
        reason = "error"
        yield _failed(ex, exc)
    finally:
        ex.done_reason = reason
        if on_finish is not None:
            try:
                await on_finish(ex)
            except Exception:  # the trace writer must never take the done frame with it
                pass
    cost = answer_cost(ex)
    yield DoneFrame(reason=reason, run_id=run_id, cost=money_text(cost), cost_text=cost_text(cost))  # type: ignore[arg-type]


def answer_cost(ex: Exchange) -> Decimal:
    """What the answer was charged: its model steps (a history summary among them) and its searches."""
    steps = sum((step.charged for step in ex.steps if isinstance(step, ModelStep)), Decimal(0))
    return steps + sum(ex.answer.search_charges, Decimal(0))


class _StepFailed(Exception):
    def __init__(self, failure: ModelFailure) -> None:
        super().__init__(str(failure))
        self.failure = failure


async def _model_step(step: int, request: ModelRequest, model: ChatModel, guard: StepGuard, ex: Exchange,
                      out: _StepOutcome) -> AsyncIterator[Frame]:
    """One model call between its reservation and its settlement; fills `out`."""
    try:
        reservation = await guard.reserve(request, step)
    except SpendCapReached as cap:
        out.capped = True
        yield LimitFrame(scope=cap.scope, message=cap.message, resets_at=cap.resets_at)
        return
    text_parts: list[str] = []
    started = time.perf_counter()
    try:
        async for event in model(request):
            if isinstance(event, TextDelta):
                if event.text:
                    text_parts.append(event.text)
                    yield TextFrame(text=event.text)
            elif isinstance(event, ToolCallEvent):
                out.calls.append(ToolCall(id=event.id, name=event.name, args=event.args))
            elif isinstance(event, UsageEvent):
                out.usage = event
            elif isinstance(event, StopEvent):
                out.stop = event.reason
    except Exception as exc:
        charge = await guard.settle(reservation, out.usage, failed=True)
        failure = classify(exc)
        ex.steps.append(_model_record(step, model, out, charge, started, failure))
        raise _StepFailed(failure) from exc
    charge = await guard.settle(reservation, out.usage)
    ex.steps.append(_model_record(step, model, out, charge, started, None))
    out.text = "".join(text_parts)
    ex.answer_text += out.text
    ex.new_messages.append(Message(role="assistant", content=out.text, tool_calls=out.calls))


def _unmeasured(ex: Exchange, out: _StepOutcome) -> LimitFrame:
    if out.calls:
        # The calls will not run: the stored turn must not carry calls nobody answers, or the
        # next question's transcript would be refused by every provider.
        ex.new_messages.pop()
        if out.text:
            ex.new_messages.append(Message(role="assistant", content=out.text))
    return LimitFrame(scope="usage", message="The model reported no usage; the step was charged in full and the answer stops here.")


def _failed(ex: Exchange, exc: Exception) -> ErrorFrame:
    if store_unavailable(exc):  # the answer could not be stored: not the model's fault
        ex.failure = {"class": STORE_UNAVAILABLE, "reason": type(exc).__name__}
        return ErrorFrame(code=STORE_UNAVAILABLE, message=STORE_UNAVAILABLE_MESSAGE, run_id=ex.run_id,
                          reason=type(exc).__name__)
    failure = exc.failure if isinstance(exc, _StepFailed) else classify(exc)
    ex.failure = failure.trace_record()
    # The reader's card and the operator's trace read the same class and the same sanitised reason.
    code = getattr(exc, "code", None) or failure.cls
    message = getattr(exc, "message", None) or failure.reader_message
    return ErrorFrame(code=code, message=message, run_id=ex.run_id, reason=failure.reader_reason)


TOOL_FAILED = "tool-failed"


async def _run_tool(call: ToolCall, registry: ToolRegistry, ctx: ToolContext, ex: Exchange, limits: LoopLimits) -> AsyncIterator[Frame]:
    started = time.perf_counter()
    outcome = "ok"
    detail = ""
    try:
        value = await registry.execute(call.name, call.args, ctx)
        value = fit_result(value, limits.max_tool_result_chars)
        ex.answer.tool_results.append({"id": call.id, "name": call.name, "result": value})
        ex.new_messages.append(Message(role="tool", tool_call_id=call.id, name=call.name, content=tool_result_text(value)))
        yield ToolResultFrame(id=call.id, name=call.name, result=value, debug=for_reader(ex.answer.debug))
        # Frames a tool asked for (e.g. a `view`) follow its result.
        for extra in ex.answer.take_frames():
            yield extra
    except (ToolRefused, ToolError) as exc:
        outcome = "refused" if isinstance(exc, ToolRefused) else "invalid"
        yield _tool_error(call, ex, str(exc))
    except Exception as exc:  # a tool that raises: the model sees a plain error and can recover
        outcome = "error"
        # The exception's own text may name an endpoint or a table: it goes to the trace only.
        detail = f"{type(exc).__name__}: {exc}"
        why = "its data could not be reached" if store_unavailable(exc) else "it failed inside"
        yield _tool_error(call, ex, f"{TOOL_FAILED}: {call.name} could not run this time ({why}); answer without it or try again later")
    ex.answer.take_frames()  # a tool that failed shows nothing
    ex.steps.append(ToolStep(id=call.id, name=call.name, args=call.args, outcome=outcome,  # type: ignore[arg-type]
                             latency_ms=round((time.perf_counter() - started) * 1000, 2), debug=ex.answer.take_debug(),
                             error_detail=detail if outcome == "error" else None))


def _tool_error(call: ToolCall, ex: Exchange, message: str) -> ToolResultFrame:
    ex.new_messages.append(Message(role="tool", tool_call_id=call.id, name=call.name, content=f"error: {message}", is_error=True))
    return ToolResultFrame(id=call.id, name=call.name, error=message)


def _model_record(step: int, model: ChatModel, out: _StepOutcome, charge: dict[str, Any], started: float,
                  failure: ModelFailure | None) -> ModelStep:
    return ModelStep(
        step=step,
        model=model.model_id,
        input_tokens=out.usage.input_tokens if out.usage else None,
        output_tokens=out.usage.output_tokens if out.usage else None,
        cost=charge.get("charged"),
        stop=out.stop,
        latency_ms=round((time.perf_counter() - started) * 1000, 2),
        failure=failure.trace_record() if failure else None,
    )
