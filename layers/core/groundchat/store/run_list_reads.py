"""How the run lists that are not a plain time-ordered Query are read: by outcome, and by violations.

A mixin of `RunQueries` (store/runs.py), whose list, cell and index queries it uses. A list by
outcome is counted from the cells, which hold each outcome's runs, and read from the lists the
filter without its outcome reads, the outcome checked in code, in pages sized from those counts; a
rare outcome from the lists of only the models × contexts that have it. A list by violations is one
Query of the sparse violations index. See docs/engineering/benchmark-store.md.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator

from boto3.dynamodb.conditions import Key

from groundchat.benchmark.runs import FILTER_FIELDS, NEWEST, CellTotals, Order, RunFilter, RunSummary, order_problem
from groundchat.store.run_items import started_key
from groundchat.store.run_views import (
    VIOLATIONS_ATTRIBUTE,
    list_view,
    rule_view,
    summary_from_entry,
    violation_key,
)
from groundchat.store.tables import VIOLATIONS_INDEX

if TYPE_CHECKING:
    from groundchat.store.items import StoredItem, TableRead, TableRequest

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


class ListReads:
    def _reader(self, flt: RunFilter, order: Order) -> tuple[Callable[..., list[RunSummary]], Callable[[RunSummary], str | None]]:
        """How a list in `order` is read (`collect(flt, want, start, forward)`) and the key of a
        run in it (what a page token holds)."""
        if order == NEWEST:
            return self._collect, started_key
        refuse_unsupported(flt, order)
        most = order == "most_violations"

        def collect(flt: RunFilter, want: int, start: str | None = None, forward: bool = True) -> list[RunSummary]:
            return self._collect_by_violations(flt, want, start, descending=most == forward)

        return collect, violation_key

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
        return [summary_from_entry(i) for i in _pages(self._views.query, kwargs, want)]

    def _collect_outcome(self, flt: RunFilter, want: int, start: str | None, newest_first: bool) -> list[RunSummary]:
        """`_collect` with an outcome. The cells of the filter's partition say how many runs of
        each model × context match; the list the filter without its outcome reads is then read in
        pages sized to hold enough matches (limit ÷ their share of it), the outcome checked in code.
        Without a rule, when the matches sit in a few models × contexts (a rare outcome), their own
        lists are read instead and merged, if that reads fewer entries (each Query weighed as ten)."""
        cells = self._cells_sync(flt)
        counts = self._outcome_counts(flt, cells)
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
            source, size, _ = self._narrowest(flt, others)
        page = _page_size(enough, size, matches)
        if source is None:
            items = self._query(list_view(values), newest_first=newest_first, page=page, start=start, shown=True)
        elif source == _RULE_LIST:
            items = self._query(rule_view(flt.rule), newest_first=newest_first, page=page, start=start, shown=True)
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
            items = self._query(view, newest_first=newest_first, page=_page_size(min(enough, n), runs, n), beyond=start, shown=True)
            found += _first_matches(items, flt, min(enough, n))
        found.sort(key=started_key, reverse=newest_first)
        return found[:enough]

    def _outcome_counts(self, flt: RunFilter, cells: dict[tuple[str, str], CellTotals]) -> dict[tuple[str, str], int]:
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
                                            for i in self._query(view, page=min(_PAGE, t.runs + 1), shown=True))
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


def _pages(query: TableRead, kwargs: TableRequest, stop: int | None = None) -> Iterator[StoredItem]:
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


__all__ = ["ListReads", "UnsupportedOrder", "refuse_unsupported"]
