"""A real OpenTelemetry collector for the tests and `make run`: Jaeger v2, built once into a cache.

    python -m groundchat_cli.collector build     build it if missing; one line if it cannot be built
    python -m groundchat_cli.collector serve     run it in the foreground on 127.0.0.1, print where

Jaeger v2 is the OpenTelemetry Collector with Jaeger's storage and query: it takes OTLP/HTTP, keeps
traces in memory and answers its own query API (`/api/v3/traces/<id>`, OTLP JSON) and UI. Its
metrics pipeline goes to the collector's Prometheus exporter, so metrics are read back from the
collector too. Built with Go from the module proxy, as a tool of a small module of ours. Pinned here and nowhere else; the binary lands in a directory named after its
version under $GROUNDCHAT_COLLECTOR_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/groundchat/collector.
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.error import URLError
from urllib.request import urlopen

JAEGER_PACKAGE = "github.com/jaegertracing/jaeger/cmd/jaeger"
# Jaeger tags each release twice, v1 and v2, on one commit; Go modules know the v1 tag.
JAEGER_VERSION = "v1.75.0"  # = Jaeger v2.12.0
HOST = "127.0.0.1"


def cache_root() -> Path:
    if os.environ.get("GROUNDCHAT_COLLECTOR_CACHE"):
        return Path(os.environ["GROUNDCHAT_COLLECTOR_CACHE"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "groundchat" / "collector"


def jaeger_binary() -> Path:
    return cache_root() / f"jaeger-{JAEGER_VERSION}" / "jaeger"


def build() -> Path | None:
    """The binary, built when missing; None (and one line saying why) when it cannot be built here."""
    binary = jaeger_binary()
    if binary.exists():
        return binary
    if not shutil.which("go"):
        print(f"collector: install Go to build Jaeger {JAEGER_VERSION}; the collector tests skip without it")
        return None
    # A module of our own that names Jaeger as a tool (`go get -tool`): Jaeger's own `replace`
    # directives, which `go install module@version` refuses, do not apply to a dependency.
    module = binary.parent / "module"
    partial = binary.with_name("jaeger.partial")
    try:
        module.mkdir(parents=True, exist_ok=True)
        if not (module / "go.mod").exists():
            _go(["mod", "init", "groundchat.local/collector"], module)
        _go(["get", "-tool", f"{JAEGER_PACKAGE}@{JAEGER_VERSION}"], module)
        _go(["build", "-trimpath", "-o", str(partial), JAEGER_PACKAGE], module)
        partial.rename(binary)
    except (subprocess.CalledProcessError, OSError) as exc:
        print(f"collector: could not build Jaeger {JAEGER_VERSION} ({type(exc).__name__}: {exc}); the collector tests skip")
        return None
    return binary


def _go(args: list[str], cwd: Path) -> None:
    subprocess.run(["go", *args], check=True, cwd=cwd)


USUAL_OTLP_PORT = 4318
USUAL_QUERY_PORT = 16686


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def config(otlp_http: int, query_http: int, query_grpc: int, prometheus: int) -> str:
    """Traces from OTLP/HTTP into memory, read by the query API; metrics to the Prometheus exporter.
    Everything on 127.0.0.1, nothing of the collector's own telemetry exposed."""
    return json.dumps({
        "service": {
            "extensions": ["jaeger_storage", "jaeger_query"],
            "pipelines": {
                "traces": {"receivers": ["otlp"], "processors": ["batch"], "exporters": ["jaeger_storage_exporter"]},
                "metrics": {"receivers": ["otlp"], "exporters": ["prometheus"]},
            },
            "telemetry": {"metrics": {"level": "none"}, "logs": {"level": "warn"}},
        },
        "extensions": {
            "jaeger_query": {"storage": {"traces": "memstore"},
                             "http": {"endpoint": f"{HOST}:{query_http}"}, "grpc": {"endpoint": f"{HOST}:{query_grpc}"}},
            "jaeger_storage": {"backends": {"memstore": {"memory": {"max_traces": 10000}}}},
        },
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"{HOST}:{otlp_http}"}}}},
        # A short timeout: a test flushes and reads at once.
        "processors": {"batch": {"timeout": "100ms"}},
        "exporters": {
            "jaeger_storage_exporter": {"trace_storage": "memstore"},
            "prometheus": {"endpoint": f"{HOST}:{prometheus}"},
        },
    })


