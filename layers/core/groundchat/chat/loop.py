"""The loop: one question in, typed frames out, tools called on the model's behalf.

`done` is emitted exactly once, here, on every exit path. The exchange (question, assistant turns,
tool results) is handed to the run's `commit` before `done` leaves; a failed or stopped exchange is
not committed (store/answers_in_progress.py says why). What the loop reads (model, tools, history, question, caps) is one `AnswerRun`.
"""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, AsyncIterator

from groundchat.exchange.frames import (
    DoneFrame,
    ErrorFrame,
    Frame,
    LimitFrame,
    StartFrame,
    StepFrame,
    TextFrame,
    ToolCallFrame,
    ToolInputDeltaFrame,
    ToolResultFrame,
)
from groundchat.chat.answer_run import COMMITTED_REASONS, AnswerRun, Exchange, LoopLimits, answer_cost
from groundchat.chat.steps import ModelStep, ToolStep, charged_text
from groundchat.grounding.result_ceiling import fit_result
from groundchat.models.failures import ModelFailure, classify
from groundchat.models.messages import (
    ChatModel,
    Message,
    ModelRequest,
    StopEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    ToolInputDelta,
    UsageEvent,
    tool_result_text,
)
from groundchat.chat.reader_debug import for_reader
from groundchat.spending.step_guard import SpendCapReached, StepGuard
from groundchat.money import cost_text, money_text
from groundchat.store.availability import STORE_UNAVAILABLE, STORE_UNAVAILABLE_MESSAGE, store_unavailable
from groundchat.store.leases import BEAT_SECONDS, RENEW_SECONDS
from groundchat import telemetry
from groundchat.telemetry import answer_spans
from groundchat.tools.base import Registry, ToolContext, ToolError, ToolRefused

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject

log = logging.getLogger("groundchat.chat")


@dataclass
class _StepOutcome:
    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    usage: UsageEvent | None = None
    stop: str = ""
    capped: bool = False  # the step's reservation was refused: it never ran
    over_bound: bool = False  # it was charged more than its reservation: spending is now blocked


async def run_exchange(run: AnswerRun) -> AsyncIterator[Frame]:
    """The run's frames, `done` last. `run.shortening` says what was done to the conversation's
    history; its outcome goes out as a `history` frame, and a failed one ends the answer as `too-large`."""
    ex = run.exchange()
    guard, limits = run.guard, run.limits
    trace = answer_spans.start_answer(run.trace_parent, run.conversation_id, run.run_id, run.question.content)
    heartbeat = asyncio.create_task(_renew_while_running(run))
    reason = "error"
    try:
        await run.begin()
        yield StartFrame(conversation_id=run.conversation_id, run_id=run.run_id)
        too_large = False
        if run.shortening is not None:
            ex.steps.extend(run.shortening.steps)  # a summarising step belongs to this run's trace
            yield run.shortening.frame()
            too_large = run.shortening.outcome == "failed"
        reason = "too-large" if too_large else "max-steps"
        for step in range(0 if too_large else limits.max_steps):
            if step and await run.stop_requested():
                reason = "stopped"
                break
            request = ModelRequest(system=run.system, messages=[*run.history, *ex.new_messages], tools=run.offered,
                                   max_output_tokens=limits.max_output_tokens)
            outcome = _StepOutcome()
            async for frame in _model_step(step, request, run.model, guard, ex, outcome, trace):
                yield frame
            if outcome.capped:  # refused before its call: no step started
                reason = "spend-cap"
                break
            ends = True
            if outcome.usage is None and guard.requires_usage:
                reason = "unmeasurable-cost"
                yield _unmeasured(ex, outcome)
            elif outcome.over_bound:
                reason = "spend-cap"
                yield _stopped_after(ex, outcome, "chat", OVER_BOUND_MESSAGE)
            elif not outcome.calls:
                reason = "complete"
            elif await run.stop_requested():  # the tools this step asked for never run
                reason = "stopped"
            else:
                ends = False
                for call in outcome.calls:
                    yield ToolCallFrame(id=call.id, name=call.name, args=call.args)
                    async for frame in _run_tool(call, run.registry, run.ctx, ex, limits, trace):
                        yield frame
            yield StepFrame(phase="finish", step=step, finish_reason=outcome.stop or None)
            if ends:
                break
        if reason in COMMITTED_REASONS:
            ex.done_reason = reason  # the commit stores how the answer ended (chat.answer_record)
            for check in run.checks:
                for frame in await check(ex):
                    yield frame
            await run.commit(ex)
    except Exception as exc:  # a model that failed, a bug, or a commit that failed: still one done
        reason = "error"
        yield _failed(ex, exc)
    finally:
        heartbeat.cancel()
        ex.done_reason = reason
        try:
            await run.finish(ex)
        except Exception:  # the trace writer must never take the done frame with it
            pass
    cost = answer_cost(ex)
    model_steps = [step for step in ex.steps if isinstance(step, ModelStep)]
    input_tokens, output_tokens = sum(s.input_tokens or 0 for s in model_steps), sum(s.output_tokens or 0 for s in model_steps)
    answer_spans.end_answer(trace, reason, cost, ex.answer_text, _price_id(run.model), input_tokens, output_tokens, ex.failure)
    yield DoneFrame(reason=reason, run_id=run.run_id, cost=money_text(cost), cost_text=cost_text(cost),  # type: ignore[arg-type]
                    answer_seq=ex.answer_seq if reason in COMMITTED_REASONS else None,
                    input_tokens=input_tokens, output_tokens=output_tokens)
    if trace.recording and telemetry.on_lambda():
        # The last frame is out; Lambda may freeze the process once the response ends, so the
        # answer's spans leave now, before the stream closes, rather than with a later invocation.
        await asyncio.to_thread(telemetry.flush)


