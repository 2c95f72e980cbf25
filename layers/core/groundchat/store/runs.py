"""Runs of the benchmark on DynamoDB (the types are `groundchat.benchmark.runs`), and the named
queries the data tools fill in.

A run is two items in the runs table (store/run_items.py) and its share of the views in the
`run_views` table (store/run_views.py): cells that hold what its model × context × task × label
adds up to, the filter values, and an entry in each run list it belongs to. `RunWriter` writes all
of them in one TransactWriteItems per run, conditional on the run not being stored yet, so a
re-import changes nothing and the views always agree with the runs (`groundchat runs repair`
recomputes them to check).

Reads never touch every run: `compare_contexts` and `top_rules` sum the cells of one partition
(at most models × contexts items), the filter check is one BatchGetItem, `get_run` one GetItem,
and a run list, in any order, is read from the views by `RunLists` (store/run_lists.py). See
docs/engineering/benchmark-store.md.

There is no free-form query: callers name a query and fill its parameters (`RunFilter`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from boto3.dynamodb.conditions import Key

from groundchat.benchmark.runs import (
    FILTER_FIELDS,
    NEWEST,
    CellTotals,
    Order,
    OverviewRow,
    RuleCounts,
    Run,
    RunFilter,
    RunSummary,
    context_sort_key,
    overview_from_cells,
    rule_counts_from,
)
from groundchat.store import item_values
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
    rule_view,
    totals_from_item,
    value_entry,
)
from groundchat.store.run_lists import RunLists, UnsupportedOrder, pages, refuse_unsupported  # noqa: F401  (UnsupportedOrder re-exported)
from groundchat.store.run_writer import RunWriter, ViewsOutOfStep, WriteReport  # noqa: F401  (re-exported)
from groundchat.store.tables import RUN_VIEWS, RUNS

if TYPE_CHECKING:
    from groundchat.store.items import StoredItem, TableRequest


@dataclass(frozen=True)
class RunPage:
    """One page of a run list, in its order, and where it sits in the whole list."""

    runs: list[RunSummary]
    total: int  # every run the filter matches, from the views' counts
    newer: bool  # runs newer than the first one shown match too
    older: bool  # runs older than the last one shown match too
    first_key: str | None  # the list's sort keys of the first and last run shown (the violations
    last_key: str | None  # index's key in that order): where the previous and the next page start


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
        self._lists = RunLists(self._views)
        self._facets: tuple[float, dict[str, list[str]]] | None = None

    async def overview(self, flt: RunFilter | None = None) -> list[OverviewRow]:
        return overview_from_cells(await self._cells(_no_outcome(flt or RunFilter())))

    async def overview_with_contexts(self, flt: RunFilter | None = None) -> tuple[list[OverviewRow], list[OverviewRow]]:
        """Per model × context, and per context level over every model the filter admits: both
        summed from one read of the cells."""
        cells = await self._cells(_no_outcome(flt or RunFilter()))
        return overview_from_cells(cells), overview_from_cells(cells, per_model=False)

    async def rule_counts(self, flt: RunFilter | None = None, limit: int = 10) -> RuleCounts:
        total = CellTotals()
        for totals in (await self._cells(_no_outcome(flt or RunFilter()))).values():
            total.add(totals)
        return rule_counts_from(total, limit)

    async def list_runs(self, flt: RunFilter | None = None, limit: int = 20,
                        order: Order = NEWEST) -> tuple[list[RunSummary], bool]:
        """In `order` (newest first by default). Returns the runs and whether more matched than
        the limit. UnsupportedOrder for an order this filter cannot be listed in (`order_problem`)."""
        flt = flt or RunFilter()
        collect, _ = self._lists.reader(flt, order)
        found = await self._dynamo.run(collect, flt, limit + 1)
        return found[:limit], len(found) > limit

    async def page_runs(self, flt: RunFilter | None = None, limit: int = 20, *, after: str | None = None,
                        before: str | None = None, order: Order = NEWEST) -> RunPage:
        """`limit` runs in `order`: the first, those just past the key `after`, or those just
        before the key `before` (keys are a page's `first_key` / `last_key`, in that order's list).
        One Query of the list (as `list_runs`) and one of the cells for the count. `newer` and
        `older` name the list's two ends: earlier and later in its order."""
        flt = flt or RunFilter()
        collect, key = self._lists.reader(flt, order)
        if before is not None:
            found = await self._dynamo.run(collect, flt, limit + 1, before, False)
            runs, newer, older = found[:limit][::-1], len(found) > limit, True
        else:
            found = await self._dynamo.run(collect, flt, limit + 1, after)
            runs, newer, older = found[:limit], after is not None, len(found) > limit
        keys = [key(run) for run in runs]
        return RunPage(runs=runs, total=await self.count_runs(flt, order), newer=newer, older=older,
                       first_key=keys[0] if keys else None, last_key=keys[-1] if keys else None)

    async def count_runs(self, flt: RunFilter | None = None, order: Order = NEWEST) -> int:
        """How many runs match: summed from the cells of one partition, never by reading the runs
        (with a rule and an outcome, see `RunLists.outcome_counts` for the one case that reads some). In a
        violations order only graded runs are listed, so only they are counted."""
        flt = flt or RunFilter()
        if order != NEWEST:
            refuse_unsupported(flt, order)
            cells = (await self._cells(flt)).values()
            return sum(t.graded if flt.rule is None else t.rule_runs.get(flt.rule, 0) for t in cells)
        if flt.outcome is not None:
            return await self._dynamo.run(lambda: sum(self._lists.outcome_counts(flt, self._lists.cells(flt)).values()))
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
        for item in await self._dynamo.run(lambda: list(self._lists.query(CELLS))):
            entry = item_values.text(item, "entry")
            if entry.startswith(VALUE_PREFIX):
                values[item_values.text(item, "field")].add(item_values.text(item, "value"))
            elif entry.startswith(CELL_PREFIX):
                values["rule"].update(r for r, n in totals_from_item(item).rule_runs.items() if n)
        out = {name: sorted(vals) for name, vals in values.items()}
        out["context"] = sorted(values["context"], key=context_sort_key)
        # An empty store is not cached: the sample or an import is probably about to fill it.
        self._facets = (now, out) if values["model"] else None
        return out

    async def all_runs(self) -> list[RunSummary]:
        """Every run's summary, newest first, from the runs table itself (what repair checks)."""
        return await self._dynamo.run(lambda: [summary_from_item(i) for i in self._summaries()])

    async def _cells(self, flt: RunFilter) -> dict[tuple[str, str], CellTotals]:
        return await self._dynamo.run(self._lists.cells, flt)

    # ---- in a worker thread ----

    def _missing(self, flt: RunFilter) -> list[str]:
        wanted = {name: value for name, value in flt.as_params().items() if name in FILTER_FIELDS}
        found: set[str] = set()
        if wanted:
            keys: list[StoredItem] = [{"view": CELLS, "entry": value_entry(name, value)} for name, value in wanted.items()]
            table = self._views.name
            resp = self._dynamo.resource.batch_get_item(RequestItems={table: {"Keys": keys, "ProjectionExpression": "#f",
                                                                              "ExpressionAttributeNames": {"#f": "field"}}})
            while True:
                found.update(item_values.text(item, "field") for item in resp.get("Responses", {}).get(table, []))
                unread = resp.get("UnprocessedKeys")
                if not unread:
                    break
                resp = self._dynamo.resource.batch_get_item(RequestItems=unread)
        if flt.rule is not None and next(self._lists.query(rule_view(flt.rule), page=1), None) is not None:
            found.add("rule")
        # An outcome is one of three words, checked where it is parsed; no view holds it as a value.
        return [name for name in flt.as_params() if name not in found and name != "outcome"]

    def _summaries(self) -> Iterator[StoredItem]:
        kwargs: TableRequest = {"IndexName": "by_started", "KeyConditionExpression": Key("kind").eq(KIND), "ScanIndexForward": False}
        yield from pages(self._table.query, kwargs)


def _no_outcome(flt: RunFilter) -> RunFilter:
    if flt.outcome is not None:
        raise ValueError("the aggregates count each outcome side by side; they take no outcome filter")
    return flt


# The name the app's composition (services.py) builds the tools' read-only view by.
RunsStore = RunQueries
