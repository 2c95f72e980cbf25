"""The run lists: how a list of runs under any filter, in any order, is read from the views
(store/run_views.py), and the cells that count it. `RunQueries` (store/runs.py) names the queries;
this reads them.

A plain list is one Query newest first (of the table, or for a rule with other filters of a
rule × field index). A list by outcome is counted from the cells, which hold each outcome's runs,
and read from the lists the filter without its outcome reads, the outcome checked in code, in pages
sized from those counts; a rare outcome from the lists of only the models × contexts that have it.
A list by violations is one Query of the sparse violations index. See
docs/engineering/benchmark-store.md.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator

from boto3.dynamodb.conditions import Key

from groundchat.benchmark.runs import FILTER_FIELDS, NEWEST, CellTotals, Order, RunFilter, RunSummary, order_problem
from groundchat.store.run_items import started_key
from groundchat.store.run_views import (
    CELL_PREFIX,
    VIOLATIONS_ATTRIBUTE,
    cell_prefix,
    cell_view,
    list_view,
    rule_field_attribute,
    rule_field_key,
    rule_view,
    summary_from_entry,
    totals_from_item,
    violation_key,
)
from groundchat.store.tables import RULE_FIELD_INDEXES, VIOLATIONS_INDEX

if TYPE_CHECKING:
    from groundchat.store.items import StoredItem, Table, TableRead, TableRequest

# A run list with a rule and two or more other filters, or with an outcome, reads one list and
# checks the other fields in code, in pages of at most this many entries.
_PAGE = 200
# A Query is billed at least one read unit (4 KB), about what ten list entries cost: the weight of
# each extra Query when a list by outcome is read from several lists rather than one.
_QUERY_ENTRIES = 10
_RULE_LIST = "rule"  # a list by outcome read from the rule's own list (see `_collect_outcome`)
# What a run list reads of each entry: what it shows (the keys and index keys stay behind).
_SHOWN = {"ProjectionExpression": "#row, #cost", "ExpressionAttributeNames": {"#row": "row", "#cost": "cost_usd"}}


class UnsupportedOrder(ValueError):
    """A list order the views cannot serve with this filter without reading every run (one line)."""


def refuse_unsupported(flt: RunFilter, order: Order) -> None:
    """UnsupportedOrder, saying why, for an order this filter cannot be listed in (`order_problem`)."""
    problem = order_problem(flt, order)
    if problem is not None:
        raise UnsupportedOrder(problem)


class RunLists:
    """Reads the run views' lists, cells and indexes (synchronous: the store runs it in a worker thread)."""

    def __init__(self, views: Table) -> None:
        self._views = views  # the run_views table (boto3's Table): read at each call, so a test may watch it

    def reader(self, flt: RunFilter, order: Order) -> tuple[Callable[..., list[RunSummary]], Callable[[RunSummary], str | None]]:
        """How a list in `order` is read (`collect(flt, want, start, forward)`) and the key of a
        run in it (what a page token holds)."""
        if order == NEWEST:
            return self._collect, started_key
        refuse_unsupported(flt, order)
        most = order == "most_violations"

        def collect(flt: RunFilter, want: int, start: str | None = None, forward: bool = True) -> list[RunSummary]:
            return self._collect_by_violations(flt, want, start, descending=most == forward)

        return collect, violation_key

    def cells(self, flt: RunFilter) -> dict[tuple[str, str], CellTotals]:
        """The cells of one partition (the filter's task and label), narrowed to its model and
        context: at most models × contexts items."""
        out = {}
        for item in self.query(cell_view(flt.task, flt.label), cell_prefix(flt.model)):
            if all(getattr(flt, name) in (None, item[name]) for name in ("model", "context")):
                out[(item["model"], item["context"])] = totals_from_item(item)
        return out

    def _collect(self, flt: RunFilter, want: int, start: str | None = None, newest_first: bool = True) -> list[RunSummary]:
        """Up to `want` matching runs in list order, past the list key `start` when given (older
        than it newest first, newer than it oldest first)."""
        if flt.outcome is not None:
            return self._collect_outcome(flt, want, start, newest_first)
        values = {name: getattr(flt, name) for name in FILTER_FIELDS}
        others = {name: value for name, value in values.items() if value is not None}
        if flt.rule is None or not others:
            view = list_view(values) if flt.rule is None else rule_view(flt.rule)
            entries = self.query(view, newest_first=newest_first, page=want, stop=want, start=start, shown=True)
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
        name, size, matches = self._narrowest(flt, flt.rule, others)
        if not matches:
            return []
        enough = min(want, matches)
        page = _page_size(enough, size, matches)
        if name is None:
            items = self.query(list_view(values), newest_first=newest_first, page=page, start=start, shown=True)
        else:
            items = self._query_rule_field(flt.rule, name, others[name], newest_first, page=page, start=start)
        return _first_matches(items, flt, enough)

    def _narrowest(self, flt: RunFilter, rule: str, others: dict[str, str]) -> tuple[str | None, int, int]:
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
            return sum(t.rule_runs.get(rule, 0) for _, t in cells_)

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
        return [(item, totals_from_item(item)) for item in self.query(view, CELL_PREFIX)]

    def query(self, view: str, prefix: str | None = None, newest_first: bool = False, page: int | None = None,
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
        yield from pages(self._views.query, kwargs, stop)

    def _query_rule_field(self, rule: str, name: str, value: str, newest_first: bool, page: int,
                          stop: int | None = None, start: str | None = None) -> Iterator[StoredItem]:
        """The rule's list entries whose `name` is `value`, from that field's index, in list order."""
        attribute, key = rule_field_attribute(name), rule_field_key(rule, value)
        kwargs: TableRequest = {"IndexName": RULE_FIELD_INDEXES[name].name, "KeyConditionExpression": Key(attribute).eq(key),
                                  "ScanIndexForward": not newest_first, "Limit": page, **_SHOWN}
        if start is not None:
            # An index's start key names the item to go on after: its index key and the table's key.
            kwargs["ExclusiveStartKey"] = {attribute: key, "view": rule_view(rule), "entry": start}
        yield from pages(self._views.query, kwargs, stop)

    def _collect_by_violations(self, flt: RunFilter, want: int, start: str | None, descending: bool) -> list[RunSummary]:
        """Up to `want` graded runs of the filter's list (or the rule's) by violation count, past
        the index key `start` when given: one Query of the violations index (tables.VIOLATIONS_INDEX),
        most first (ties newest first) when `descending`. `start` is a key condition, so a token
        stays good whatever was imported since. In AWS an index is read eventually consistent."""
        values = {name: getattr(flt, name) for name in FILTER_FIELDS}
        view = list_view(values) if flt.rule is None else rule_view(flt.rule)
        cond = Key("view").eq(view)
        if start is not None:
            by = Key(VIOLATIONS_ATTRIBUTE)
            cond = cond & (by.lt(start) if descending else by.gt(start))
        kwargs: TableRequest = {"IndexName": VIOLATIONS_INDEX.name, "KeyConditionExpression": cond,
                                  "ScanIndexForward": not descending, "Limit": want, **_SHOWN}
        return [summary_from_entry(i) for i in pages(self._views.query, kwargs, want)]

    def _collect_outcome(self, flt: RunFilter, want: int, start: str | None, newest_first: bool) -> list[RunSummary]:
        """`_collect` with an outcome. The cells of the filter's partition say how many runs of
        each model × context match; the list the filter without its outcome reads is then read in
        pages sized to hold enough matches (limit ÷ their share of it), the outcome checked in code.
        Without a rule, when the matches sit in a few models × contexts (a rare outcome), their own
        lists are read instead and merged, if that reads fewer entries (each Query weighed as ten)."""
        cells = self.cells(flt)
        counts = self.outcome_counts(flt, cells)
        matches = sum(counts.values())
        if not matches:
            return []
        enough = min(want, matches)
        values = {name: getattr(flt, name) for name in FILTER_FIELDS}
        others = {name: value for name, value in values.items() if value is not None}
        # The list read, as `_collect` picks it without the outcome: None for the filter's own
        # list, _RULE_LIST for the rule's, or a field whose rule index holds the rule's runs under
        # the filter's value. `size`: its entries, as the cells count them.
        source: str | None
        if flt.rule is None:
            source, size = None, sum(t.runs for t in cells.values())
            held = {mc: (cells[mc].runs, n) for mc, n in counts.items() if n}
            split = sum(_expected_reads(min(enough, n), runs, n) + _QUERY_ENTRIES for runs, n in held.values())
            if split < _expected_reads(enough, size, matches) + _QUERY_ENTRIES:
                return self._merged_cells(flt, values, held, enough, start, newest_first)
        elif len(others) <= 1:
            source, size = next(iter(others), _RULE_LIST), sum(t.rule_runs.get(flt.rule, 0) for t in cells.values())
        else:
            source, size, _ = self._narrowest(flt, flt.rule, others)
        page = _page_size(enough, size, matches)
        if source is None or flt.rule is None:  # without a rule the source is always the filter's own list
            items = self.query(list_view(values), newest_first=newest_first, page=page, start=start, shown=True)
        elif source == _RULE_LIST:
            items = self.query(rule_view(flt.rule), newest_first=newest_first, page=page, start=start, shown=True)
        else:
            items = self._query_rule_field(flt.rule, source, others[source], newest_first, page=page, start=start)
        return _first_matches(items, flt, enough)

    def _merged_cells(self, flt: RunFilter, values: dict[str, str | None], held: dict[tuple[str, str], tuple[int, int]],
                      enough: int, start: str | None, newest_first: bool) -> list[RunSummary]:
        """The first `enough` matches of the lists of the models × contexts that hold matches (with
        the filter's task and label), each read until it gave its own first `enough` or ran out,
        merged in list order. Past `start` by the key condition: the start run is in one of them."""
        found: list[RunSummary] = []
        for (model, context), (runs, n) in held.items():
            view = list_view({**values, "model": model, "context": context})
            items = self.query(view, newest_first=newest_first, page=_page_size(min(enough, n), runs, n), beyond=start, shown=True)
            found += _first_matches(items, flt, min(enough, n))
        found.sort(key=started_key, reverse=newest_first)
        return found[:enough]

    def outcome_counts(self, flt: RunFilter, cells: dict[tuple[str, str], CellTotals]) -> dict[tuple[str, str], int]:
        """How many runs of each model × context match the filter, its outcome included, given the
        cells of its partition. Without a rule, a cell's count of that outcome. With one, a cell
        says how many runs broke the rule, not how they ended; but only a graded run breaks a rule,
        and every completed run is graded (the import refuses one without its axe result), so in a
        cell whose graded runs number its completed ones the rule's runs all completed. Only a cell
        holding a graded run that failed or timed out is counted from its own list (its runs)."""
        outcome = flt.outcome
        assert outcome is not None
        out: dict[tuple[str, str], int] = {}
        for (model, context), t in cells.items():
            ended = getattr(t, outcome)
            broke = t.rule_runs.get(flt.rule, 0) if flt.rule is not None else 0
            if flt.rule is None or not ended:
                out[(model, context)] = ended
            elif ended == t.runs:  # every run of the cell ended so, the rule's among them
                out[(model, context)] = broke
            elif not broke or t.graded == t.completed:  # the rule's runs, if any, all completed
                out[(model, context)] = broke if outcome == "completed" else 0
            else:
                view = list_view({"model": model, "context": context, "task": flt.task, "label": flt.label})
                out[(model, context)] = sum(flt.matches(summary_from_entry(i))
                                            for i in self.query(view, page=min(_PAGE, t.runs + 1), shown=True))
        return out


def _expected_reads(enough: int, size: int, matches: int) -> int:
    """Entries read from a list of `size` holding `matches` spread through it, to find `enough`."""
    return min(size, -(-enough * size // matches))


def _page_size(enough: int, size: int, matches: int) -> int:
    return max(1, min(_PAGE, size, _expected_reads(enough, size, matches) + 1))


def _first_matches(items: Iterator[StoredItem], flt: RunFilter, enough: int) -> list[RunSummary]:
    out: list[RunSummary] = []
    for item in items:
        run = summary_from_entry(item)
        if flt.matches(run):
            out.append(run)
            if len(out) >= enough:
                break
    return out


def pages(query: TableRead, kwargs: TableRequest, stop: int | None = None) -> Iterator[StoredItem]:
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


__all__ = ["RunLists", "UnsupportedOrder", "pages", "refuse_unsupported"]
