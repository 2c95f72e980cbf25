"""Runs of the benchmark on DynamoDB (the types are `groundchat.benchmark.runs`), and the named
queries the data tools fill in.

One table, two items per run under the same partition key:
- `part = "summary"`: the fields every query filters and aggregates on, plus a compact map of the
  rules the run broke (rule id -> node count). Only summaries carry `kind`, `model` and
  `started_key`, so both indexes are sparse and hold summaries alone.
- `part = "detail"`: the violations with their first few nodes, read only by `get_run`.
Aggregates therefore read a few hundred bytes per run, never the html snippets.

Indexes: `by_started` (kind = "run", started_key) lists every run newest first; `by_model`
(model, started_key) narrows to one model, the filter people use most. Context, task, label and
rule are filtered in code after the index query: at a few thousand runs one paginated query of
small summary items is cheap, and DynamoDB's FilterExpression would read (and bill) the same
items anyway. Past tens of thousands of runs, precomputed per-model × context counters would be
the next step.

There is no free-form query: callers name a query and fill its parameters (`RunFilter`).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterator

from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError

from groundchat.benchmark.runs import (
    FILTER_FIELDS,
    Node,
    OverviewRow,
    RuleCounts,
    Run,
    RunFilter,
    RunSummary,
    Violation,
    context_sort_key,
    overview_rows,
    rule_counts_of,
)
from groundchat.store.dynamo import Dynamo, condition_failed
from groundchat.store.tables import RUNS


# Item size: DynamoDB refuses items over 400 KB. Keep the first few nodes of each violation with
# their snippets cut, and drop nodes further if a page with very many violations still does not fit.
MAX_NODES_PER_VIOLATION = 3
MAX_HTML_CHARS = 500
MAX_SUMMARY_CHARS = 1000
MAX_TARGET_CHARS = 300
MAX_DETAIL_CHARS = 300_000

_KIND = "run"
_SUMMARY = "summary"
_DETAIL = "detail"


# ---- items -------------------------------------------------------------------------------------


def _iso(dt: datetime | None) -> str | None:
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _summary_item(run: Run) -> dict[str, Any]:
    s = run.summary()
    item: dict[str, Any] = {
        "run_id": run.run_id,
        "part": _SUMMARY,
        "kind": _KIND,
        # Unique and sortable: ties on the start time keep a stable order by id.
        "started_key": f"{_iso(run.started_at)}#{run.run_id}",
        "model": run.model,
        "context": run.context,
        "task": run.task,
        "label": run.label,
        "started_at": _iso(run.started_at),
        "outcome": run.outcome,
        "cost_usd": run.cost_usd,
        "tokens_in": run.tokens_in,
        "tokens_out": run.tokens_out,
        "graded": run.graded,
        "violation_count": s.violation_count,
        "node_count": s.node_count,
        "rules": encode_rules(s.rules),
    }
    if run.finished_at is not None:
        item["finished_at"] = _iso(run.finished_at)
    if run.duration_seconds is not None:
        item["duration_seconds"] = run.duration_seconds
    if run.axe_version:
        item["axe_version"] = run.axe_version
    return item


def encode_rules(rules: dict[str, int]) -> str:
    # One string ("color-contrast:2,region:1") rather than a map: the aggregates read this attribute
    # on every run, and a flat string costs far less to (de)serialize than a map of numbers.
    return ",".join(f"{rule}:{count}" for rule, count in sorted(rules.items()))


def decode_rules(text: str) -> dict[str, int]:
    pairs = (part.rsplit(":", 1) for part in text.split(",") if part)
    return {rule: int(count) for rule, count in pairs}


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fit_violations(violations: list[Violation]) -> list[dict[str, Any]]:
    """The violations as stored: first nodes only, snippets cut, and fewer nodes if still too big."""
    for keep in (MAX_NODES_PER_VIOLATION, 1, 0):
        stored = [
            {
                "rule_id": v.rule_id,
                "impact": v.impact,
                "tags": v.tags,
                "node_count": v.node_count,
                "nodes": [
                    {
                        "target": _cut(n.target, MAX_TARGET_CHARS),
                        "html": _cut(n.html, MAX_HTML_CHARS),
                        "failure_summary": _cut(n.failure_summary, MAX_SUMMARY_CHARS),
                    }
                    for n in v.nodes[:keep]
                ],
            }
            for v in violations
        ]
        if len(json.dumps(stored)) <= MAX_DETAIL_CHARS:
            break
    return stored


def _detail_item(run: Run) -> dict[str, Any]:
    return {"run_id": run.run_id, "part": _DETAIL, "violations": fit_violations(run.violations)}


def _summary_from_item(item: dict[str, Any]) -> RunSummary:
    data = {k: v for k, v in item.items() if k not in ("part", "kind", "started_key")}
    data["rules"] = decode_rules(item.get("rules", ""))
    for name in ("tokens_in", "tokens_out", "violation_count", "node_count"):
        data[name] = int(item.get(name, 0))
    return RunSummary.model_validate(data)


# ---- writing -----------------------------------------------------------------------------------


@dataclass
class WriteReport:
    written: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)  # already in the store: left as they were


class RunWriter:
    """Writes runs; used by the import and the sample loader, never handed to a tool."""

    def __init__(self, dynamo: Dynamo) -> None:
        self._table = dynamo.table(RUNS)
        self._name = dynamo.name(RUNS)
        self._client = dynamo.client

    def is_empty(self) -> bool:
        page = self._client.scan(TableName=self._name, Limit=1, ProjectionExpression="run_id")
        return not page.get("Items")

    def put_runs(self, runs: list[Run]) -> WriteReport:
        report = WriteReport()
        for run in runs:
            (report.written if self.put_run(run) else report.existing).append(run.run_id)
        return report

    def put_run(self, run: Run) -> bool:
        """Writes a run once; False if it was already there (a re-import is a no-op).

        The summary is the commit marker: queries see a run only through it, and it is written
        last, so a reader never meets a run without its detail. Both writes are conditional.
        (Not one TransactWriteItems: moto copies the whole table per transacted item, which makes
        loading a few hundred runs into the local stand-in take minutes; this order gives readers
        the same guarantee.)
        """
        try:
            self._put_new(_detail_item(run))
        except ClientError as exc:
            if not condition_failed(exc):
                raise
            if self._has_summary(run.run_id):
                return False
            # An earlier import stopped between the two writes: finish it with this detail.
            self._table.put_item(Item=_detail_item(run))
        try:
            self._put_new(_summary_item(run))
        except ClientError as exc:
            if not condition_failed(exc):
                raise
            return False  # a concurrent import committed it first
        return True

    def _put_new(self, item: dict[str, Any]) -> None:
        self._table.put_item(Item=item, ConditionExpression="attribute_not_exists(run_id)")

    def _has_summary(self, run_id: str) -> bool:
        got = self._table.get_item(Key={"run_id": run_id, "part": _SUMMARY}, ConsistentRead=True)
        return "Item" in got


# ---- named queries -----------------------------------------------------------------------------


class RunQueries:
    """Read-only: the named, parameterised queries the data tools may run. Nothing else."""

    # Facets are read to validate every filtered call; they change only when runs are imported, so
    # a short cache saves a full read per call at the cost of a new value showing up a little late.
    FACETS_TTL_SECONDS = 30.0

    def __init__(self, dynamo: Dynamo) -> None:
        self._dynamo = dynamo
        self._table = dynamo.table(RUNS)
        self._facets: tuple[float, dict[str, list[str]]] | None = None

    async def overview(self, flt: RunFilter | None = None) -> list[OverviewRow]:
        return overview_rows(await self._matching(flt or RunFilter()))

    async def overview_with_contexts(self, flt: RunFilter | None = None) -> tuple[list[OverviewRow], list[OverviewRow]]:
        """Per model × context, and per context level over every model the filter admits: the
        same aggregates from one read of the runs."""
        runs = await self._matching(flt or RunFilter())
        return overview_rows(runs), overview_rows(runs, per_model=False)

    async def list_runs(self, flt: RunFilter | None = None, limit: int = 20) -> tuple[list[RunSummary], bool]:
        """Newest first. Returns the runs and whether more matched than the limit."""
        found = await self._dynamo.run(self._collect, flt or RunFilter(), limit + 1)
        return found[:limit], len(found) > limit

    async def get_run(self, run_id: str) -> Run | None:
        resp = await self._dynamo.run(self._table.query, KeyConditionExpression=Key("run_id").eq(run_id))
        parts = {item["part"]: item for item in resp.get("Items", [])}
        if _SUMMARY not in parts:
            return None
        summary = _summary_from_item(parts[_SUMMARY])
        violations = [_violation_from_item(v) for v in parts.get(_DETAIL, {}).get("violations", [])]
        data = summary.model_dump(exclude={"violation_count", "node_count", "rules"})
        return Run(**data, violations=violations)

    async def rule_counts(self, flt: RunFilter | None = None, limit: int = 10) -> RuleCounts:
        return rule_counts_of(await self._matching(flt or RunFilter()), limit)

    async def facets(self) -> dict[str, list[str]]:
        """The values each filter can take, for telling a caller what exists."""
        now = time.monotonic()
        if self._facets is not None and now - self._facets[0] < self.FACETS_TTL_SECONDS:
            return self._facets[1]
        runs = await self._matching(RunFilter())
        values: dict[str, set[str]] = {name: set() for name in (*FILTER_FIELDS, "rule")}
        for run in runs:
            for name in FILTER_FIELDS:
                values[name].add(getattr(run, name))
            values["rule"].update(run.rules)
        out = {name: sorted(vals) for name, vals in values.items()}
        out["context"] = sorted(values["context"], key=context_sort_key)
        # An empty store is not cached: the sample or an import is probably about to fill it.
        self._facets = (now, out) if runs else None
        return out

    async def all_runs(self) -> list[RunSummary]:
        return await self._matching(RunFilter())

    async def _matching(self, flt: RunFilter) -> list[RunSummary]:
        return await self._dynamo.run(self._collect, flt, None)

    def _collect(self, flt: RunFilter, limit: int | None) -> list[RunSummary]:
        out = []
        for item in self._summaries(flt.model):
            run = _summary_from_item(item)
            if flt.matches(run):
                out.append(run)
                if limit is not None and len(out) >= limit:
                    break
        return out

    def _summaries(self, model: str | None) -> Iterator[dict[str, Any]]:
        if model is not None:
            kwargs: dict[str, Any] = {"IndexName": "by_model", "KeyConditionExpression": Key("model").eq(model)}
        else:
            kwargs = {"IndexName": "by_started", "KeyConditionExpression": Key("kind").eq(_KIND)}
        kwargs["ScanIndexForward"] = False
        while True:
            page = self._table.query(**kwargs)
            yield from page.get("Items", [])
            if "LastEvaluatedKey" not in page:
                return
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _violation_from_item(item: dict[str, Any]) -> Violation:
    return Violation(
        rule_id=item["rule_id"],
        impact=item.get("impact"),
        tags=list(item.get("tags") or []),
        node_count=int(item["node_count"]),
        nodes=[Node(**n) for n in item.get("nodes") or []],
    )


# The name the app's composition (services.py) builds the tools' read-only view by.
RunsStore = RunQueries
