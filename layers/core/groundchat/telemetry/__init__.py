"""OpenTelemetry spans and metrics, exported over OTLP/HTTP when a collector is configured.

Every caller goes through this facade and never imports OpenTelemetry itself. With export off (no
`OTEL_EXPORTER_OTLP_ENDPOINT`) a span is one shared object whose methods do nothing, the metrics
return at once, and the SDK is never imported: the cold start and the answer's hot path pay one
environment read per process. With export on, the SDK is built on first use (telemetry/sdk.py).

Spans that outlive a `yield` (the answer, a model step) are started with `start` and ended by
hand, their parent given explicitly: an async generator may resume in another context, where a
context attached before the `yield` could not be detached. Work between two yields (a tool, a
search, a reservation) runs under `active(span)` or `span(...)`, whose children nest by context.
"""
from __future__ import annotations

import sys
import time
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, Generator, Mapping

from groundchat.telemetry.switch import content_capture_on, export_configured, on_lambda

if TYPE_CHECKING:
    from groundchat.telemetry.sdk import Pipeline

__all__ = ["content_capture_on", "enabled", "start", "span", "active", "caller_context", "joined", "flush",
           "ended_on_error", "install", "reset", "pipeline", "NO_SPAN", "on_lambda"]

AttributeValue = Any  # str, bool, int, float or a sequence of one of them; None is left out

_pipeline: Pipeline | None = None
_checked = False


def pipeline() -> Pipeline | None:
    """The SDK pipeline, built the first time it is asked for when export is configured."""
    global _pipeline, _checked
    if not _checked:
        _checked = True
        if export_configured():
            from groundchat.telemetry import sdk

            _pipeline = sdk.build()
    return _pipeline


def enabled() -> bool:
    return pipeline() is not None


def install(built: Pipeline | None) -> None:
    """Use this pipeline (a test's, or one built after the variables changed); None turns export off."""
    global _pipeline, _checked
    _pipeline, _checked = built, True
    _forget_instruments()


def reset() -> None:
    """Shut the pipeline down (flushing it) and read the variables again on next use."""
    global _pipeline, _checked
    if _pipeline is not None:
        _pipeline.shutdown()
    _pipeline, _checked = None, False
    _forget_instruments()


def _forget_instruments() -> None:
    # Instruments belong to one meter: a new pipeline needs new ones (telemetry/metrics.py).
    metrics = sys.modules.get("groundchat.telemetry.metrics")
    if metrics is not None:
        metrics.forget()


class _NoSpan:
    """What every span is when nothing is exported: one object, nothing recorded."""

    recording = False

    def set(self, key: str, value: AttributeValue) -> None:
        pass

    def set_many(self, attributes: Mapping[str, AttributeValue]) -> None:
        pass

    def fail(self, error_type: str) -> None:
        pass

    def end(self, end_time_ns: int | None = None) -> None:
        pass

    def __enter__(self) -> _NoSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


NO_SPAN = _NoSpan()


class Span:
    """A live span: attributes without None, and a failure said by its class only (an exception's
    text may carry an address or a key; its type cannot)."""

    recording = True

    def __init__(self, otel_span: Any) -> None:
        self.otel = otel_span

    def set(self, key: str, value: AttributeValue) -> None:
        if value is not None:
            self.otel.set_attribute(key, value)

    def set_many(self, attributes: Mapping[str, AttributeValue]) -> None:
        for key, value in attributes.items():
            self.set(key, value)

    def fail(self, error_type: str) -> None:
        from opentelemetry.trace import Status, StatusCode

        self.otel.set_attribute("error.type", error_type)
        self.otel.set_status(Status(StatusCode.ERROR))

    def end(self, end_time_ns: int | None = None) -> None:
        self.otel.end(end_time=end_time_ns)

    def __enter__(self) -> Span:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if exc_type is not None:
            self.fail(exc_type.__qualname__)
        self.end()


