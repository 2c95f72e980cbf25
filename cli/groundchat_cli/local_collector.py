"""`GROUNDCHAT_LOCAL_COLLECTOR=jaeger make run`: a local Jaeger v2 beside the stack, and the app's
OpenTelemetry export pointed at it, so an operator sees the answers' spans as a collector shows them.

Export is configured by the standard variables, set here before the app is built: the same path a
deployment takes with its own collector. A variable the operator set already is left as it is.
"""
from __future__ import annotations

import os

from groundchat_cli.stack_address import StackError
from groundchat_cli.collector import Collector, build, start

KINDS = ("jaeger",)


def start_local_collector(kind: str) -> Collector:
    if kind not in KINDS:
        raise StackError(f"GROUNDCHAT_LOCAL_COLLECTOR={kind!r}: the local collector can be {', '.join(KINDS)}")
    binary = build()
    if binary is None:
        raise StackError("GROUNDCHAT_LOCAL_COLLECTOR=jaeger: Jaeger could not be built here (see the line above)")
    collector = start(binary, usual_ports=True)
    os.environ.setdefault("OTEL_EXPORTER_OTLP_ENDPOINT", collector.otlp_endpoint)
    os.environ.setdefault("OTEL_SERVICE_NAME", "groundchat")
    from groundchat import telemetry

    telemetry.reset()  # read the variables again: the app exports from its first answer
    print(f"collector: Jaeger at {collector.query_url}/search (service groundchat); OTLP in at "
          f"{collector.otlp_endpoint}; metrics at {collector.metrics_url}", flush=True)
    return collector
