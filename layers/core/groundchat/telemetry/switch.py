"""Whether OpenTelemetry export is on, and whether it may carry message content: read from the
standard OpenTelemetry variables, so an operator points groundchat at a collector exactly as any
other service.

Export is on when `OTEL_EXPORTER_OTLP_ENDPOINT` (or its traces-only twin) names a collector and
`OTEL_SDK_DISABLED` is not true. Content capture is off unless
`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` (the GenAI instrumentations' own switch) says
true. Nothing here imports OpenTelemetry: this module is
read on every answer, including every answer of a deployment that exports nothing.
"""
from __future__ import annotations

import os

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
CAPTURE_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_TRUE = ("true", "1", "yes", "on")


def _true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def export_configured() -> bool:
    if _true("OTEL_SDK_DISABLED"):
        return False
    return any(os.environ.get(name, "").strip() for name in ENDPOINT_VARIABLES)


def content_capture_on() -> bool:
    return _true(CAPTURE_VARIABLE)


def on_lambda() -> bool:
    """In Lambda the process is frozen between invocations: a batch waiting in memory would be sent
    only at the next one (or never), so each answer flushes its spans once its last frame is out."""
    return bool(os.environ.get("AWS_LAMBDA_FUNCTION_NAME"))