def _price_id(model: ChatModel) -> str:
    return getattr(model, "price_id", None) or model.model_id


async def _renew_while_running(run: AnswerRun) -> None:
    """The answer's heartbeat: its leases live exactly as long as this loop does. Every beat renews
    what readers judge it by (its record, its claim); every `RENEW_SECONDS`, its reservations too.
    A renewal that fails is tried again next time; each lease is long enough to miss two."""
    renewed = time.monotonic()
    while True:
        await asyncio.sleep(min(BEAT_SECONDS, RENEW_SECONDS))
        try:
            await run.beat()
            if time.monotonic() - renewed >= RENEW_SECONDS:
                await run.renew()
                renewed = time.monotonic()
        except Exception:
            log.warning("could not renew the leases of run %s", run.run_id, exc_info=True)


class _StepFailed(Exception):
    def __init__(self, failure: ModelFailure) -> None:
        super().__init__(str(failure))
        self.failure = failure


async def _model_step(step: int, request: ModelRequest, model: ChatModel, guard: StepGuard, ex: Exchange,
                      out: _StepOutcome, trace: telemetry.AnySpan = telemetry.NO_SPAN) -> AsyncIterator[Frame]:
    """One model call between its reservation and its settlement; fills `out`."""
    spans = answer_spans.ModelStepSpan(trace, step, _price_id(model), request.max_output_tokens)
    held = answer_spans.reserve_span(spans.span, "reserve", step)
    try:
        with telemetry.active(held), telemetry.ended_on_error(held):
            reservation = await guard.reserve(request, step)
    except SpendCapReached as cap:
        out.capped = True
        spans.end(None, None, "", None, cap.code)
        yield LimitFrame(scope=cap.scope, message=cap.message, resets_at=cap.resets_at)
        return
    except Exception as exc:
        spans.end(None, None, "", None, type(exc).__qualname__)
        raise
    answer_spans.spent(held, getattr(reservation, "amount", None))
    yield StepFrame(phase="start", step=step)
    text_parts: list[str] = []
    started = time.perf_counter()
    spans.calling()
    try:
        async for event in model(request):
            if isinstance(event, TextDelta):
                if event.text:
                    spans.chunk()
                    text_parts.append(event.text)
                    yield TextFrame(text=event.text)
            elif isinstance(event, ToolInputDelta):  # shown as it is written; the call below is what runs
                spans.chunk()
                yield ToolInputDeltaFrame(id=event.id, name=event.name, delta=event.delta)
            elif isinstance(event, ToolCallEvent):
                spans.chunk()
                out.calls.append(ToolCall(id=event.id, name=event.name, args=event.args))
            elif isinstance(event, UsageEvent):
                out.usage = event
            elif isinstance(event, StopEvent):
                out.stop = event.reason
    except Exception as exc:
        spans.returned()
        failure = classify(exc)
        # What was never sent, or was refused before any generation, cannot have been billed: $0.
        charge = await _settled(guard, reservation, out, spans, step, failed=True,
                                never_billed=failure.never_billed and out.usage is None)
        ex.steps.append(_model_record(step, model, out, charge, started, failure))
        spans.end(*_usage(out), out.stop, charge.get("charged"), failure.cls)
        raise _StepFailed(failure) from exc
    spans.returned()
    charge = await _settled(guard, reservation, out, spans, step)
    spans.end(*_usage(out), out.stop, charge.get("charged"))
    out.over_bound = bool(charge.get("over_bound"))
    ex.steps.append(_model_record(step, model, out, charge, started, None))
    out.text = "".join(text_parts)
    ex.answer_text += out.text
    ex.new_messages.append(Message(role="assistant", content=out.text, tool_calls=out.calls))


