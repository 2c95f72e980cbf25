"""The metrics exported over OTLP beside the EMF lines the alarms read (observability.py).

GenAI's own (`gen_ai.client.token.usage`, `gen_ai.client.operation.duration`, per model step) and
ours: answers by how they ended, what they cost, refusals by a spending cap and by a busy budget,
and feedback by reason. Each function returns at once when export is off; the instruments are made
on first use from the pipeline's meter, so this module imports no OpenTelemetry either.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable, Iterable

from groundchat import telemetry
from groundchat.telemetry import attributes as attr

# Buckets the conventions recommend for the two GenAI histograms.
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)
DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)

_instruments: dict[str, Any] = {}


def forget() -> None:
    _instruments.clear()


def _instrument(name: str, make: Callable[[Any], Any]) -> Any | None:
    built = telemetry.pipeline()
    if built is None:
        return None
    if name not in _instruments:
        _instruments[name] = make(built.meter)
    return _instruments[name]


def model_step(provider: str, model: str, input_tokens: int | None, output_tokens: int | None, seconds: float,
               error_type: str | None = None) -> None:
    common = {attr.OPERATION: attr.OP_CHAT, attr.PROVIDER: provider, attr.REQUEST_MODEL: model}
    usage = _instrument(attr.METRIC_TOKEN_USAGE, lambda m: m.create_histogram(
        attr.METRIC_TOKEN_USAGE, unit="{token}", description="Tokens used per model step, by type",
        explicit_bucket_boundaries_advisory=TOKEN_BUCKETS))
    if usage is None:
        return
    for kind, count in (("input", input_tokens), ("output", output_tokens)):
        if count is not None:
            usage.record(count, {**common, attr.TOKEN_TYPE: kind})
    duration = _instrument(attr.METRIC_OPERATION_DURATION, lambda m: m.create_histogram(
        attr.METRIC_OPERATION_DURATION, unit="s", description="Duration of a model step",
        explicit_bucket_boundaries_advisory=DURATION_BUCKETS))
    duration.record(seconds, {**common, **({attr.ERROR_TYPE: error_type} if error_type else {})})


def answer(outcome: str, cost: Decimal) -> None:
    """One finished answer by its `done` reason, and its cost in USD (a metric value is a float by
    the data model's definition; the usage table keeps the Decimal that bills)."""
    answers = _instrument("groundchat.answers", lambda m: m.create_counter(
        "groundchat.answers", unit="{answer}", description="Answers by how they ended"))
    if answers is None:
        return
    answers.add(1, {attr.ANSWER_OUTCOME: outcome})
    spent = _instrument("groundchat.answer.cost", lambda m: m.create_counter(
        "groundchat.answer.cost", unit="USD", description="What answers were charged"))
    spent.add(float(cost), {attr.ANSWER_OUTCOME: outcome})


def refusal(code: str, *, cap: bool) -> None:
    """A refusal that a spending cap or a busy budget caused; other refusals are the EMF line's."""
    if cap:
        counter = _instrument("groundchat.cap_refusals", lambda m: m.create_counter(
            "groundchat.cap_refusals", unit="{refusal}", description="Requests and answers a spending cap stopped"))
        if counter is not None:
            counter.add(1, {attr.REFUSAL_CODE: code})
    if code == "spend-busy":
        counter = _instrument("groundchat.spend_busy_refusals", lambda m: m.create_counter(
            "groundchat.spend_busy_refusals", unit="{refusal}",
            description="Requests refused because the budget was too busy to reserve against"))
        if counter is not None:
            counter.add(1, {attr.REFUSAL_CODE: code})


def feedback(rating: str, reasons: Iterable[str]) -> None:
    """One rating, counted once per reason it gives (`none` when it gives none)."""
    counter = _instrument("groundchat.feedback", lambda m: m.create_counter(
        "groundchat.feedback", unit="{rating}", description="Ratings of answers by reason"))
    if counter is None:
        return
    for reason in list(reasons) or ["none"]:
        counter.add(1, {attr.FEEDBACK_RATING: rating, attr.FEEDBACK_REASON: reason})
