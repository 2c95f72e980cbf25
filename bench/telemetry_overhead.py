"""What OpenTelemetry costs an answer: with export off (the default), and on.

Each figure is the median time of one answer through the loop (chat/loop.py `run_exchange`: two
scripted model steps, one tool call, no store), measured in a fresh interpreter that answers 300
times after 30 for warm-up. The modes take turns, N rounds, so a machine that gets busier slows
every line alike; the load average is printed before and after.

- `off`: no OTEL_* variable, the deployment default: nothing of OpenTelemetry is loaded.
- `on`: export on through the real SDK and a batch processor whose exporter drops the spans (the
  network is the collector's cost, not ours).
- `--against DIR`: the same answers with another checkout's code (e.g. the commit before
  OpenTelemetry), so "off" can be compared with "never there".

    python bench/telemetry_overhead.py [--against /path/to/other/checkout] [--rounds 5]

Prints figures, asserts nothing.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WARMUP, ANSWERS = 30, 300

WORKER = r'''
import asyncio, os, statistics, sys, time
from pydantic import BaseModel
from groundchat.chat.answer_run import LoopLimits
from groundchat.chat.loop import run_exchange
from groundchat.tools.base import Tool, ToolRegistry
from groundchat_testkit.answer_runs import kept_run
from groundchat_testkit.scripted import ScriptedModel, Step

if os.environ.get("BENCH_EXPORT") == "on":
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from groundchat import telemetry
    from groundchat.telemetry import sdk

    class Dropped(SpanExporter):
        def export(self, spans):
            return SpanExportResult.SUCCESS

    telemetry.install(sdk.build(BatchSpanProcessor(Dropped()), InMemoryMetricReader()))

class Query(BaseModel):
    query: str

async def search(ctx, args):
    return {"outcome": "empty", "excerpts": []}

async def allow(permission, caller):
    return True

async def one():
    registry = ToolRegistry([Tool(name="search_docs", grounding="text", drawer="excerpts", offline_template="excerpts", description="s", input_model=Query, permission="docs.read",
                                  handler=search)], allow)
    model = ScriptedModel([Step(tool_calls=[("search_docs", {"query": "q"})]), Step(text="An answer.")])
    run = await kept_run(model, registry, system="sys", question="q?", conversation_id="c", run_id="r", limits=LoopLimits())
    started = time.perf_counter()
    async for _ in run_exchange(run):
        pass
    return time.perf_counter() - started

async def main():
    for _ in range(WARMUP):
        await one()
    times = [await one() for _ in range(ANSWERS)]
    loaded = sum(1 for m in sys.modules if m.startswith("opentelemetry.sdk"))
    print(f"{statistics.median(times) * 1e6:.1f} {loaded}")

asyncio.run(main())
'''.replace("WARMUP", str(WARMUP)).replace("ANSWERS", str(ANSWERS))


def run(mode: str, checkout: Path) -> tuple[float, int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["BENCH_EXPORT"] = mode
    # Another checkout's packages come first on the path, before this one's editable install.
    env["PYTHONPATH"] = os.pathsep.join(str(checkout / p) for p in ("layers/core", "testkit"))
    out = subprocess.run([sys.executable, "-c", WORKER], env=env, cwd=checkout, check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), int(out[1])


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--against", type=Path, help="another checkout, measured with export off")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    modes = [("off", "off", REPO), ("on", "on", REPO)]
    if args.against:
        modes.insert(0, (f"without OpenTelemetry ({args.against.name})", "off", args.against))
    print(f"load average before: {load()}")
    times: dict[str, list[float]] = {label: [] for label, _, _ in modes}
    sdk_modules: dict[str, int] = {}
    for _ in range(args.rounds):
        for label, mode, checkout in modes:
            median, loaded = run(mode, checkout)
            times[label].append(median)
            sdk_modules[label] = loaded
    print(f"one answer through the loop (2 model steps, 1 tool call), median µs of {ANSWERS} answers, "
          f"median of {args.rounds} interpreters")
    print(f"{'mode':<40}{'µs/answer':>12}{'SDK modules':>14}")
    for label in times:
        print(f"{label:<40}{statistics.median(times[label]):>12.1f}{sdk_modules[label]:>14}")
    print(f"load average after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
