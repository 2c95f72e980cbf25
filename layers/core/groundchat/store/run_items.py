"""A run as DynamoDB items: the summary every index holds, and the record `get_run` reads.

Two items per run in the runs table, under the run's id:
- `part = "summary"`: the fields the queries filter on plus a compact string of the rules the run
  broke. Only summaries carry `kind` and `started_key`, so the table's indexes (`by_started`,
  `by_model`) hold summaries alone. It is the run's commit marker: written with a condition, in
  the transaction that also updates the run's views (store/run_views.py).
- `part = "detail"`: the whole run, so `get_run` is one GetItem: its cost and duration as Numbers
  (money is read as the summary's is) and `record`, one JSON string of its other fields and its
  violations with their first few nodes (one attribute to write and read, not hundreds). It
  carries no `started_key`, so no index copies it. Details written before the views existed hold
  the violations alone, as a list; `get_run` then reads the summary too.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from groundchat.benchmark.runs import Node, Run, RunSummary, Violation
from groundchat.store import item_values

if TYPE_CHECKING:
    from collections.abc import Mapping

    from groundchat.store.items import StoredItem, StoredValue

# Item size: DynamoDB refuses items over 400 KB. Keep the first few nodes of each violation with
# their snippets cut, and drop nodes further if a page with very many violations still does not fit.
MAX_NODES_PER_VIOLATION = 3
MAX_HTML_CHARS = 500
MAX_SUMMARY_CHARS = 1000
MAX_TARGET_CHARS = 300
MAX_DETAIL_CHARS = 300_000

KIND = "run"
SUMMARY = "summary"
DETAIL = "detail"
# The attributes a summary shares with the run's record and its list entries.
_INDEX_ONLY = ("part", "kind", "started_key")


def iso(dt: datetime | None) -> str | None:
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def started_key(run: RunSummary | Run) -> str:
    # Unique and sortable: ties on the start time keep a stable order by id.
    return f"{iso(run.started_at)}#{run.run_id}"


def summary_item(run: Run) -> StoredItem:
    s = run.summary()
    item: StoredItem = {
        "run_id": run.run_id,
        "part": SUMMARY,
        "kind": KIND,
        "started_key": started_key(run),
        "model": run.model,
        "context": run.context,
        "task": run.task,
        "label": run.label,
        "started_at": iso(run.started_at),
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
        item["finished_at"] = iso(run.finished_at)
    if run.duration_seconds is not None:
        item["duration_seconds"] = run.duration_seconds
    if run.axe_version:
        item["axe_version"] = run.axe_version
    return item


def encode_rules(rules: dict[str, int]) -> str:
    # One string ("color-contrast:2,region:1") rather than a map: list entries and summaries carry
    # it on every run, and a flat string costs far less to (de)serialize than a map of numbers.
    return ",".join(f"{rule}:{count}" for rule, count in sorted(rules.items()))


def decode_rules(text: str) -> dict[str, int]:
    pairs = (part.rsplit(":", 1) for part in text.split(",") if part)
    return {rule: int(count) for rule, count in pairs}


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fit_violations(violations: list[Violation]) -> list[StoredValue]:
    """The violations as stored: first nodes only, snippets cut, and fewer nodes if still too big."""
    for keep in (MAX_NODES_PER_VIOLATION, 1, 0):
        stored: list[StoredValue] = [
            {
                "rule_id": v.rule_id,
                "impact": v.impact,
                "tags": [*v.tags],
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


def detail_item(run: Run) -> StoredItem:
    """The violations alone, under the run's id (the shape an interrupted import of the first
    writer could leave behind without its summary)."""
    return {"run_id": run.run_id, "part": DETAIL, "violations": fit_violations(run.violations)}


_NUMBERS = ("cost_usd", "duration_seconds")


def record_item(run: Run) -> StoredItem:
    """The detail item as the writer stores it: the run's fields with its violations."""
    fields = {k: v for k, v in summary_item(run).items() if k not in _INDEX_ONLY}
    record = {k: v for k, v in fields.items() if k not in _NUMBERS}
    record["violations"] = fit_violations(run.violations)
    item: StoredItem = {"run_id": run.run_id, "part": DETAIL, "record": json.dumps(record, separators=(",", ":"))}
    item.update({k: fields[k] for k in _NUMBERS if k in fields})
    return item


def run_from_record(item: StoredItem) -> Run:
    record = json.loads(item_values.text(item, "record"))
    violations = record.pop("violations")
    summary = summary_from_item({**record, **{k: item[k] for k in _NUMBERS if k in item}})
    fields = summary.model_dump(exclude={"violation_count", "node_count", "rules"})
    return Run(**fields, violations=[violation_from_item(v) for v in violations])


def summary_from_item(item: Mapping[str, StoredValue]) -> RunSummary:
    data: dict[str, object] = {k: v for k, v in item.items() if k not in (*_INDEX_ONLY, "view", "entry", "violations")}
    data["rules"] = decode_rules(item_values.text(item, "rules", ""))
    for name in ("tokens_in", "tokens_out", "violation_count", "node_count"):
        data[name] = item_values.whole(item, name, 0)
    return RunSummary.model_validate(data)


def run_from_items(summary: StoredItem, detail: StoredItem | None) -> Run:
    fields = summary_from_item(summary).model_dump(exclude={"violation_count", "node_count", "rules"})
    violations = [violation_from_item(v) for v in item_values.maps(detail or {}, "violations")]
    return Run(**fields, violations=violations)


def violation_from_item(item: Mapping[str, StoredValue]) -> Violation:
    return Violation(
        rule_id=item_values.text(item, "rule_id"),
        impact=item_values.optional_text(item, "impact"),
        tags=item_values.texts(item, "tags"),
        node_count=item_values.whole(item, "node_count"),
        nodes=[Node.model_validate(n) for n in item_values.maps(item, "nodes")],
    )
