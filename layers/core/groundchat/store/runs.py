"""Runs of the benchmark on DynamoDB (the types are `groundchat.benchmark.runs`), and the named
queries the data tools fill in.

A run is two items in the runs table (store/run_items.py) and its share of the views in the
`run_views` table (store/run_views.py): cells that hold what its model × context × task × label
adds up to, the filter values, and an entry in each run list it belongs to. `RunWriter` writes all
of them in one TransactWriteItems per run, conditional on the run not being stored yet, so a
re-import changes nothing and the views always agree with the runs (`groundchat runs repair`
recomputes them to check).

Reads never touch every run: `compare_contexts` and `top_rules` sum the cells of one partition
(at most models × contexts items), the filter check is one BatchGetItem, the run list one Query
newest first, `get_run` one GetItem. See docs/engineering/benchmark-store.md.

There is no free-form query: callers name a query and fill its parameters (`RunFilter`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterator

from boto3.dynamodb.conditions import Key

from groundchat.benchmark.runs import (
    FILTER_FIELDS,
    CellTotals,
    OverviewRow,
    RuleCounts,
    Run,
    RunFilter,
    RunSummary,
    context_sort_key,
    overview_from_cells,
    rule_counts_from,
)
from groundchat.store.dynamo import Dynamo
from groundchat.store.run_items import (  # noqa: F401  (re-exported: the import and its tests use them)
    DETAIL,
    KIND,
    MAX_DETAIL_CHARS,
    MAX_HTML_CHARS,
    MAX_NODES_PER_VIOLATION,
    MAX_SUMMARY_CHARS,
    MAX_TARGET_CHARS,
    SUMMARY,
    decode_rules,
    detail_item as _detail_item,
    encode_rules,
    fit_violations,
    record_item,
    run_from_items,
    run_from_record,
    started_key,
    summary_from_item,
    summary_item,
)
from groundchat.store.run_views import (
    CELL_PREFIX,
    CELLS,
    VALUE_PREFIX,
    cell_prefix,
    cell_view,
    list_view,
    rule_view,
    summary_from_entry,
    totals_from_item,
    value_entry,
)
from groundchat.store.run_writer import RunWriter, ViewsOutOfStep, WriteReport  # noqa: F401  (re-exported)
from groundchat.store.tables import RUN_VIEWS, RUNS

# A run list with a rule and other filters reads one partition and filters the other in code.
_PAGE = 200


@dataclass(frozen=True)
class RunPage:
    """One page of a run list, newest first, and where it sits in the whole list."""

    runs: list[RunSummary]
    total: int  # every run the filter matches, from the views' counts
    newer: bool  # runs newer than the first one shown match too
    older: bool  # runs older than the last one shown match too
    first_key: str | None  # the list's sort keys of the first and last run shown: where the
    last_key: str | None  # previous and the next page start


# ---- named queries -----------------------------------------------------------------------------


class RunQueries:
    """Read-only: the named, parameterised queries the data tools may run. Nothing else."""

    # The offline answerer reads the facets on every question; they change only when runs are
    # imported, so a short cache saves a Query per question. The tools check filters exactly.
    FACETS_TTL_SECONDS = 30.0

    def __init__(self, dynamo: Dynamo) -> None:
        self._dynamo = dynamo
        self._table = dynamo.table(RUNS)
        self._views = dynamo.table(RUN_VIEWS)
        self._facets: tuple[float, dict[str, list[str]]] | None = None

    async def overview(self, flt: RunFilter | None = None) -> list[OverviewRow]:
        return overview_from_cells(await self._cells(flt or RunFilter()))

    async def overview_with_contexts(self, flt: RunFilter | None = None) -> tuple[list[OverviewRow], list[OverviewRow]]:
        """Per model × context, and per context level over every model the filter admits: both
        summed from one read of the cells."""
        cells = await self._cells(flt or RunFilter())
        return overview_from_cells(cells), overview_from_cells(cells, per_model=False)

    async def rule_counts(self, flt: RunFilter | None = None, limit: int = 10) -> RuleCounts:
        total = CellTotals()
        for totals in (await self._cells(flt or RunFilter())).values():
            total.add(totals)
        return rule_counts_from(total, limit)

    async def list_runs(self, flt: RunFilter | None = None, limit: int = 20) -> tuple[list[RunSummary], bool]:
        """Newest first. Returns the runs and whether more matched than the limit."""
        found = await self._dynamo.run(self._collect, flt or RunFilter(), limit + 1)
        return found[:limit], len(found) > limit

    async def page_runs(self, flt: RunFilter | None = None, limit: int = 20, *, after: str | None = None,
                        before: str | None = None) -> RunPage:
        """`limit` runs newest first: the newest, those just older than the key `after`, or those
        just newer than the key `before` (keys are a page's `first_key` / `last_key`). One Query
        of the list (as `list_runs`) and one of the cells for the count."""
        flt = flt or RunFilter()
        if before is not None:
            found = await self._dynamo.run(self._collect, flt, limit + 1, before, False)
            runs, newer, older = found[:limit][::-1], len(found) > limit, True
        else:
            found = await self._dynamo.run(self._collect, flt, limit + 1, after)
            runs, newer, older = found[:limit], after is not None, len(found) > limit
        keys = [started_key(run) for run in runs]
        return RunPage(runs=runs, total=await self.count_runs(flt), newer=newer, older=older,
                       first_key=keys[0] if keys else None, last_key=keys[-1] if keys else None)

    async def count_runs(self, flt: RunFilter | None = None) -> int:
        """How many runs match: summed from the cells of one partition, never by reading the runs."""
        flt = flt or RunFilter()
        cells = (await self._cells(flt)).values()
        if flt.rule is None:
            return sum(t.runs for t in cells)
        return sum(t.rule_runs.get(flt.rule, 0) for t in cells)

    async def get_run(self, run_id: str) -> Run | None:
        got = await self._dynamo.run(self._table.get_item, Key={"run_id": run_id, "part": DETAIL})
        record = got.get("Item")
        if record is not None and "record" in record:
            return run_from_record(record)
        # Stored by the first writer: the detail holds the violations alone, the summary the rest.
        got = await self._dynamo.run(self._table.get_item, Key={"run_id": run_id, "part": SUMMARY})
        return run_from_items(got["Item"], record) if "Item" in got else None

    async def missing(self, flt: RunFilter) -> list[str]:
        """The filter's fields whose value no stored run has (empty: every value exists)."""
        return await self._dynamo.run(self._missing, flt)

    async def facets(self) -> dict[str, list[str]]:
        """The values each filter can take, for telling a caller what exists."""
        now = time.monotonic()
        if self._facets is not None and now - self._facets[0] < self.FACETS_TTL_SECONDS:
            return self._facets[1]
        values: dict[str, set[str]] = {name: set() for name in (*FILTER_FIELDS, "rule")}
        for item in await self._dynamo.run(lambda: list(self._query(CELLS))):
            if item["entry"].startswith(VALUE_PREFIX):
                values[item["field"]].add(item["value"])
            elif item["entry"].startswith(CELL_PREFIX):
                values["rule"].update(r for r, n in totals_from_item(item).rule_runs.items() if n)
        out = {name: sorted(vals) for name, vals in values.items()}
        out["context"] = sorted(values["context"], key=context_sort_key)
        # An empty store is not cached: the sample or an import is probably about to fill it.
        self._facets = (now, out) if values["model"] else None
        return out

    async def all_runs(self) -> list[RunSummary]:
        """Every run's summary, newest first, from the runs table itself (what repair checks)."""
        return await self._dynamo.run(lambda: [summary_from_item(i) for i in self._summaries()])

    # ---- in a worker thread ----

    async def _cells(self, flt: RunFilter) -> dict[tuple[str, str], CellTotals]:
        return await self._dynamo.run(self._cells_sync, flt)

    def _cells_sync(self, flt: RunFilter) -> dict[tuple[str, str], CellTotals]:
        """The cells of one partition (the filter's task and label), narrowed to its model and
        context: at most models × contexts items."""
        out = {}
        for item in self._query(cell_view(flt.task, flt.label), cell_prefix(flt.model)):
            if all(getattr(flt, name) in (None, item[name]) for name in ("model", "context")):
                out[(item["model"], item["context"])] = totals_from_item(item)
        return out

    def _missing(self, flt: RunFilter) -> list[str]:
        wanted = {name: value for name, value in flt.as_params().items() if name != "rule"}
        found: set[str] = set()
        if wanted:
            keys = [{"view": CELLS, "entry": value_entry(name, value)} for name, value in wanted.items()]
            table = self._views.name
            resp = self._dynamo.resource.batch_get_item(RequestItems={table: {"Keys": keys, "ProjectionExpression": "#f",
                                                                              "ExpressionAttributeNames": {"#f": "field"}}})
            while True:
                found.update(item["field"] for item in resp.get("Responses", {}).get(table, []))
                if not resp.get("UnprocessedKeys"):
                    break
                resp = self._dynamo.resource.batch_get_item(RequestItems=resp["UnprocessedKeys"])
        if flt.rule is not None and next(self._query(rule_view(flt.rule), page=1), None) is not None:
            found.add("rule")
        return [name for name in flt.as_params() if name not in found]

    def _collect(self, flt: RunFilter, want: int, start: str | None = None, newest_first: bool = True) -> list[RunSummary]:
        """Up to `want` matching runs in list order, past the list key `start` when given (older
        than it newest first, newer than it oldest first)."""
        values = {name: getattr(flt, name) for name in FILTER_FIELDS}
        if flt.rule is None or not any(v is not None for v in values.values()):
            view = list_view(values) if flt.rule is None else rule_view(flt.rule)
            return [summary_from_entry(i) for i in self._query(view, newest_first=newest_first, page=want, stop=want, start=start)]
        # A rule and other filters: the cells say how many runs match and how large each of the two
        # partitions is; read the smaller one newest first, in pages sized to hold enough matches,
        # until every match (or enough) is found.
        everything = self._cell_items(RunFilter())
        scoped = everything if flt.task is None and flt.label is None else self._cell_items(flt)
        narrowed = [t for item, t in scoped if all(getattr(flt, n) in (None, item[n]) for n in ("model", "context"))]
        matches = sum(t.rule_runs.get(flt.rule, 0) for t in narrowed)
        if not matches:
            return []
        size = min(sum(t.runs for t in narrowed), sum(t.rule_runs.get(flt.rule, 0) for _, t in everything))
        view = list_view(values) if size == sum(t.runs for t in narrowed) else rule_view(flt.rule)
        enough = min(want, matches)
        out: list[RunSummary] = []
        for item in self._query(view, newest_first=newest_first, page=min(_PAGE, size, -(-enough * size // matches) + 1), start=start):
            run = summary_from_entry(item)
            if flt.matches(run):
                out.append(run)
                if len(out) >= enough:
                    break
        return out

    def _cell_items(self, flt: RunFilter) -> list[tuple[dict[str, Any], CellTotals]]:
        return [(item, totals_from_item(item)) for item in self._query(cell_view(flt.task, flt.label), CELL_PREFIX)]

    def _query(self, view: str, prefix: str | None = None, newest_first: bool = False,
               page: int | None = None, stop: int | None = None, start: str | None = None) -> Iterator[dict[str, Any]]:
        cond = Key("view").eq(view)
        kwargs: dict[str, Any] = {"KeyConditionExpression": cond & Key("entry").begins_with(prefix) if prefix else cond,
                                  "ScanIndexForward": not newest_first}
        if page is not None:
            kwargs["Limit"] = page
        if start is not None:
            kwargs["ExclusiveStartKey"] = {"view": view, "entry": start}
        yield from _pages(self._views.query, kwargs, stop)

    def _summaries(self) -> Iterator[dict[str, Any]]:
        kwargs = {"IndexName": "by_started", "KeyConditionExpression": Key("kind").eq(KIND), "ScanIndexForward": False}
        yield from _pages(self._table.query, kwargs)


def _pages(query: Any, kwargs: dict[str, Any], stop: int | None = None) -> Iterator[dict[str, Any]]:
    served = 0
    while True:
        page = query(**kwargs)
        for item in page.get("Items", []):
            yield item
            served += 1
            if stop is not None and served >= stop:
                return
        if "LastEvaluatedKey" not in page:
            return
        kwargs = {**kwargs, "ExclusiveStartKey": page["LastEvaluatedKey"]}


# The name the app's composition (services.py) builds the tools' read-only view by.
RunsStore = RunQueries
