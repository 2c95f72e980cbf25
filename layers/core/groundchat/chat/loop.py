"""The loop: one question in, typed frames out, tools called on the model's behalf.

`done` is emitted exactly once, here, on every exit path. The exchange (question, assistant turns,
tool results) is handed to `commit` before `done` leaves; a failed exchange is not committed.
"""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable

from groundchat.models.failures import ModelFailure, classify
from groundchat.chat.frames import Frame
from groundchat.spending.guard import NoSpendGuard, SpendCapReached, StepGuard
from groundchat.grounding.result_ceiling import fit_result
from groundchat.tools.base import ToolContext, ToolError, ToolRefused, ToolRegistry
from groundchat.models.messages import (
    ChatModel,
    Message,
    ModelRequest,
    StopEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    UsageEvent,
    tool_result_text,
)


@dataclass
class Exchange:
    """What one question produced: the turns to commit, and the trace of the run."""

    conversation_id: str
    run_id: str
    question: str
    new_messages: list[Message] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    tool_results: list[dict[str, Any]] = field(default_factory=list)
    answer_text: str = ""
    done_reason: str = ""
    failure: dict[str, Any] | None = None
    # Filled by after-answer checks (citations, views) and stored with the assistant's answer.
    annotations: dict[str, Any] = field(default_factory=dict)
    started_at: float = field(default_factory=time.time)


AfterAnswer = Callable[[Exchange], Awaitable[list[Frame]]]
Commit = Callable[[Exchange], Awaitable[None]]


@dataclass
class LoopLimits:
    max_steps: int = 6
    max_output_tokens: int = 3000
    max_tool_result_chars: int = 60_000


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
    history_shortening: Any = None,
) -> AsyncIterator[Frame]:
    """`history_shortening` (a `groundchat.chat.history.Shortened`) says what of `history` to send; its
    outcome goes out as a `history` frame, and a failed one ends the answer as `too-large`."""
    limits = limits or LoopLimits()
    guard = guard or NoSpendGuard()
    run_id = run_id or ctx.run_id or uuid.uuid4().hex
    ex = Exchange(conversation_id=conversation_id, run_id=run_id, question=question)
    ex.new_messages.append(Message(role="user", content=question))
    # What a tool may see of this answer: the results so far (views are grounded against them)
    # and the annotations committed with it.
    ctx.extras["answer_results"] = ex.tool_results
    ctx.extras["annotations"] = ex.annotations
    reason = "error"
    try:
        yield Frame(type="start", data={"conversation_id": conversation_id, "run_id": run_id})
        tools = await registry.offered(ctx.caller)
        specs = [t.spec() for t in tools]
        too_large = False
        if history_shortening is not None:
            if history or history_shortening.outcome != "unchanged":
                yield Frame(type="history", data=history_shortening.frame_data())
            too_large = history_shortening.outcome == "failed"
            history = history_shortening.messages
        reason = "too-large" if too_large else "max-steps"
        for step in range(0 if too_large else limits.max_steps):
            request = ModelRequest(
                system=system,
                messages=[*history, *ex.new_messages],
                tools=specs,
                max_output_tokens=limits.max_output_tokens,
            )
            try:
                reservation = await guard.reserve(request, step)
            except SpendCapReached as cap:
                yield Frame(type="limit", data={"scope": cap.scope, "message": cap.message, "resets_at": cap.resets_at})
                reason = "spend-cap"
                break
            text_parts: list[str] = []
            calls: list[ToolCall] = []
            usage: UsageEvent | None = None
            stop = ""
            started = time.perf_counter()
            try:
                async for event in model(request):
                    if isinstance(event, TextDelta):
                        if event.text:
                            text_parts.append(event.text)
                            yield Frame(type="text", data={"text": event.text})
                    elif isinstance(event, ToolCallEvent):
                        calls.append(ToolCall(id=event.id, name=event.name, args=event.args))
                    elif isinstance(event, UsageEvent):
                        usage = event
                    elif isinstance(event, StopEvent):
                        stop = event.reason
            except Exception as exc:
                charge = await guard.settle(reservation, usage, failed=True)
                failure = classify(exc)
                ex.steps.append(_model_step(step, model, usage, charge, started, stop, failure))
                raise _StepFailed(failure) from exc
            charge = await guard.settle(reservation, usage)
            ex.steps.append(_model_step(step, model, usage, charge, started, stop, None))
            text = "".join(text_parts)
            ex.answer_text += text
            ex.new_messages.append(Message(role="assistant", content=text, tool_calls=calls))
            if usage is None and not isinstance(guard, NoSpendGuard):
                reason = "unmeasurable-cost"
                if calls:
                    # The calls will not run: the stored turn must not carry calls nobody answers,
                    # or the next question's transcript would be refused by every provider.
                    ex.new_messages.pop()
                    if text:
                        ex.new_messages.append(Message(role="assistant", content=text))
                yield Frame(type="limit", data={"scope": "usage", "message": "The model reported no usage; the step was charged in full and the answer stops here."})
                break
            if not calls:
                reason = "complete"
                break
            for call in calls:
                yield Frame(type="tool-call", data={"id": call.id, "name": call.name, "args": call.args})
                async for frame in _run_tool(call, registry, ctx, ex, limits):
                    yield frame
        if reason in ("complete", "max-steps", "spend-cap", "unmeasurable-cost"):
            for check in after_answer or []:
                for frame in await check(ex):
                    yield frame
            if commit is not None:
                await commit(ex)
    except _StepFailed as failed:
        reason = "error"
        ex.failure = failed.failure.trace_record()
        yield Frame(type="error", data={"code": failed.failure.cls, "message": failed.failure.reader_message, "run_id": run_id})
    except Exception as exc:  # a bug or a commit that failed: the reader still gets one done
        reason = "error"
        failure = classify(exc)
        ex.failure = failure.trace_record()
        code = getattr(exc, "code", None) or failure.cls
        message = getattr(exc, "message", None) or failure.reader_message
        yield Frame(type="error", data={"code": code, "message": message, "run_id": run_id})
    finally:
        ex.done_reason = reason
        if on_finish is not None:
            try:
                await on_finish(ex)
            except Exception:  # the trace writer must never take the done frame with it
                pass
    yield Frame(type="done", data={"reason": reason, "run_id": run_id})


