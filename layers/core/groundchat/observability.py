"""Logs, traces and metrics for every function, through aws-lambda-powertools.

The functions share one Logger, one Tracer and these metric helpers. Metrics are CloudWatch
embedded metric format (EMF) lines on stdout: Lambda ships stdout to CloudWatch Logs, which turns
the lines into metrics without any API call (the chat app runs under uvicorn behind the Web
Adapter, so a per-invocation `log_metrics` decorator would never flush; each helper here flushes
its own line at once).

Off Lambda (`make run`, tests) there is no X-Ray daemon and no CloudWatch reading stdout, so tracing
and metric output are off by default there: POWERTOOLS_TRACE_DISABLED and
POWERTOOLS_METRICS_DISABLED are set unless the environment already says otherwise. A namespace is
always given, so a metric never fails for lack of one.

The same counts go out as OpenTelemetry metrics when an OTLP endpoint is configured
(groundchat/telemetry); the EMF lines stay, since the template's alarms read them.

Every log line goes through the redactor as it is formatted (message, extra keys and traceback
alike), so a logged error that echoes a key does not put it in CloudWatch.
"""
from __future__ import annotations

import logging
import os
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Callable

from aws_lambda_powertools import Logger
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch import AmazonCloudWatchEMFProvider

from groundchat.redaction import redact

if TYPE_CHECKING:
    from aws_lambda_powertools import Tracer

SERVICE = "groundchat"
NAMESPACE_DEFAULT = "groundchat"

# Refusal codes that mean a spending cap stopped an answer; each also counts as a `CapRefusals`
# metric, the one the template's alarm watches (a dimension value cannot be alarmed on by prefix).
CAP_REFUSAL_CODES = frozenset({"spend-cap", "budget-exceeded", "user-budget-exceeded", "unmeasurable-cost"})


def running_on_lambda() -> bool:
    return bool(os.environ.get("AWS_LAMBDA_FUNCTION_NAME"))


def _local_defaults() -> None:
    if not running_on_lambda():
        os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
        os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")


_local_defaults()


class RedactingFormatter(LambdaPowertoolsFormatter):
    """The Powertools JSON line, redacted (the redactor keeps JSON escapes intact)."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


logger = Logger(service=os.environ.get("POWERTOOLS_SERVICE_NAME", SERVICE), logger_formatter=RedactingFormatter())


def tracing_on() -> bool:
    return os.environ.get("POWERTOOLS_TRACE_DISABLED", "").strip().lower() not in ("true", "1", "yes")


class LazyTracer:
    """The Powertools Tracer, built only when tracing is on: the X-Ray SDK it loads costs about
    120 ms of every cold start, which a function that does not trace should not pay."""

    def __init__(self) -> None:
        self._tracer: Tracer | None = None

    def real(self) -> Tracer:
        if self._tracer is None:
            from aws_lambda_powertools import Tracer

            self._tracer = Tracer(service=os.environ.get("POWERTOOLS_SERVICE_NAME", SERVICE))
        return self._tracer

    def capture_lambda_handler(self, handler: Callable[..., object] | None = None,
                               **options: bool | None) -> Callable[..., object]:
        if not tracing_on():
            return handler if handler is not None else (lambda wrapped: wrapped)
        return self.real().capture_lambda_handler(handler, **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real(), name)


tracer = LazyTracer()


def namespace() -> str:
    return os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or NAMESPACE_DEFAULT


def _emit(metrics: list[tuple[str, MetricUnit, float]], dimensions: dict[str, str] | None = None) -> None:
    # A fresh provider per line: its metric set is its own, so concurrent requests in one uvicorn
    # process never mix their values into one another's line.
    provider = AmazonCloudWatchEMFProvider(namespace=namespace(), service=os.environ.get("POWERTOOLS_SERVICE_NAME", SERVICE))
    for name, unit, value in metrics:
        provider.add_metric(name=name, unit=unit, value=value)
    for key, value in (dimensions or {}).items():
        provider.add_dimension(name=key, value=value)
    provider.flush_metrics()


def record_answer(cost: Decimal | float | int, tokens: int, *, input_tokens: int | None = None, output_tokens: int | None = None) -> None:
    """One finished answer: its cost in USD and the tokens it used (all steps together).

    Money stays Decimal everywhere else; a metric value is a float by EMF's definition, and the
    dashboard never adds these up for billing.
    """
    values: list[tuple[str, MetricUnit, float]] = [
        ("Answers", MetricUnit.Count, 1),
        ("AnswerCostUSD", MetricUnit.NoUnit, float(Decimal(str(cost)))),
        ("AnswerTokens", MetricUnit.Count, int(tokens)),
    ]
    if input_tokens is not None:
        values.append(("InputTokens", MetricUnit.Count, int(input_tokens)))
    if output_tokens is not None:
        values.append(("OutputTokens", MetricUnit.Count, int(output_tokens)))
    _emit(values)


def record_refusal(code: str, *, cap: bool | None = None) -> None:
    """A request refused or an answer stopped, by its error code (e.g. `spend-cap`, `forbidden`).

    `cap` overrides whether it counts as a spending-cap refusal; by default the code decides.
    """
    _emit([("Refusals", MetricUnit.Count, 1)], {"code": code})
    is_cap = code in CAP_REFUSAL_CODES if cap is None else cap
    if is_cap:
        _emit([("CapRefusals", MetricUnit.Count, 1)])
    # The same count over OTLP when a collector is configured; imported here, not at a cold start.
    from groundchat.telemetry import metrics as otel_metrics

    otel_metrics.refusal(code, cap=is_cap)


def record_count(name: str, **dimensions: str) -> None:
    """Any other count a function reports (e.g. shared reads by outcome)."""
    _emit([(name, MetricUnit.Count, 1)], dimensions)


def record_disputed(amount: Decimal) -> None:
    """A step's provider reported more than the step may be charged: the USD left uncharged and
    disputed (spending/overrun.py); the template alarms on the count."""
    _emit([("SpendDisputed", MetricUnit.Count, 1), ("DisputedUSD", MetricUnit.NoUnit, float(amount))])


def record_released_reservations(count: int, amount: Decimal | float | int) -> None:
    """One sweep of expired reservations: how many were released and the USD they gave back.

    Both are written every run, zeros included, so a graph of them is continuous and a rise (many
    requests crashing mid-step) stands out.
    """
    _emit([
        ("ReservationsReleased", MetricUnit.Count, int(count)),
        ("ReleasedUSD", MetricUnit.NoUnit, float(Decimal(str(amount)))),
    ])