AnySpan = Span | _NoSpan


def start(name: str, attributes: Mapping[str, AttributeValue] | None = None, *, parent: object = None,
          client: bool = False, start_time_ns: int | None = None) -> AnySpan:
    """A span, not yet current. `parent`: a span of ours, a context from `caller_context()`, or None
    for the current context. `client`: a call to another process (a model provider)."""
    built = pipeline()
    if built is None:
        return NO_SPAN
    from opentelemetry import trace

    if isinstance(parent, Span):
        context = trace.set_span_in_context(parent.otel)
    elif isinstance(parent, _NoSpan):
        context = None  # a parent that was not recorded: the current context
    else:
        context = parent  # an OpenTelemetry Context, or None: the current one
    kind = trace.SpanKind.CLIENT if client else trace.SpanKind.INTERNAL
    otel_span = built.tracer.start_span(name, context=context, kind=kind,  # type: ignore[arg-type]
                                        attributes={k: v for k, v in (attributes or {}).items() if v is not None},
                                        start_time=start_time_ns)
    return Span(otel_span)


class _Nothing:
    """The block's context manager when its span is not recorded: shared, and does nothing."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_NOTHING = _Nothing()


def active(current: AnySpan) -> AbstractContextManager[object]:
    """`current` is the parent of what starts inside the block (no `yield` of a generator inside it)."""
    return _attached(current) if isinstance(current, Span) else _NOTHING


@contextmanager
def _attached(current: Span) -> Generator[Span, None, None]:
    from opentelemetry import context, trace

    token = context.attach(trace.set_span_in_context(current.otel))
    try:
        yield current
    finally:
        context.detach(token)


@contextmanager
def span(name: str, attributes: Mapping[str, AttributeValue] | None = None, *, client: bool = False,
         only_in_a_trace: bool = False) -> Generator[AnySpan, None, None]:
    """A child of the current span for the block, current inside it, ended with it.
    `only_in_a_trace`: nothing when no span is current (work that is not a trace of its own)."""
    if pipeline() is None or (only_in_a_trace and not _in_a_trace()):
        yield NO_SPAN
        return
    with start(name, attributes, client=client) as opened, active(opened):
        yield opened


def ended_on_error(span: Span | _NoSpan) -> AbstractContextManager[object]:
    """See `_ended_on_error`; nothing to do for a span that is not recorded."""
    return _ended_on_error(span) if isinstance(span, Span) else _NOTHING


@contextmanager
def _ended_on_error(span: Span) -> Generator[None, None, None]:
    """A span the block's success leaves open (its caller ends it with what it learnt), ended here
    when the block raises: its `error.type` is the exception's code where it has one (a cap's
    `spend-cap`), else its class."""
    try:
        yield
    except Exception as exc:
        span.fail(str(getattr(exc, "code", "") or type(exc).__qualname__))
        span.end()
        raise


def _in_a_trace() -> bool:
    from opentelemetry import trace

    return trace.get_current_span().get_span_context().is_valid


def caller_context() -> object:
    """The context a request arrived in (the caller's trace, when it sent one); None when off."""
    if pipeline() is None:
        return None
    from opentelemetry import context

    return context.get_current()


@contextmanager
def joined(carrier: Mapping[str, str] | None) -> Generator[None, None, None]:
    """The block runs in the caller's trace named by a W3C `traceparent` (and `tracestate`) in
    `carrier`: an HTTP request's headers, or an MCP request's `_meta`."""
    if pipeline() is None or not carrier:
        yield
        return
    from opentelemetry import context
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    token = context.attach(TraceContextTextMapPropagator().extract(carrier=dict(carrier)))
    try:
        yield
    finally:
        context.detach(token)


def flush() -> None:
    """Send what is batched now (spans and metrics)."""
    built = _pipeline
    if built is not None:
        built.flush()


def now_ns() -> int:
    return time.time_ns()
