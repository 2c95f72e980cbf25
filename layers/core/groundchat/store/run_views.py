"""The runs' views: what the runs add up to, kept beside them so no question reads every run.

One table (`run_views`), partition key `view`, sort key `entry`. Every item is written in the
TransactWriteItems that stores its run (store/runs.py, `RunWriter`), so a view never counts a run
the runs table lacks, and a run is never stored without being counted.

- Cells, `view = "cells"`, `"cells/task=T"`, `"cells/label=L"` or `"cells/task=T/label=L"`, entry
  `"mc/<model>/<context>"`: one item per model × context under that scope (the last scope is the
  model × context × task × label cell; the others are its sums, so a filter on task, label or
  neither reads one partition of at most models × contexts items). Each holds run counts (runs,
  completed, failed, timeout, graded), violation and node sums over graded runs, the exact cost
  sum, and `rules`, a map of rule id to [runs that broke it, failing elements] (~100 axe rules
  at most, a few KB), kept as one JSON string. The writer reads a run's cells and puts them back with the run added, each
  Put conditional on the cell's run count being the one it read (its version).
- Values, `view = "cells"`, entry `"v/<field>/<value>"`: one item per model, context, task and
  label that exists: the filter values, checked with one BatchGetItem. Written once, by the first
  run that has the value (conditional on being new); no count, so imports never contend on them.
- List entries, `view = "runs"` or `"runs/<field>=<value>/…"` for every subset of model, context,
  task and label (16 per run), and `"runs/rule=<rule>"` per rule the run broke; entry = the run's
  `started_key`. A filtered run list is one Query, newest first, of exactly the runs it shows.
  An entry is its keys, the run's cost (a Number, as in the summary) and `row`, one JSON string
  of the rest of what the list shows: one attribute rather than a dozen to write 20 times a run.
- A rule's entries (`"runs/rule=<rule>"`) also carry `rule_model`, `rule_context`, `rule_task` and
  `rule_label`, each `"<rule>/<value>"`: the keys of one sparse index per field
  (tables.RULE_FIELD_INDEXES), so a rule with another filter is one Query of that index, newest
  first. An entry per rule × value in the run's transaction would not fit (100 items at most);
  DynamoDB keeps the indexes from the entries the transaction writes. No other item has them.
- Every list entry of a graded run (its 16 and its rules') also carries `by_violations`, the run's
  violation count zero-padded then its entry (`"0003#<started_key>"`, unique, sorting by count then
  time): the key of one sparse index on `view` (tables.VIOLATIONS_INDEX), so any of these lists by
  most or fewest violations is one Query. An ungraded run has no count worth ordering by, no
  attribute, and is in no such list.

Values in keys are percent-encoded, so no model, task or label name can make two keys collide.
"""
from __future__ import annotations

import json
from collections import defaultdict
from decimal import Decimal
from itertools import combinations
from typing import TYPE_CHECKING
from urllib.parse import quote

from boto3.dynamodb.types import TypeSerializer

from groundchat.benchmark.runs import FILTER_FIELDS, CellTotals, RunSummary
from groundchat.store.run_items import decode_rules, encode_rules, iso, started_key
from groundchat.store.tables import RULE_FIELD_INDEXES, VIOLATIONS_INDEX
from groundchat.store import item_values

if TYPE_CHECKING:
    from groundchat.store.items import Item, PutAction, PutRequest, StoredItem, TransactAction

CELLS = "cells"
RUNS_VIEW = "runs"
CELL_PREFIX = "mc/"
VALUE_PREFIX = "v/"
COUNTERS = ("runs", "completed", "failed", "timeout", "graded", "violations", "nodes")
SCOPES = ((False, False), (True, False), (False, True), (True, True))  # (by task, by label)
LIST_SUBSETS: tuple[tuple[str, ...], ...] = tuple(
    subset for size in range(len(FILTER_FIELDS) + 1) for subset in combinations(FILTER_FIELDS, size)
)

# One transaction per run: summary, record, a cell per scope, a value per field, a list entry per
# subset, and one more list entry per rule broken. DynamoDB takes at most 100 items in one.
MAX_TRANSACTION_ITEMS = 100
FIXED_ITEMS_PER_RUN = 2 + len(SCOPES) + len(FILTER_FIELDS) + len(LIST_SUBSETS)
MAX_RULES_PER_RUN = MAX_TRANSACTION_ITEMS - FIXED_ITEMS_PER_RUN

