"""The metrics exported over OTLP beside the EMF lines the alarms read (observability.py).

GenAI's own (`gen_ai.client.token.usage`, `gen_ai.client.operation.duration`, per model step) and
ours: answers by how they ended, what they cost, refusals by a spending cap and by a busy budget,
and feedback by reason. Each function returns at once when export is off; the instruments are made
on first use from the pipeline's meter, so this module imports no OpenTelemetry either.
"""
from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Iterable, Sequence

from groundchat import telemetry
from groundchat.telemetry import attributes as attr

if TYPE_CHECKING:
    from opentelemetry.metrics import Counter, Histogram

# Buckets the conventions recommend for the two GenAI histograms.
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)
DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)

_counters: dict[str, Counter] = {}
_histograms: dict[str, Histogram] = {}


def forget() -> None:
    _counters.clear()
    _histograms.clear()


def _counter(name: str, unit: str, description: str) -> Counter | None:
    built = telemetry.pipeline()
    if built is None:
        return None
    if name not in _counters:
        _counters[name] = built.meter.create_counter(name, unit=unit, description=description)
    return _counters[name]


def _histogram(name: str, unit: str, description: str, buckets: Sequence[float]) -> Histogram | None:
    built = telemetry.pipeline()
    if built is None:
        return None
    if name not in _histograms:
        _histograms[name] = built.meter.create_histogram(name, unit=unit, description=description,
                                                         explicit_bucket_boundaries_advisory=buckets)
    return _histograms[name]


def model_step(provider: str, model: str, input_tokens: int | None, output_tokens: int | None, seconds: float,
               error_type: str | None = None) -> None:
    common = {attr.OPERATION: attr.OP_CHAT, attr.PROVIDER: provider, attr.REQUEST_MODEL: model}
    usage = _histogram(attr.METRIC_TOKEN_USAGE, "{token}", "Tokens used per model step, by type", TOKEN_BUCKETS)
    duration = _histogram(attr.METRIC_OPERATION_DURATION, "s", "Duration of a model step", DURATION_BUCKETS)
    if usage is None or duration is None:
        return
    for kind, count in (("input", input_tokens), ("output", output_tokens)):
        if count is not None:
            usage.record(count, {**common, attr.TOKEN_TYPE: kind})
    duration.record(seconds, {**common, **({attr.ERROR_TYPE: error_type} if error_type else {})})


def answer(outcome: str, cost: Decimal) -> None:
    """One finished answer by its `done` reason, and its cost in USD (a metric value is a float by
    the data model's definition; the usage table keeps the Decimal that bills)."""
    answers = _counter("groundchat.answers", "{answer}", "Answers by how they ended")
    spent = _counter("groundchat.answer.cost", "USD", "What answers were charged")
    if answers is None or spent is None:
        return
    answers.add(1, {attr.ANSWER_OUTCOME: outcome})
    spent.add(float(cost), {attr.ANSWER_OUTCOME: outcome})


def refusal(code: str, *, cap: bool) -> None:
    """A refusal that a spending cap or a busy budget caused; other refusals are the EMF line's."""
    if cap:
        counter = _counter("groundchat.cap_refusals", "{refusal}", "Requests and answers a spending cap stopped")
        if counter is not None:
            counter.add(1, {attr.REFUSAL_CODE: code})
    if code == "spend-busy":
        counter = _counter("groundchat.spend_busy_refusals", "{refusal}",
                           "Requests refused because the budget was too busy to reserve against")
        if counter is not None:
            counter.add(1, {attr.REFUSAL_CODE: code})


def feedback(rating: str, reasons: Iterable[str]) -> None:
    """One rating, counted once per reason it gives (`none` when it gives none)."""
    counter = _counter("groundchat.feedback", "{rating}", "Ratings of answers by reason")
    if counter is None:
        return
    for reason in list(reasons) or ["none"]:
        counter.add(1, {attr.FEEDBACK_RATING: rating, attr.FEEDBACK_REASON: reason})
