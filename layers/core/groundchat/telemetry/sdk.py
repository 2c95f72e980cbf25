"""The OpenTelemetry SDK as groundchat runs it: a tracer and a meter exporting over OTLP/HTTP.

Imported only once export is on (telemetry/__init__.py), so a deployment that exports nothing
never loads the SDK, the exporter or protobuf. The providers are groundchat's own rather than the
process-wide globals: a host that embeds the app with its own SDK set-up keeps it, and a test can
replace ours. The OTLP exporters read the standard variables themselves (endpoint, headers,
protocol details, timeouts), and the resource reads `OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import Tracer
from opentelemetry.metrics import Meter

INSTRUMENTATION = "groundchat"
# The GenAI conventions this instrumentation follows (Development status): the attributes, span
# names and metrics as published with semantic-conventions v1.41, the last release of the main
# repository before the GenAI conventions moved to semantic-conventions-genai.
SCHEMA_URL = "https://opentelemetry.io/schemas/1.41.0"
DEFAULT_SERVICE = "groundchat"


@dataclass
class Pipeline:
    tracer: Tracer
    meter: Meter
    tracer_provider: TracerProvider
    meter_provider: MeterProvider

    def flush(self, timeout_ms: int = 5000) -> None:
        self.tracer_provider.force_flush(timeout_ms)
        self.meter_provider.force_flush(timeout_ms)

    def shutdown(self) -> None:
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()


def build(span_processor: SpanProcessor | None = None, metric_reader: MetricReader | None = None) -> Pipeline:
    """OTLP/HTTP exporters unless a test hands its own processor or reader."""
    named = bool(os.environ.get("OTEL_SERVICE_NAME"))  # the standard variable wins over our default
    resource = Resource.create({} if named else {SERVICE_NAME: DEFAULT_SERVICE})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(span_processor or BatchSpanProcessor(_span_exporter()))
    reader = metric_reader or (PeriodicExportingMetricReader(OTLPMetricExporter()) if _metrics_endpoint() else None)
    # A traces-only endpoint exports no metrics (rather than sending them to a default address).
    meter_provider = MeterProvider(resource=resource, metric_readers=[reader] if reader else [])
    return Pipeline(
        tracer=tracer_provider.get_tracer(INSTRUMENTATION, schema_url=SCHEMA_URL),
        meter=meter_provider.get_meter(INSTRUMENTATION, schema_url=SCHEMA_URL),
        tracer_provider=tracer_provider, meter_provider=meter_provider,
    )


def _metrics_endpoint() -> bool:
    return any(os.environ.get(name, "").strip() for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"))


def _span_exporter() -> SpanExporter:
    return OTLPSpanExporter()
