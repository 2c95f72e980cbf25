"""A rule with other filters: the run list comes from the rule × field indexes of the run views
(store/run_views.py), equals the brute-force list newest first, pages both ways with the keys the
API hands out, and reads the page it shows, not the runs the rule or the filter alone would list."""
from __future__ import annotations

from collections import Counter

import pytest
from groundchat.benchmark.runs import FILTER_FIELDS, RunFilter
from groundchat.store.runs_import import parse_runs

from tests.benchmark.conftest import jsonl
from tests.benchmark.test_views import newest_first, walk_pages


def summaries(lines: list[dict]) -> list:
    runs, errors = parse_runs(jsonl(lines))
    assert errors == []
    return [r.summary() for r in runs]


def common_and_rare_rules(runs) -> list[str]:
    counts = Counter(rule for r in runs for rule in r.rules)
    ordered = [rule for rule, _ in counts.most_common()]
    return [ordered[0], ordered[len(ordered) // 2]]


class IndexReads:
    """Per DynamoDB call: the operation, the index it read (None: the table) and the items returned."""

    def __init__(self, dynamo) -> None:
        self.calls: list[tuple[str, str | None, int]] = []
        self._index: str | None = None
        for client in (dynamo.client, dynamo.resource.meta.client):
            client.meta.events.register("before-parameter-build.dynamodb", self._asked)
            client.meta.events.register("after-call.dynamodb", self._seen)

    def _asked(self, params, **_) -> None:
        self._index = params.get("IndexName")

    def _seen(self, parsed, model, **_) -> None:
        items = ("Item" in parsed) + len(parsed.get("Items", [])) + sum(len(v) for v in parsed.get("Responses", {}).values())
        self.calls.append((model.name, self._index, items))

    @property
    def items(self) -> int:
        return sum(n for _, _, n in self.calls)

    def reset(self) -> None:
        self.calls = []


def test_every_filter_field_has_its_rule_index():
    from groundchat.store.run_views import rule_field_attribute
    from groundchat.store.tables import RULE_FIELD_INDEXES, RUN_VIEWS

    assert tuple(RULE_FIELD_INDEXES) == FILTER_FIELDS
    # Besides the rule × field indexes, the run views have one more: the lists by violation count.
    assert {ix.name for ix in RUN_VIEWS.indexes} == {f"by_rule_{name}" for name in FILTER_FIELDS} | {"by_violations"}
    assert [rule_field_attribute(name) for name in FILTER_FIELDS] == ["rule_model", "rule_context", "rule_task", "rule_label"]


def test_only_a_rules_entries_carry_the_index_keys_percent_encoded():
    from groundchat.store.run_views import expected_views

    [run] = summaries([{"id": "run-1", "model": "m/1", "context": "a=b c", "task": "t%2", "label": "l1", "outcome": "completed",
                        "started_at": "2026-11-30T09:00:00Z", "cost_usd": "0.5", "tokens": {"input": 1, "output": 1},
                        "axe": {"testEngine": {"name": "axe-core", "version": "4.14.1"}, "violations": [
                            {"id": "aria:odd", "impact": "serious", "tags": [], "nodes": [{"target": ["#a"], "html": "<b>"}]}]}}])
    views = expected_views([run])
    carrying = {key: item for key, item in views.items() if any(k.startswith("rule_") for k in item)}
    assert list(carrying) == [("runs/rule=aria%3Aodd", "2026-11-30T09:00:00Z#run-1")]
    item = carrying[("runs/rule=aria%3Aodd", "2026-11-30T09:00:00Z#run-1")]
    assert {k: v for k, v in item.items() if k.startswith("rule_")} == {
        "rule_model": "aria%3Aodd/m%2F1", "rule_context": "aria%3Aodd/a%3Db%20c",
        "rule_task": "aria%3Aodd/t%252", "rule_label": "aria%3Aodd/l1"}


@pytest.mark.parametrize("field", FILTER_FIELDS)
async def test_a_rule_with_one_other_filter_lists_the_brute_force_list_and_pages_both_ways(queries, loaded, field):
    runs = summaries(loaded)
    for rule in common_and_rare_rules(runs):
        for value in sorted({getattr(r, field) for r in runs if rule in r.rules})[:2]:
            flt = RunFilter(rule=rule, **{field: value})
            want = [r.run_id for r in newest_first(r for r in runs if flt.matches(r))]
            assert want, flt
            for limit in (1, 7, 100):
                listed, more = await queries.list_runs(flt, limit=limit)
                assert [r.run_id for r in listed] == want[:limit], (flt, limit)
                assert more == (len(want) > limit)
            assert await walk_pages(queries, flt, 4) == want, flt
            assert await queries.count_runs(flt) == len(want)


async def test_a_rule_with_several_filters_lists_the_brute_force_list(queries, loaded):
    runs = summaries(loaded)
    one = next(r for r in runs if r.rules)
    rule = min(one.rules)
    for names in (("model", "context"), ("model", "task"), ("task", "label"), ("context", "label"), FILTER_FIELDS):
        flt = RunFilter(rule=rule, **{name: getattr(one, name) for name in names})
        want = [r.run_id for r in newest_first(r for r in runs if flt.matches(r))]
        listed, _ = await queries.list_runs(flt, limit=100)
        assert [r.run_id for r in listed] == want, flt
        assert await walk_pages(queries, flt, 2) == want, flt


async def test_the_run_pages_tokens_walk_a_rule_and_filter_list(ctx, loaded):
    """The page tokens the run list page hands out (web/run_pages.py) name a list key: with an
    index, the start key is built from it, and next / previous still walk the whole list."""
    from groundchat.web.run_pages import page_args, run_page

    runs = summaries(loaded)
    rule = common_and_rare_rules(runs)[0]
    params = {"rule": rule, "context": "none", "limit": 6}
    want = [r.run_id for r in newest_first(r for r in runs if RunFilter(rule=rule, context="none").matches(r))]
    assert len(want) > 12
    pages, token = [], None
    while True:
        page = await run_page(ctx, page_args({**params, **({"page": token} if token else {})}))
        assert page["total"] == len(want)
        pages.append([row["run_id"] for row in page["runs"]])
        if page["next"] is None:
            break
        token = page["next"]
    assert [run_id for ids in pages for run_id in ids] == want
    back, token = [], page["previous"]
    while token is not None:
        page = await run_page(ctx, page_args({**params, "page": token}))
        back.insert(0, [row["run_id"] for row in page["runs"]])
        token = page["previous"]
    assert back == pages[:-1]


@pytest.mark.parametrize("field", FILTER_FIELDS)
async def test_a_rule_and_filter_page_reads_the_page_and_no_more(dynamo, queries, loaded, field):
    """One Query of the field's index, of the page and one more entry (to know there are more):
    not the rule's runs nor the filter's, however many there are."""
    runs = summaries(loaded)
    rule = common_and_rare_rules(runs)[0]
    value = Counter(getattr(r, field) for r in runs if rule in r.rules).most_common()[0][0]
    flt = RunFilter(rule=rule, **{field: value})
    matching = newest_first(r for r in runs if flt.matches(r))
    assert len(matching) > 11  # more than two pages: each page reads one more entry than it shows
    assert sum(rule in r.rules for r in runs) > len(matching) and sum(getattr(r, field) == value for r in runs) > len(matching)
    reads = IndexReads(dynamo)
    for limit in (3, 5):
        reads.reset()
        listed, more = await queries.list_runs(flt, limit=limit)
        assert [r.run_id for r in listed] == [r.run_id for r in matching[:limit]] and more == (len(matching) > limit)
        assert reads.calls == [("Query", f"by_rule_{field}", limit + 1)]
        assert reads.items <= limit + 2
        # The next page: again one Query of the index, from the first page's last key (and one
        # Query of the cells, for "N of M").
        first = await queries.page_runs(flt, limit)
        reads.reset()
        second = await queries.page_runs(flt, limit, after=first.last_key)
        assert [r.run_id for r in second.runs] == [r.run_id for r in matching[limit:2 * limit]]
        assert [c for c in reads.calls if c[1] is not None] == [("Query", f"by_rule_{field}", limit + 1)]


async def test_the_list_runs_tool_with_a_rule_and_a_context_reads_its_page_and_the_filter_check(dynamo, loaded, registry, ctx):
    reads = IndexReads(dynamo)
    await registry.execute("list_runs", {"rule": "color-contrast", "context": "guidelines", "limit": 20}, ctx)
    reads.reset()
    result = await registry.execute("list_runs", {"rule": "color-contrast", "context": "guidelines", "limit": 20}, ctx)
    assert result["runs"]
    # The filter check (the context's value item, the rule's first entry), then the page: no Scan.
    assert [c[:2] for c in reads.calls] == [("BatchGetItem", None), ("Query", None), ("Query", "by_rule_context")]
    assert reads.items <= 2 + 21


async def test_a_rule_with_several_filters_reads_the_smaller_list_the_cells_point_to(dynamo, queries, loaded):
    """A rule with a model and a context: of the rule's model index, its context index and the
    model × context list (the rule checked in code), the one with the fewest entries, as counted
    from the runs here. Both kinds are met over the sample; either way the page is the brute-force
    page."""
    runs = summaries(loaded)
    reads = IndexReads(dynamo)
    met = set()
    for rule in sorted({rule for r in runs for rule in r.rules}):
        for model, context in sorted({(r.model, r.context) for r in runs if rule in r.rules})[:3]:
            sizes = {"by_rule_model": sum(rule in r.rules and r.model == model for r in runs),
                     "by_rule_context": sum(rule in r.rules and r.context == context for r in runs),
                     None: sum(r.model == model and r.context == context for r in runs)}
            source = min(sizes, key=lambda n: sizes[n])
            flt = RunFilter(rule=rule, model=model, context=context)
            want = [r.run_id for r in newest_first(r for r in runs if flt.matches(r))]
            reads.reset()
            listed, _ = await queries.list_runs(flt, limit=3)
            assert [r.run_id for r in listed] == want[:3]
            # The cells of every run (one Query), then the list chosen, in one page.
            assert [c[:2] for c in reads.calls] == [("Query", None), ("Query", source)], (flt, sizes, reads.calls)
            met.add(source is None)
    assert met == {True, False}