@dataclass
class Collector:
    """A running Jaeger: where to send OTLP, and how to read back what it holds."""

    process: subprocess.Popen[bytes]
    otlp_endpoint: str  # what OTEL_EXPORTER_OTLP_ENDPOINT is set to
    query_url: str  # the query API and the UI
    metrics_url: str  # the Prometheus exporter's scrape page
    workdir: Path = field(repr=False)

    def trace(self, trace_id: str) -> dict:
        """One trace as the query API returns it (OTLP JSON: resourceSpans → scopeSpans → spans)."""
        with urlopen(f"{self.query_url}/api/v3/traces/{trace_id}", timeout=10) as response:
            return json.load(response)

    def services(self) -> list[str]:
        with urlopen(f"{self.query_url}/api/v3/services", timeout=10) as response:
            return list(json.load(response).get("services") or [])

    def metrics_text(self) -> str:
        with urlopen(self.metrics_url, timeout=10) as response:
            return response.read().decode("utf-8")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)


def _hex(value: str, size: int) -> str:
    if len(value) == size * 2 and all(c in "0123456789abcdefABCDEF" for c in value):
        return value.lower()
    return base64.b64decode(value).hex()  # OTLP JSON as protobuf's JSON writes bytes


def _value(value: dict):
    (kind, inner), = value.items()
    if kind == "arrayValue":
        return [_value(v) for v in inner.get("values", [])]
    return int(inner) if kind == "intValue" else inner


def spans_of(trace: dict) -> list[dict]:
    """The trace's spans, flat: name, ids (hex), parent and attributes as plain values."""
    out = []
    for resource in trace["result"]["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                out.append({"name": span["name"], "trace": _hex(span["traceId"], 16), "id": _hex(span["spanId"], 8),
                            "parent": _hex(span["parentSpanId"], 8) if span.get("parentSpanId") else None,
                            "attrs": {a["key"]: _value(a["value"]) for a in span.get("attributes", [])}})
    return out


def start(binary: Path, *, ready_seconds: float = 60, usual_ports: bool = False) -> Collector:
    """Jaeger on 127.0.0.1, returned once its query API answers: on free ports, or with
    `usual_ports` on OTLP/HTTP's 4318 and Jaeger's UI 16686 where they are free."""
    otlp, query, grpc, prom = (free_port() for _ in range(4))
    if usual_ports:
        otlp = USUAL_OTLP_PORT if _port_free(USUAL_OTLP_PORT) else otlp
        query = USUAL_QUERY_PORT if _port_free(USUAL_QUERY_PORT) else query
    workdir = Path(tempfile.mkdtemp(prefix="groundchat-collector-"))
    config_file = workdir / "config.yaml"  # JSON is YAML
    config_file.write_text(config(otlp, query, grpc, prom), encoding="utf-8")
    log = (workdir / "jaeger.log").open("wb")
    process = subprocess.Popen([str(binary), "--config", str(config_file)], stdout=log, stderr=subprocess.STDOUT)
    collector = Collector(process, f"http://{HOST}:{otlp}", f"http://{HOST}:{query}", f"http://{HOST}:{prom}/metrics", workdir)
    deadline = time.monotonic() + ready_seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = (workdir / "jaeger.log").read_text(errors="replace")[-2000:]
            shutil.rmtree(workdir, ignore_errors=True)
            raise RuntimeError(f"Jaeger exited with {process.returncode}: {output}")
        try:
            collector.services()
            return collector
        except (URLError, OSError, ValueError):
            time.sleep(0.2)
    collector.stop()
    raise RuntimeError(f"Jaeger did not answer on {collector.query_url} within {ready_seconds} s")


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "build"
    if command == "build":
        binary = build()  # says in one line why, when it cannot build
        if binary is not None:
            print(f"collector: Jaeger {JAEGER_VERSION} in {binary}")
        return 0
    if command == "serve":
        binary = build()
        if binary is None:
            return 1
        collector = start(binary, usual_ports=True)
        print(f"collector: send OTLP to {collector.otlp_endpoint}; traces at {collector.query_url}/search; "
              f"metrics at {collector.metrics_url}", flush=True)
        try:
            collector.process.wait()
        except KeyboardInterrupt:
            pass
        finally:
            collector.stop()
        return 0
    print("usage: python -m groundchat_cli.collector [build|serve]")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