_serialize = TypeSerializer().serialize

VIOLATIONS_ATTRIBUTE = "by_violations"  # the range key of tables.VIOLATIONS_INDEX
assert VIOLATIONS_INDEX.range_key == (VIOLATIONS_ATTRIBUTE, "S")
# axe-core has about 100 rules and a run may break at most MAX_RULES_PER_RUN of them: four digits
# keep the counts in number order as strings.
_COUNT_DIGITS = 4


def enc(value: str) -> str:
    return quote(value, safe="")


# ---- keys --------------------------------------------------------------------------------------


def cell_view(task: str | None = None, label: str | None = None) -> str:
    parts = [CELLS]
    if task is not None:
        parts.append(f"task={enc(task)}")
    if label is not None:
        parts.append(f"label={enc(label)}")
    return "/".join(parts)


def cell_entry(model: str, context: str) -> str:
    return f"{CELL_PREFIX}{enc(model)}/{enc(context)}"


def cell_prefix(model: str | None) -> str:
    return CELL_PREFIX if model is None else f"{CELL_PREFIX}{enc(model)}/"


def value_entry(field: str, value: str) -> str:
    return f"{VALUE_PREFIX}{field}/{enc(value)}"


def list_view(values: dict[str, str | None]) -> str:
    parts = [RUNS_VIEW] + [f"{name}={enc(value)}" for name in FILTER_FIELDS if (value := values.get(name)) is not None]
    return "/".join(parts)


def rule_view(rule: str) -> str:
    return f"{RUNS_VIEW}/rule={enc(rule)}"


def rule_field_key(rule: str, value: str) -> str:
    """The index key of a rule's runs under one value of a filter field."""
    return f"{enc(rule)}/{enc(value)}"


def rule_field_attribute(name: str) -> str:
    return RULE_FIELD_INDEXES[name].hash_key[0]


def violation_key(run: RunSummary) -> str | None:
    """The run's key in the violations index: its count, then its list key (so ties sort by time
    and no two runs share one). None for an ungraded run: it stays out of the index."""
    if not run.graded:
        return None
    return f"{run.violation_count:0{_COUNT_DIGITS}d}#{started_key(run)}"


def cell_views_of(run: RunSummary) -> list[str]:
    return [cell_view(run.task if by_task else None, run.label if by_label else None) for by_task, by_label in SCOPES]


# ---- items -------------------------------------------------------------------------------------


def cell_item(view: str, model: str, context: str, t: CellTotals) -> StoredItem:
    item: StoredItem = {"view": view, "entry": cell_entry(model, context), "model": model, "context": context}
    item.update({name: getattr(t, name) for name in COUNTERS})
    item["cost"] = t.cost
    rules = {rule: [n, t.rule_nodes.get(rule, 0)] for rule, n in t.rule_runs.items()}
    item["rules"] = json.dumps(rules, sort_keys=True, separators=(",", ":"))
    return item


def totals_from_item(item: StoredItem) -> CellTotals:
    def count(name: str) -> int:
        return item_values.whole(item, name, 0)

    t = CellTotals(runs=count("runs"), completed=count("completed"), failed=count("failed"), timeout=count("timeout"),
                   graded=count("graded"), violations=count("violations"), nodes=count("nodes"),
                   cost=item_values.amount(item, "cost", 0))
    for rule, (runs, nodes) in json.loads(item_values.optional_text(item, "rules") or "{}").items():
        t.rule_runs[rule], t.rule_nodes[rule] = runs, nodes
    return t


def value_item(field: str, value: str) -> StoredItem:
    return {"view": CELLS, "entry": value_entry(field, value), "field": field, "value": value}


def list_entry(view: str, run: RunSummary, rule: str | None = None) -> StoredItem:
    """What the run list shows of a run (and its rules, to filter on), under one list view; under
    a rule's view (`rule`), also its keys in the rule × field indexes."""
    row = {
        "run_id": run.run_id, "model": run.model, "context": run.context, "task": run.task, "label": run.label,
        "started_at": iso(run.started_at), "outcome": run.outcome, "graded": run.graded,
        "violation_count": run.violation_count, "node_count": run.node_count, "rules": encode_rules(run.rules),
    }
    item = {"view": view, "entry": started_key(run), "cost_usd": run.cost_usd,
            "row": json.dumps(row, sort_keys=True, separators=(",", ":"))}
    if (by_violations := violation_key(run)) is not None:
        item[VIOLATIONS_ATTRIBUTE] = by_violations
    if rule is not None:
        item.update({rule_field_attribute(name): rule_field_key(rule, getattr(run, name)) for name in FILTER_FIELDS})
    return item


