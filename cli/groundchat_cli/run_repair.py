"""`groundchat runs repair`: the runs' views recomputed from the runs themselves and compared with
what is stored, item by item; with `fix`, each difference is rewritten.

The views are read first, then the runs: a run imported in between is in the runs but not yet in
what was read of the views, and shows as a difference that a second check no longer finds. A fix
never overwrites such an import: every fix is conditional on the item still being as it was read
(a cell by its run count, a value or list entry by its content), so a racing import wins and the
fix is reported as skipped. It is an operator's command: it reads every run and scans the views.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Iterator

from boto3.dynamodb.conditions import Attr, Key
from botocore.exceptions import ClientError

from groundchat.store.dynamo import Dynamo, condition_failed
from groundchat.store.run_items import KIND, summary_from_item
from groundchat.store.run_views import CELL_PREFIX, VALUE_PREFIX, expected_views
from groundchat.store.tables import RUN_VIEWS, RUNS

ItemKey = tuple[str, str]
_SHOWN = 20  # differences listed by name; the rest are counted


@dataclass
class RepairReport:
    runs: int = 0
    expected: int = 0  # view items the runs call for
    stored: int = 0
    missing: list[ItemKey] = field(default_factory=list)
    extra: list[ItemKey] = field(default_factory=list)
    differing: list[ItemKey] = field(default_factory=list)
    fixed: int = 0
    skipped: int = 0  # changed since they were read (an import ran meanwhile): left alone

    @property
    def clean(self) -> bool:
        return not (self.missing or self.extra or self.differing)

    @property
    def fixed_all(self) -> bool:
        return self.fixed == len(self.missing) + len(self.extra) + len(self.differing)

    def lines(self) -> list[str]:
        out = [f"{self.runs} run(s); {self.expected} view item(s) expected, {self.stored} stored"]
        if self.clean:
            return out + ["no difference: the aggregates and run lists agree with the runs"]
        for name, keys in (("missing", self.missing), ("extra", self.extra), ("differing", self.differing)):
            if keys:
                out.append(f"{name}: {len(keys)}")
                out += [f"  {view} {entry}" for view, entry in keys[:_SHOWN]]
                if len(keys) > _SHOWN:
                    out.append(f"  … and {len(keys) - _SHOWN} more")
        if self.fixed or self.skipped:
            out.append(f"fixed: {self.fixed}; skipped (changed meanwhile, check again): {self.skipped}")
        return out


def check_views(dynamo: Dynamo, fix: bool = False) -> RepairReport:
    views = dynamo.table(RUN_VIEWS)
    stored = {(item["view"], item["entry"]): item for item in _pages(views.scan, {"ConsistentRead": True})}
    summaries = [summary_from_item(item) for item in _pages(dynamo.table(RUNS).query, {
        "IndexName": "by_started", "KeyConditionExpression": Key("kind").eq(KIND)})]
    expected = expected_views(summaries)
    report = RepairReport(runs=len(summaries), expected=len(expected), stored=len(stored))
    for key, item in expected.items():
        if key not in stored:
            report.missing.append(key)
        elif _normal(stored[key]) != _normal(item):
            report.differing.append(key)
    report.extra = [key for key in stored if key not in expected]
    if fix:
        for key in report.missing:
            _write(report, views.put_item, Item=expected[key], ConditionExpression=Attr("view").not_exists())
        for key in report.differing:
            _write(report, views.put_item, Item=expected[key], ConditionExpression=_as_read(stored[key]))
        for key in report.extra:
            _write(report, views.delete_item, Key={"view": key[0], "entry": key[1]}, ConditionExpression=_as_read(stored[key]))
    return report


def _as_read(item: dict[str, Any]) -> Any:
    """The item has not changed since it was read: its run count (a cell), value (a value) or row
    (a list entry)."""
    entry = item["entry"]
    name = "runs" if entry.startswith(CELL_PREFIX) else "value" if entry.startswith(VALUE_PREFIX) else "row"
    return Attr(name).eq(item[name]) if name in item else Attr(name).not_exists()


def _write(report: RepairReport, call: Any, **kwargs: Any) -> None:
    try:
        call(**kwargs)
    except ClientError as exc:
        if not condition_failed(exc):
            raise
        report.skipped += 1
        return
    report.fixed += 1


def _normal(item: dict[str, Any]) -> dict[str, Any]:
    """Numbers compared by value (a stored 0.0250 is the 0.025 computed), everything else as is."""
    return {k: Decimal(v) if isinstance(v, (int, Decimal)) and not isinstance(v, bool) else v for k, v in item.items()}


def _pages(call: Any, kwargs: dict[str, Any]) -> Iterator[dict[str, Any]]:
    while True:
        page = call(**kwargs)
        yield from page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return
        kwargs = {**kwargs, "ExclusiveStartKey": page["LastEvaluatedKey"]}
