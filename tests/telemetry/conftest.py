"""An in-memory pipeline for the span and metric tests: the real SDK, no network."""
import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from groundchat import telemetry
from groundchat.telemetry import sdk


class Recorded:
    def __init__(self):
        self.spans = InMemorySpanExporter()
        self.metrics = InMemoryMetricReader()
        self.pipeline = sdk.build(SimpleSpanProcessor(self.spans), self.metrics)

    def finished(self):
        return list(self.spans.get_finished_spans())

    def named(self, prefix):
        return [s for s in self.finished() if s.name.startswith(prefix)]

    def metric_points(self, name):
        data = self.metrics.get_metrics_data()
        return [point for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
                if m.name == name for point in m.data.data_points]


@pytest.fixture
def recorded(monkeypatch):
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    record = Recorded()
    telemetry.install(record.pipeline)
    yield record
    telemetry.install(None)
    record.pipeline.shutdown()
    telemetry.reset()
