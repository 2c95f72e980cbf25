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
newest first (of the table, or for a rule with other filters of a rule × field index), `get_run`
one GetItem. A list by outcome (completed, failed, timeout) is counted from the cells, which hold
each outcome's runs, and read from the lists above with the outcome checked in code, in pages sized
from those counts; a rare outcome from the lists of only the models × contexts that have it. A
list by most or fewest violations is one Query of the violations index (graded runs only), keyed by
the same lists. See docs/engineering/benchmark-store.md.

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
    rule_field_attribute,
    rule_field_key,
    rule_view,
    summary_from_entry,
    totals_from_item,
    value_entry,
)
from groundchat.store.run_list_reads import (  # noqa: F401  (UnsupportedOrder re-exported)
    _SHOWN, ListReads, UnsupportedOrder, _first_matches, _page_size, _pages, refuse_unsupported,
)
from groundchat.store.run_writer import RunWriter, ViewsOutOfStep, WriteReport  # noqa: F401  (re-exported)
from groundchat.store.tables import RULE_FIELD_INDEXES, RUN_VIEWS, RUNS

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


class RunQueries(ListReads):
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
        collect, _ = self._reader(flt, order)
        found = await self._dynamo.run(collect, flt, limit + 1)
        return found[:limit], len(found) > limit

    async def page_runs(self, flt: RunFilter | None = None, limit: int = 20, *, after: str | None = None,
                        before: str | None = None, order: Order = NEWEST) -> RunPage:
        """`limit` runs in `order`: the first, those just past the key `after`, or those just
        before the key `before` (keys are a page's `first_key` / `last_key`, in that order's list).
        One Query of the list (as `list_runs`) and one of the cells for the count. `newer` and
        `older` name the list's two ends: earlier and later in its order."""
        flt = flt or RunFilter()
        collect, key = self._reader(flt, order)
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
        (with a rule and an outcome, see `_outcome_counts` for the one case that reads some). In a
        violations order only graded runs are listed, so only they are counted."""
        flt = flt or RunFilter()
        if order != NEWEST:
            refuse_unsupported(flt, order)
            cells = (await self._cells(flt)).values()
            return sum(t.graded if flt.rule is None else t.rule_runs.get(flt.rule, 0) for t in cells)
        if flt.outcome is not None:
            return await self._dynamo.run(lambda: sum(self._outcome_counts(flt, self._cells_sync(flt)).values()))
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

    async def _cells(self, flt: RunFilter) -> dict[tuple[str, str], CellTotals]:
        return await self._dynamo.run(self._cells_sync, flt)

    # ---- in a worker thread ----

    def _cells_sync(self, flt: RunFilter) -> dict[tuple[str, str], CellTotals]:
        """The cells of one partition (the filter's task and label), narrowed to its model and
        context: at most models × contexts items."""
        out = {}
        for item in self._query(cell_view(flt.task, flt.label), cell_prefix(flt.model)):
            if all(getattr(flt, name) in (None, item[name]) for name in ("model", "context")):
                out[(item["model"], item["context"])] = totals_from_item(item)
        return out

    def _missing(self, flt: RunFilter) -> list[str]:
        wanted = {name: value for name, value in flt.as_params().items() if name in FILTER_FIELDS}
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
        # An outcome is one of three words, checked where it is parsed; no view holds it as a value.
        return [name for name in flt.as_params() if name not in found and name != "outcome"]

    def _collect(self, flt: RunFilter, want: int, start: str | None = None, newest_first: bool = True) -> list[RunSummary]:
        """Up to `want` matching runs in list order, past the list key `start` when given (older
        than it newest first, newer than it oldest first)."""
        if flt.outcome is not None:
            return self._collect_outcome(flt, want, start, newest_first)
        values = {name: getattr(flt, name) for name in FILTER_FIELDS}
        others = {name: value for name, value in values.items() if value is not None}
        if flt.rule is None or not others:
            view = list_view(values) if flt.rule is None else rule_view(flt.rule)
            entries = self._query(view, newest_first=newest_first, page=want, stop=want, start=start, shown=True)
            return [summary_from_entry(i) for i in entries]
        # A rule and other filters: the rule's runs under one of the other values, from that field's
        # index (store/run_views.py). In AWS an index is read eventually consistent (it cannot be
        # read otherwise), so a run imported a moment ago may join these lists a moment later;
        # every other list is read from the table.
        if len(others) == 1:  # the index lists exactly the matches: one page, as a plain list
            [(name, value)] = others.items()
            found = self._query_rule_field(flt.rule, name, value, newest_first, page=want, stop=want, start=start)
            return [summary_from_entry(i) for i in found]
        # More fields: the cells say how many runs match, and how many each list holding them all
        # has: each field's rule index, and the list of the other fields' runs (its rule checked in
        # code). Read the smallest in pages sized to hold enough matches, checking the rest in code.
        name, size, matches = self._narrowest(flt, others)
        if not matches:
            return []
        enough = min(want, matches)
        page = _page_size(enough, size, matches)
        if name is None:
            items = self._query(list_view(values), newest_first=newest_first, page=page, start=start, shown=True)
        else:
            items = self._query_rule_field(flt.rule, name, others[name], newest_first, page=page, start=start)
        return _first_matches(items, flt, enough)


    def _narrowest(self, flt: RunFilter, others: dict[str, str]) -> tuple[str | None, int, int]:
        """The smallest list holding every match (a field whose rule index has the fewest entries
        under its value, or None: the other fields' own list, when it has fewer, as for a rule
        most runs break), its size, and how many runs match the whole filter: summed from at most
        one cell partition per field and one for the whole filter (each at most models × contexts
        items)."""
        read: dict[str, list[tuple[StoredItem, CellTotals]]] = {}

        def cells(view: str) -> list[tuple[StoredItem, CellTotals]]:
            if view not in read:
                read[view] = self._cell_items(view)
            return read[view]

        def rule_runs(cells_: list[tuple[StoredItem, CellTotals]]) -> int:
            return sum(t.rule_runs.get(flt.rule, 0) for _, t in cells_)

        sizes: dict[str | None, int] = {}
        for name, value in others.items():
            if name in ("model", "context"):  # the cells of every run, one per model × context
                sizes[name] = rule_runs([(i, t) for i, t in cells(cell_view()) if i[name] == value])
            else:
                sizes[name] = rule_runs(cells(cell_view(**{name: value})))
        scoped = [(i, t) for i, t in cells(cell_view(flt.task, flt.label))
                  if all(getattr(flt, n) in (None, i[n]) for n in ("model", "context"))]
        sizes[None] = sum(t.runs for _, t in scoped)
        name = min(sizes, key=lambda n: sizes[n])
        return name, sizes[name], rule_runs(scoped)

    def _cell_items(self, view: str) -> list[tuple[StoredItem, CellTotals]]:
        return [(item, totals_from_item(item)) for item in self._query(view, CELL_PREFIX)]

    def _query(self, view: str, prefix: str | None = None, newest_first: bool = False, page: int | None = None,
               stop: int | None = None, start: str | None = None, shown: bool = False,
               beyond: str | None = None) -> Iterator[StoredItem]:
        """`start` is a key of this list to go on after; `beyond` any list key, the entries past it
        in the reading order (a key condition, so the key need not be in this list)."""
        cond = Key("view").eq(view)
        if prefix:
            cond = cond & Key("entry").begins_with(prefix)
        elif beyond is not None:
            cond = cond & (Key("entry").lt(beyond) if newest_first else Key("entry").gt(beyond))
        kwargs: TableRequest = {"KeyConditionExpression": cond, "ScanIndexForward": not newest_first,
                                  **(_SHOWN if shown else {})}
        if page is not None:
            kwargs["Limit"] = page
        if start is not None:
            kwargs["ExclusiveStartKey"] = {"view": view, "entry": start}
        yield from _pages(self._views.query, kwargs, stop)

    def _query_rule_field(self, rule: str, name: str, value: str, newest_first: bool, page: int,
                          stop: int | None = None, start: str | None = None) -> Iterator[StoredItem]:
        """The rule's list entries whose `name` is `value`, from that field's index, in list order."""
        attribute, key = rule_field_attribute(name), rule_field_key(rule, value)
        kwargs: TableRequest = {"IndexName": RULE_FIELD_INDEXES[name].name, "KeyConditionExpression": Key(attribute).eq(key),
                                  "ScanIndexForward": not newest_first, "Limit": page, **_SHOWN}
        if start is not None:
            # An index's start key names the item to go on after: its index key and the table's key.
            kwargs["ExclusiveStartKey"] = {attribute: key, "view": rule_view(rule), "entry": start}
        yield from _pages(self._views.query, kwargs, stop)

    def _summaries(self) -> Iterator[StoredItem]:
        kwargs = {"IndexName": "by_started", "KeyConditionExpression": Key("kind").eq(KIND), "ScanIndexForward": False}
        yield from _pages(self._table.query, kwargs)


def _no_outcome(flt: RunFilter) -> RunFilter:
    if flt.outcome is not None:
        raise ValueError("the aggregates count each outcome side by side; they take no outcome filter")
    return flt


# The name the app's composition (services.py) builds the tools' read-only view by.
RunsStore = RunQueries