class _StepFailed(Exception):
    def __init__(self, failure: ModelFailure) -> None:
        super().__init__(str(failure))
        self.failure = failure


async def _run_tool(call: ToolCall, registry: ToolRegistry, ctx: ToolContext, ex: Exchange, limits: LoopLimits) -> AsyncIterator[Frame]:
    started = time.perf_counter()
    outcome = "ok"
    try:
        value = await registry.execute(call.name, call.args, ctx)
        value = fit_result(value, limits.max_tool_result_chars)
        ex.tool_results.append({"id": call.id, "name": call.name, "result": value})
        ex.new_messages.append(Message(role="tool", tool_call_id=call.id, name=call.name, content=tool_result_text(value)))
        yield Frame(type="tool-result", data={"id": call.id, "name": call.name, "result": value})
        # Frames a tool asked for (e.g. a `view`) follow its result.
        for extra in ctx.extras.pop("frames", []):
            yield extra
    except (ToolRefused, ToolError) as exc:
        outcome = "refused" if isinstance(exc, ToolRefused) else "invalid"
        message = str(exc)
        ex.new_messages.append(Message(role="tool", tool_call_id=call.id, name=call.name, content=f"error: {message}", is_error=True))
        yield Frame(type="tool-result", data={"id": call.id, "name": call.name, "error": message})
    except Exception as exc:  # a tool that raises: the model sees the error and can recover
        outcome = "error"
        message = f"{type(exc).__name__}: {exc}"
        ex.new_messages.append(Message(role="tool", tool_call_id=call.id, name=call.name, content=f"error: {message}", is_error=True))
        yield Frame(type="tool-result", data={"id": call.id, "name": call.name, "error": message})
    ctx.extras.pop("frames", None)  # a tool that failed shows nothing
    ex.steps.append({
        "kind": "tool",
        "id": call.id,
        "name": call.name,
        "args": call.args,
        "outcome": outcome,
        "latency_ms": round((time.perf_counter() - started) * 1000, 2),
        **({"debug": ctx.extras.pop("last_debug")} if "last_debug" in ctx.extras else {}),
    })


def _model_step(step: int, model: ChatModel, usage: UsageEvent | None, charge: dict[str, Any], started: float, stop: str, failure: ModelFailure | None) -> dict[str, Any]:
    return {
        "kind": "model",
        "step": step,
        "model": getattr(model, "model_id", "unknown"),
        "input_tokens": usage.input_tokens if usage else None,
        "output_tokens": usage.output_tokens if usage else None,
        "cost": charge.get("charged"),
        "stop": stop,
        "latency_ms": round((time.perf_counter() - started) * 1000, 2),
        "failure": failure.trace_record() if failure else None,
    }
