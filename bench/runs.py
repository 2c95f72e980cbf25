"""The data tools at 480, 5,000 and 50,000 runs: each tool's p50/p95 and the DynamoDB items it
reads, and both as a ratio to the 480-run figure, in one run.

moto's DynamoDB server runs on 127.0.0.1 in a process of its own (`LocalDynamo`, as `groundchat
serve` starts it; the CLI and the app talk to it over HTTP from theirs). Each size gets tables of
its own (a table prefix), filled by `RunWriter` through the import (`import_text`, a file per
round) from the sample generator with more rounds and tasks. The tools are called through the tool
registry, as the model calls them, so the times include checking the filter and shaping the
result. Items read are counted from every DynamoDB response (Item, Items, Responses) with a
botocore event hook. Prints; asserts nothing.

    .venv/bin/python bench/runs.py [--calls 40] [--import-budget 480] [--sizes 480,5000,50000]

If a size's import would pass the budget (seconds), its import stops at the last round that fits
and the output says how many runs it holds instead.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")

# (runs, rounds, tasks): five models × four contexts × tasks × rounds; 480 is the sample itself.
SHAPES = {480: (3, 8), 5_000: (25, 10), 50_000: (125, 20)}
SERVER = ("import sys; from groundchat_cli.moto_store import LocalDynamo; "
          "d = LocalDynamo().start(); print(d.endpoint, flush=True); sys.stdin.read(); d.stop()")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


class Reads:
    """Items every DynamoDB response returned, for the calls made since the last reset."""

    def __init__(self, dynamo) -> None:
        self.items = 0
        self.requests = 0
        self._lock = threading.Lock()
        for client in (dynamo.client, dynamo.resource.meta.client):
            client.meta.events.register("after-call.dynamodb", self._seen)

    def _seen(self, parsed, **_) -> None:
        got = ("Item" in parsed) + len(parsed.get("Items", [])) + sum(len(v) for v in parsed.get("Responses", {}).values())
        with self._lock:
            self.items += got
            self.requests += 1

    def take(self) -> tuple[int, int]:
        with self._lock:
            out, self.items, self.requests = (self.items, self.requests), 0, 0
        return out


@dataclass
class Size:
    wanted: int
    runs: int = 0
    import_s: float = 0.0
    repair: str = ""
    figures: dict[str, tuple[float, float, float]] = field(default_factory=dict)  # p50 ms, p95 ms, items


def start_server() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return proc, proc.stdout.readline().strip()


def store(endpoint: str, prefix: str):
    from groundchat.config import Settings
    from groundchat.store.dynamo import Dynamo, create_tables
    from groundchat.store.tables import RUN_VIEWS, RUNS

    dynamo = Dynamo(Settings(dynamodb_endpoint=endpoint, table_prefix=prefix))
    create_tables(dynamo, [RUNS, RUN_VIEWS])
    return dynamo


def fill(dynamo, size: Size, budget_s: float, importers: int) -> list[dict]:
    """Import round by round, oldest first, until done or past the budget. Each round is imported
    as `importers` files at once, split by model so no two importers add to the same cell (each
    has a `RunWriter` of its own, as two `groundchat runs import` commands would)."""
    import json

    from groundchat.store.runs_import import import_text
    from groundchat.store.runs import RunWriter
    from groundchat_cli.sample import MODELS, generate_runs

    rounds, tasks = SHAPES[size.wanted]
    lines = generate_runs(rounds=rounds, tasks=tasks)
    per_round = len(lines) // rounds
    writers = [RunWriter(unchecked(dynamo)) for _ in range(importers)]
    group = {m.name: i % importers for i, m in enumerate(MODELS)}
    started = time.perf_counter()
    for r in range(rounds):
        chunk = lines[r * per_round:(r + 1) * per_round]
        files = ["".join(json.dumps(x) + "\n" for x in chunk if group[x["model"]] == i) for i in range(importers)]
        reports: list = [None] * importers

        def run(i: int, text: str, source: str, reports: list = reports) -> None:
            reports[i] = import_text(writers[i], text, source=source)

        threads = [threading.Thread(target=run, args=(i, files[i], f"round-{r + 1}.{i}")) for i in range(importers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(rep.ok for rep in reports), [rep.errors[:3] for rep in reports]
        size.runs += sum(len(rep.imported) for rep in reports)
        elapsed = time.perf_counter() - started
        if r + 1 < rounds and elapsed / (r + 1) * (r + 2) > budget_s:
            break
    size.import_s = time.perf_counter() - started
    return lines[: size.runs]


def unchecked(dynamo):
    """The same store through clients that skip botocore's parameter validation (a quarter of the
    importing process's time here; RunWriter's requests are well formed). Only the import uses it:
    the tools are measured through the clients the app uses."""
    import copy

    import boto3
    from botocore.config import Config

    fast = copy.copy(dynamo)
    config = Config(parameter_validation=False, retries={"max_attempts": 4, "mode": "standard"}, max_pool_connections=64)
    kwargs = {"region_name": dynamo.settings.aws_region, "endpoint_url": dynamo.settings.dynamodb_endpoint, "config": config}
    fast.client, fast.resource = boto3.client("dynamodb", **kwargs), boto3.resource("dynamodb", **kwargs)
    return fast


def calls(lines: list[dict]) -> dict[str, list[dict]]:
    """Each tool with a few argument sets, cycled: different cells and partitions on every call."""
    tasks = sorted({x["task"] for x in lines})[:4]
    models = sorted({x["model"] for x in lines})
    contexts = ["none", "checklist", "guidelines", "guidelines-axe"]
    rules = ["color-contrast", "label", "image-alt", "select-name"]
    ids = [lines[i]["id"] for i in range(0, len(lines), max(1, len(lines) // 7))][:7]
    # A task where each rule was broken (the larger sizes have tasks some rules never meet).
    broke = {(v["id"], x["task"]) for x in lines for v in (x.get("axe") or {}).get("violations", [])}
    rule_tasks = [(r, next((t for t in sorted({x["task"] for x in lines}) if (r, t) in broke), tasks[0])) for r in rules]
    return {
        "compare_contexts {}": [{}],
        "compare_contexts {task}": [{"task": t} for t in tasks],
        "top_rules {task, limit 10}": [{"task": t, "limit": 10} for t in tasks],
        "list_runs {context, limit 20}": [{"context": c, "limit": 20} for c in contexts],
        "list_runs {model, task}": [{"model": m, "task": t} for m, t in zip(models, tasks * 2)],
        "list_runs {rule}": [{"rule": r} for r in rules],
        "list_runs {rule, context}": [{"rule": r, "context": c} for r, c in zip(rules, contexts)],
        "list_runs {rule, task}": [{"rule": r, "task": t} for r, t in rule_tasks],
        "list_runs {rule, model, context}": [{"rule": r, "model": m, "context": c} for r, m, c in zip(rules, models, contexts)],
        "get_run": [{"run_id": i} for i in ids],
    }


TOOL = {name: name.split()[0] for name in calls([{"task": "t", "model": "m", "id": "r"}])}


async def measure(dynamo, lines: list[dict], size: Size, n: int) -> None:
    from groundchat.auth.callers import RUNS_READ, Caller
    from groundchat.store.runs import RunQueries
    from groundchat.tools import ToolContext, ToolRegistry
    from groundchat.tools.data_tools import DATA_TOOLS

    async def can(permission: str, caller: Caller) -> bool:
        return permission == RUNS_READ

    registry = ToolRegistry(DATA_TOOLS, can=can)
    queries = RunQueries(dynamo)
    ctx = ToolContext(caller=Caller(id="bench"), runs=queries)
    reads = Reads(dynamo)
    for label, arg_sets in calls(lines).items():
        for i in range(3):  # warm the code path
            await registry.execute(TOOL[label], arg_sets[i % len(arg_sets)], ctx)
        times, items = [], []
        for i in range(n):
            reads.take()
            started = time.perf_counter()
            await registry.execute(TOOL[label], arg_sets[i % len(arg_sets)], ctx)
            times.append((time.perf_counter() - started) * 1000)
            items.append(reads.take()[0])
        size.figures[label] = (statistics.median(times), percentile(times, 0.95), statistics.median(items))
    times, items = [], []
    for _ in range(n):  # what the offline answerer reads per question when its 30 s cache is cold
        queries._facets = None
        reads.take()
        started = time.perf_counter()
        await queries.facets()
        times.append((time.perf_counter() - started) * 1000)
        items.append(reads.take()[0])
    size.figures["facets (uncached)"] = (statistics.median(times), percentile(times, 0.95), statistics.median(items))


def check(dynamo, size: Size) -> None:
    from groundchat_cli.run_repair import check_views

    started = time.perf_counter()
    report = check_views(dynamo)
    verdict = "no difference" if report.clean else f"{len(report.missing)} missing, {len(report.extra)} extra, {len(report.differing)} differing"
    size.repair = f"{verdict} ({report.expected} view items, {time.perf_counter() - started:.1f} s)"


def header(n: int) -> None:
    print(f"bench/runs.py: moto's DynamoDB server on 127.0.0.1 (own process), {n} calls per tool; times in ms; "
          "items = DynamoDB items read per call (median); ×480 = ratio to the 480-run figure", flush=True)


def report(size: Size, base: Size, budget_s: float) -> None:
    cut = "" if size.runs == size.wanted else (
        f"  [{size.wanted:,} did not fit the {budget_s:.0f} s import budget: stopped at {size.runs:,} runs]")
    print(f"\n{size.runs:,} runs (imported in {size.import_s:.0f} s, {size.import_s / size.runs * 1000:.1f} ms a run){cut}")
    if size.repair:
        print(f"  runs repair: {size.repair}")
    print(f"  {'tool call':<34} {'p50':>8} {'p95':>8} {'items':>6}   {'p50 ×480':>8} {'p95 ×480':>8} {'items ×480':>10}")
    for label, (p50, p95, items) in size.figures.items():
        b50, b95, bitems = base.figures[label]
        print(f"  {label:<34} {p50:8.1f} {p95:8.1f} {items:6.0f}   {p50 / b50:8.2f} {p95 / b95:8.2f} {items / bitems:10.2f}")
    print(flush=True)


NOTES = """Notes: `list_runs {model, task}` reads the limit (21 entries) plus the filter check; at 480 runs a
model has only 12 runs of a task, so it reads fewer there. A rule with one other filter
(`{rule, context}`, `{rule, task}`) is one Query of that field's rule index: the limit (21 entries)
plus the filter check, fewer where the combination has fewer runs. A rule with two or more
(`{rule, model, context}`) reads the cells (20), which say which list holding every match is the
smallest (a field's rule index, or the other fields' own list when the rule is common) and how many
match, then that list in pages sized to hold a page of matches: limit ÷ (share of the list
matching), set by how common the combination is, not by the number of runs. Facets (all filter
values, for the offline answerer, cached 30 s) grow with the number of distinct tasks and labels,
not with runs."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--import-budget", type=float, default=480.0, help="seconds of import per size at most")
    parser.add_argument("--sizes", default="480,5000,50000")
    parser.add_argument("--repair-up-to", type=int, default=5_000, help="run `runs repair` on sizes up to this many runs")
    parser.add_argument("--importers", type=int, default=2, help="files imported at once (split by model)")
    args = parser.parse_args()
    proc, endpoint = start_server()
    header(args.calls)
    base = None
    try:
        for wanted in (int(s) for s in args.sizes.split(",")):
            size = Size(wanted)
            dynamo = store(endpoint, f"bench{wanted}-")
            lines = fill(dynamo, size, args.import_budget, args.importers)
            asyncio.run(measure(dynamo, lines, size, args.calls))
            if size.runs <= args.repair_up_to:
                check(dynamo, size)
            base = base or size
            report(size, base, args.import_budget)
        print(NOTES)
    finally:
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:  # a server holding a million items takes long to tear down
            proc.kill()
            proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