async def _settled(guard: StepGuard, reservation: object, out: _StepOutcome, spans: answer_spans.ModelStepSpan, step: int,
                   *, failed: bool = False, never_billed: bool = False) -> JsonObject:
    settling = answer_spans.settle_span(spans.span, step)
    with telemetry.active(settling), telemetry.ended_on_error(settling):
        charge = await guard.settle(reservation, out.usage, failed=failed, never_billed=never_billed)
    answer_spans.spent(settling, charge.get("charged"), "over-bound" if charge.get("over_bound") else "ok")
    return charge


def _usage(out: _StepOutcome) -> tuple[int | None, int | None]:
    return (out.usage.input_tokens, out.usage.output_tokens) if out.usage else (None, None)


OVER_BOUND_MESSAGE = ("The model reported more usage than this step could cost. It was charged as reported, the "
                      "answer stops here, and spending is stopped until an operator has looked.")


def _unmeasured(ex: Exchange, out: _StepOutcome) -> LimitFrame:
    return _stopped_after(ex, out, "usage", "The model reported no usage; the step was charged in full and the answer stops here.")


def _stopped_after(ex: Exchange, out: _StepOutcome, scope: str, message: str) -> LimitFrame:
    """The answer ends after a step that ran: its tool calls will not run, so the stored turn must
    not carry calls nobody answers (the next question's transcript would be refused by every provider)."""
    if out.calls:
        ex.new_messages.pop()
        if out.text:
            ex.new_messages.append(Message(role="assistant", content=out.text))
    return LimitFrame(scope=scope, message=message)


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


def _grounding(registry: Registry, name: str) -> str:
    tool = registry.get(name)
    if tool is None:  # it just ran, so the registry has it: a registry that lies is a bug to surface
        raise LookupError(f"tool {name!r} ran but its registry does not know it")
    return tool.grounding.value


async def _run_tool(call: ToolCall, registry: Registry, ctx: ToolContext, ex: Exchange, limits: LoopLimits,
                    trace: telemetry.AnySpan = telemetry.NO_SPAN) -> AsyncIterator[Frame]:
    started = time.perf_counter()
    outcome = "ok"
    detail = ""
    value: object = None
    span = answer_spans.start_tool(trace, call.id, call.name, call.args)
    try:
        with telemetry.active(span):  # a search's spans nest under its call
            value = await registry.execute(call.name, call.args, ctx)
        value = fit_result(value, limits.max_tool_result_chars)
        # The checks after the answer read what the result vouches for from the tool that made it.
        ex.answer.tool_results.append({"id": call.id, "name": call.name, "grounding": _grounding(registry, call.name),
                                       "result": value})
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
    answer_spans.end_tool(span, outcome, value)
    ex.steps.append(ToolStep(id=call.id, name=call.name, args=call.args, outcome=outcome,  # type: ignore[arg-type]
                             latency_ms=round((time.perf_counter() - started) * 1000, 2), debug=ex.answer.take_debug(),
                             error_detail=detail if outcome == "error" else None))


def _tool_error(call: ToolCall, ex: Exchange, message: str) -> ToolResultFrame:
    ex.new_messages.append(Message(role="tool", tool_call_id=call.id, name=call.name, content=f"error: {message}", is_error=True))
    return ToolResultFrame(id=call.id, name=call.name, error=message)


def _model_record(step: int, model: ChatModel, out: _StepOutcome, charge: JsonObject, started: float,
                  failure: ModelFailure | None) -> ModelStep:
    return ModelStep(
        step=step,
        model=model.model_id,
        input_tokens=out.usage.input_tokens if out.usage else None,
        output_tokens=out.usage.output_tokens if out.usage else None,
        cost=charged_text(charge),
        stop=out.stop,
        latency_ms=round((time.perf_counter() - started) * 1000, 2),
        failure=failure.trace_record() if failure else None,
    )
