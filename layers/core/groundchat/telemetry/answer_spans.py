"""The answer's spans in the GenAI conventions: `invoke_agent` for the answer, a `chat` span per
model step, an `execute_tool` span per tool call; the loop (chat/loop.py) opens and closes them.

The answer span's parent is the context the request arrived in (`AnswerRun.trace_parent`), so an
answer joins the trace of a caller that sent a `traceparent`. Content (the question, the answer,
a tool's arguments) is set only when capture is on, redacted (telemetry/content.py).
"""
from __future__ import annotations

import time
from decimal import Decimal
from typing import TYPE_CHECKING, Mapping, cast

from groundchat import telemetry
from groundchat.telemetry import attributes as attr
from groundchat.telemetry import content, metrics

if TYPE_CHECKING:
    from groundchat.telemetry import AnySpan

AGENT = "groundchat"
# Our model setting's kind → the conventions' provider name (the offline answerer is ours).
PROVIDERS = {"bedrock": "aws.bedrock", "openai": "openai", "offline": "groundchat.offline"}


def provider_and_model(price_id: str) -> tuple[str, str]:
    """("aws.bedrock", "anthropic.claude-…") from a configured model string such as `bedrock:anthropic.claude-…`."""
    kind, _, model = price_id.partition(":")
    return PROVIDERS.get(kind, kind or "unknown"), model or kind


def start_answer(parent: object, conversation_id: str, run_id: str, question: str) -> AnySpan:
    if not telemetry.enabled():
        return telemetry.NO_SPAN
    span = telemetry.start(f"{attr.OP_INVOKE_AGENT} {AGENT}", {
        attr.OPERATION: attr.OP_INVOKE_AGENT, attr.AGENT_NAME: AGENT, attr.PROVIDER: PROVIDERS["offline"],
        attr.CONVERSATION: conversation_id, attr.RUN_ID: run_id,
    }, parent=parent)
    if span.recording:
        span.set(attr.INPUT_MESSAGES, content.messages("user", question))
    return span


def end_answer(span: AnySpan, reason: str, cost: Decimal, answer_text: str, price_id: str,
               input_tokens: int, output_tokens: int, failure: Mapping[str, object] | None) -> None:
    """Closes the answer span and counts the answer (both nothing when export is off)."""
    if not span.recording:
        return
    failure_class = str((failure or {}).get("class") or "") or None
    span.set_many({attr.ANSWER_OUTCOME: reason, attr.ANSWER_COST: str(cost), attr.PROVIDER: provider_and_model(price_id)[0],
                   attr.INPUT_TOKENS: input_tokens, attr.OUTPUT_TOKENS: output_tokens,
                   attr.OUTPUT_MESSAGES: content.messages("assistant", answer_text, reason)})
    if reason == "error":
        span.fail(failure_class or "error")
    span.end()
    metrics.answer(reason, cost)


class ModelStepSpan:
    """One model call: its `chat` span, and when its first chunk came."""

    def __init__(self, answer: AnySpan, step: int, price_id: str, max_output_tokens: int) -> None:
        self.started = time.perf_counter()
        self.returned_at: float | None = None
        self.first_chunk: float | None = None
        self.span: AnySpan = telemetry.NO_SPAN
        if not answer.recording:
            return  # export is off: nothing to build
        self.provider, self.model = provider_and_model(price_id)
        self.span = telemetry.start(f"{attr.OP_CHAT} {self.model}", {
            attr.OPERATION: attr.OP_CHAT, attr.PROVIDER: self.provider, attr.REQUEST_MODEL: self.model,
            attr.REQUEST_MAX_TOKENS: max_output_tokens, attr.REQUEST_STREAM: True, attr.STEP: step,
        }, parent=answer, client=self.provider != PROVIDERS["offline"])

    def calling(self) -> None:
        """The request leaves now (its reservation is held): the time to first chunk and the
        operation's duration count from here, not from the reservation."""
        self.started = time.perf_counter()

    def returned(self) -> None:
        self.returned_at = time.perf_counter()

    def chunk(self) -> None:
        if self.first_chunk is None and self.span.recording:
            self.first_chunk = time.perf_counter()

    def end(self, input_tokens: int | None, output_tokens: int | None, stop: str, charged: object,
            error_type: str | None = None) -> None:
        if not self.span.recording:
            return
        seconds = (self.returned_at or time.perf_counter()) - self.started
        self.span.set_many({
            attr.INPUT_TOKENS: input_tokens, attr.OUTPUT_TOKENS: output_tokens,
            attr.RESPONSE_FINISH_REASONS: [stop] if stop else None, attr.STEP_COST: _text(charged),
            attr.TIME_TO_FIRST_CHUNK: None if self.first_chunk is None else self.first_chunk - self.started,
        })
        if error_type:
            self.span.fail(error_type)
        self.span.end()
        metrics.model_step(self.provider, self.model, input_tokens, output_tokens, seconds, error_type)


def start_tool(answer: AnySpan, call_id: str | None, name: str, args: object) -> AnySpan:
    if not telemetry.enabled():
        return telemetry.NO_SPAN
    span = telemetry.start(f"{attr.OP_EXECUTE_TOOL} {name}", {
        attr.OPERATION: attr.OP_EXECUTE_TOOL, attr.TOOL_NAME: name, attr.TOOL_CALL_ID: call_id,
        attr.TOOL_TYPE: "function",
    }, parent=answer)
    if span.recording:
        span.set(attr.TOOL_ARGUMENTS, content.arguments(args))
    return span


def end_tool(span: AnySpan, outcome: str, value: object = None) -> None:
    """`outcome`: how the call ran (ok, refused, invalid, error); a search adds its own (hit, empty, unavailable)."""
    if not span.recording:
        return
    span.set(attr.TOOL_OUTCOME, outcome)
    # A tool's result is JSON: a dict's keys are strings.
    outcome_of_search = cast("dict[str, object]", value).get("outcome") if isinstance(value, dict) else None
    if isinstance(outcome_of_search, str):
        span.set(attr.SEARCH_OUTCOME, outcome_of_search)
    if outcome != "ok":
        span.fail(outcome)
    span.end()


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def reserve_span(parent: AnySpan, phase: str, step: int | None = None) -> AnySpan:
    """The spend guard's reservation (`reserve`, or the question's `precheck`) as a child of `parent`."""
    if not parent.recording:
        return telemetry.NO_SPAN
    return telemetry.start("groundchat.spend.reserve", {attr.SPEND_PHASE: phase, attr.STEP: step}, parent=parent)


def settle_span(parent: AnySpan, step: int) -> AnySpan:
    if not parent.recording:
        return telemetry.NO_SPAN
    return telemetry.start("groundchat.spend.settle", {attr.SPEND_PHASE: "settle", attr.STEP: step}, parent=parent)


def spent(span: AnySpan, amount: object, outcome: str = "ok") -> None:
    """Ends a reserve or settle span with the amount held or charged."""
    if not span.recording:
        return
    span.set_many({attr.SPEND_AMOUNT: _text(amount), attr.SPEND_OUTCOME: outcome})
    span.end()