def list_entries_of(run: RunSummary) -> list[StoredItem]:
    """The run's entry in every list it belongs to: one per subset of the filter fields, one per
    rule it broke."""
    entries = [list_entry(list_view({name: getattr(run, name) for name in subset}), run) for subset in LIST_SUBSETS]
    return entries + [list_entry(rule_view(rule), run, rule) for rule in sorted(run.rules)]


def summary_from_entry(item: StoredItem) -> RunSummary:
    row = json.loads(item_values.text(item, "row"))
    return RunSummary.model_validate({**row, "cost_usd": item["cost_usd"], "rules": decode_rules(row["rules"])})


# ---- the writes that count a run ----------------------------------------------------------------


def cell_keys(run: RunSummary) -> list[tuple[str, str]]:
    """The cells a run adds to, read (or remembered) before they are written."""
    return [(view, cell_entry(run.model, run.context)) for view in cell_views_of(run)]


def value_keys(run: RunSummary) -> list[tuple[str, str]]:
    return [(CELLS, value_entry(name, getattr(run, name))) for name in FILTER_FIELDS]


def view_writes(table: str, run: RunSummary, current: dict[tuple[str, str], StoredItem],
                new_values: list[tuple[str, str]]) -> tuple[list[TransactAction], list[StoredItem]]:
    """TransactWriteItems entries that add one run to every view, given its cells as they are
    (`current`; an absent one is missing) and which of its values are new: each cell put back with
    the run added, conditional on its run count being the one given; each new value and a new list
    entry per view, conditional on being new. In that order; also returns the cells as written."""
    delta = CellTotals.of_run(run)
    cells: list[StoredItem] = []
    writes: list[TransactAction] = []
    for key in cell_keys(run):
        seen = current.get(key)
        cell = cell_item(key[0], run.model, run.context, (totals_from_item(seen) if seen else CellTotals()).add(delta))
        cells.append(cell)
        writes.append(_put(table, cell, _as_read(seen)))
    fields = {value_entry(name, getattr(run, name)): name for name in FILTER_FIELDS}
    new: tuple[str, dict[str, str], Item] = ("attribute_not_exists(#k)", {"#k": "view"}, {})
    writes += [_put(table, value_item(fields[entry], getattr(run, fields[entry])), new) for _, entry in new_values]
    writes += [_put(table, entry, new) for entry in list_entries_of(run)]
    return writes, cells


def _as_read(seen: StoredItem | None) -> tuple[str, dict[str, str], Item]:
    if seen is None:
        return "attribute_not_exists(#k)", {"#k": "view"}, {}
    return "#r = :r", {"#r": "runs"}, {":r": _serialize(seen["runs"])}


def _put(table: str, item: StoredItem, condition: tuple[str, dict[str, str], Item]) -> PutAction:
    expression, names, values = condition
    put: PutRequest = {"TableName": table, "Item": serialized(item), "ConditionExpression": expression,
                           "ExpressionAttributeNames": names}
    if values:
        put["ExpressionAttributeValues"] = values
    return {"Put": put}


def serialized(item: StoredItem) -> Item:
    return {k: _serialize(v) for k, v in item.items()}


# ---- the views recomputed from the runs (repair) ----------------------------------------------


def expected_views(runs: list[RunSummary]) -> dict[tuple[str, str], StoredItem]:
    """Every view item the runs should have produced, by (view, entry): the brute force."""
    cells: dict[tuple[str, str, str], CellTotals] = defaultdict(CellTotals)
    values: set[tuple[str, str]] = set()
    out: dict[tuple[str, str], StoredItem] = {}
    for run in runs:
        delta = CellTotals.of_run(run)
        for view in cell_views_of(run):
            cells[(view, run.model, run.context)].add(delta)
        values.update((name, getattr(run, name)) for name in FILTER_FIELDS)
        for entry in list_entries_of(run):
            out[(item_values.text(entry, "view"), item_values.text(entry, "entry"))] = entry
    for (view, model, context), totals in cells.items():
        out[(view, cell_entry(model, context))] = cell_item(view, model, context, totals)
    for name, value in values:
        out[(CELLS, value_entry(name, value))] = value_item(name, value)
    return out
