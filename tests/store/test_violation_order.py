"""Run lists by most or fewest violations: one Query of the sparse violations index, under any filter
the run lists serve, graded runs only, paged both ways; what it cannot serve is refused in one line."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from groundchat.benchmark.runs import RunFilter
from groundchat.store.run_items import started_key
from groundchat.store.runs import UnsupportedOrder

from tests.benchmark.conftest import _load, loaded  # noqa: F401  (fixtures)
from tests.benchmark.test_rule_lists import IndexReads, common_and_rare_rules, summaries
from tests.store.conftest import queries, sample_lines, writer  # noqa: F401

ORDERS = ("most_violations", "fewest_violations")


def ids(runs) -> list[str]:
    return [r.run_id for r in runs]


def brute(runs, flt: RunFilter, order: str) -> list[str]:
    """The graded runs the filter matches, by violation count then list key, most or fewest first."""
    graded = [r for r in runs if r.graded and flt.matches(r)]
    return ids(sorted(graded, key=lambda r: (r.violation_count, started_key(r)), reverse=order == "most_violations"))


async def walk(queries, flt: RunFilter, order: str, limit: int) -> list[str]:  # noqa: F811
    """The whole list page by page forwards (after each last key), checked against the same pages
    read backwards from the end (before each first key)."""
    pages, after = [], None
    while True:
        page = await queries.page_runs(flt, limit, after=after, order=order)
        pages.append(ids(page.runs))
        if not page.older:
            break
        after = page.last_key
    back, before = [], page.first_key
    while before is not None:
        page = await queries.page_runs(flt, limit, before=before, order=order)
        if page.runs:
            back.insert(0, ids(page.runs))
        before = page.first_key if page.newer else None
    assert back == pages[:-1], (flt, order)
    return [run_id for page_ids in pages for run_id in page_ids]


async def assert_ordered_as_brute_force(queries, runs, flt: RunFilter) -> None:  # noqa: F811
    for order in ORDERS:
        want = brute(runs, flt, order)
        assert want, (flt, order)  # a filter with runs, so the comparison says something
        for limit in (1, 5, 100):
            listed, more = await queries.list_runs(flt, limit=limit, order=order)
            assert ids(listed) == want[:limit], (flt, order, limit)
            assert more == (len(want) > limit), (flt, order, limit)
        assert await queries.count_runs(flt, order) == len(want), (flt, order)
        assert await walk(queries, flt, order, 7) == want, (flt, order)


async def test_no_filter_one_filter_two_filters_and_a_rule(queries, loaded):  # noqa: F811
    runs = summaries(loaded)
    one = next(r for r in runs if r.graded)
    for flt in (RunFilter(), RunFilter(model="birch-pro"), RunFilter(context="guidelines-axe"), RunFilter(label="round-2"),
                RunFilter(model=one.model, task=one.task), RunFilter(context=one.context, label=one.label),
                RunFilter(model=one.model, context=one.context, task=one.task, label=one.label),
                RunFilter(rule=common_and_rare_rules(runs)[0]), RunFilter(rule=common_and_rare_rules(runs)[1])):
        await assert_ordered_as_brute_force(queries, runs, flt)


async def test_most_first_really_is_by_count_and_ungraded_runs_are_left_out(queries, loaded):  # noqa: F811
    runs = summaries(loaded)
    listed, _ = await queries.list_runs(RunFilter(), limit=100, order="most_violations")
    counts = [r.violation_count for r in listed]
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1]
    assert counts[0] == max(r.violation_count for r in runs if r.graded)
    fewest, _ = await queries.list_runs(RunFilter(), limit=200, order="fewest_violations")
    ungraded = {r.run_id for r in runs if not r.graded}
    assert ungraded and not ungraded & set(ids(fewest))  # a failed run is never "the cleanest"
    assert len(fewest) == sum(r.graded for r in runs) < len(runs)
    assert await queries.count_runs(RunFilter()) == len(runs)  # the newest order still counts them all


def tied_lines() -> list[dict]:
    """Six runs of one model: four graded with two violations each (a tie), one graded with none,
    one failed (ungraded), started a minute apart."""
    start = datetime(2026, 4, 1, tzinfo=timezone.utc)
    violation = {"id": "image-alt", "impact": "critical", "tags": ["wcag2a", "wcag111"], "nodes": [
        {"html": "<img>", "target": ["img"], "failureSummary": "Fix any of the following"}]}
    second = {**violation, "id": "label", "tags": ["wcag2a", "wcag412"]}
    lines = []
    for i, (outcome, found) in enumerate([("completed", [violation, second]), ("failed", None), ("completed", []),
                                          ("completed", [violation, second]), ("completed", [violation, second]),
                                          ("completed", [violation, second])]):
        line = {"id": f"tie-{i}", "model": "tie-model", "context": "none", "task": "t", "label": "r",
                "outcome": outcome, "started_at": (start + timedelta(minutes=i)).isoformat().replace("+00:00", "Z"),
                "cost_usd": "0.01", "tokens": {"input": 1, "output": 1}}
        if found is not None:
            line["axe"] = {"testEngine": {"name": "axe-core", "version": "4.14.1"}, "violations": found}
        lines.append(line)
    return lines


async def test_ties_come_newest_first_most_first_and_the_fewest_order_is_its_reverse(writer, queries):  # noqa: F811
    _load(writer, tied_lines())
    most, _ = await queries.list_runs(RunFilter(model="tie-model"), order="most_violations")
    assert ids(most) == ["tie-5", "tie-4", "tie-3", "tie-0", "tie-2"]
    fewest, _ = await queries.list_runs(RunFilter(model="tie-model"), order="fewest_violations")
    assert ids(fewest) == ["tie-2", "tie-0", "tie-3", "tie-4", "tie-5"]
    page = await queries.page_runs(RunFilter(model="tie-model"), 2, order="most_violations")
    assert ids(page.runs) == ["tie-5", "tie-4"] and page.older and not page.newer and page.total == 5
    page = await queries.page_runs(RunFilter(model="tie-model"), 2, after=page.last_key, order="most_violations")
    assert ids(page.runs) == ["tie-3", "tie-0"] and page.older and page.newer
    page = await queries.page_runs(RunFilter(model="tie-model"), 2, before=page.first_key, order="most_violations")
    assert ids(page.runs) == ["tie-5", "tie-4"] and not page.newer


async def test_an_ordered_list_is_one_query_of_the_index(dynamo, queries, loaded):  # noqa: F811
    reads = IndexReads(dynamo)
    listed, more = await queries.list_runs(RunFilter(model="birch-pro", context="none"), limit=5, order="most_violations")
    assert len(listed) == 5 and more
    assert reads.calls == [("Query", "by_violations", 6)]


@pytest.mark.parametrize("flt", [RunFilter(outcome="completed"), RunFilter(rule="image-alt", model="birch-pro"),
                                 RunFilter(rule="image-alt", context="none", outcome="failed")])
async def test_what_the_index_cannot_serve_is_refused_in_one_line(queries, loaded, flt):  # noqa: F811
    for order in ORDERS:
        for call in (queries.list_runs(flt, order=order), queries.page_runs(flt, order=order),
                     queries.count_runs(flt, order)):
            with pytest.raises(UnsupportedOrder) as refused:
                await call
            message = str(refused.value)
            assert "\n" not in message and order in message and "newest" in message


async def test_the_writer_puts_the_key_on_every_list_entry_of_a_graded_run_only(dynamo, writer, queries):  # noqa: F811
    from boto3.dynamodb.conditions import Key
    from groundchat.store.tables import RUN_VIEWS

    _load(writer, tied_lines())
    views = dynamo.table(RUN_VIEWS)
    entries = [i for i in views.scan()["Items"] if i["view"].startswith("runs")]
    of = {run_id: [i for i in entries if f"#{run_id}" in i["entry"]] for run_id in ("tie-0", "tie-1", "tie-2")}
    assert len(of["tie-0"]) == 16 + 2 and len(of["tie-2"]) == 16 and len(of["tie-1"]) == 16
    assert {i["by_violations"] for i in of["tie-0"]} == {"0002#" + of["tie-0"][0]["entry"]}
    assert {i["by_violations"] for i in of["tie-2"]} == {"0000#" + of["tie-2"][0]["entry"]}
    assert all("by_violations" not in i for i in of["tie-1"])  # failed, ungraded: not in the index
    indexed = views.query(IndexName="by_violations", KeyConditionExpression=Key("view").eq("runs"))["Items"]
    assert sorted(i["by_violations"][:4] for i in indexed) == ["0000", "0002", "0002", "0002", "0002"]
    assert set(indexed[0]) == {"view", "entry", "by_violations", "row", "cost_usd"}  # what the lists read, no more


async def test_repair_backfills_entries_stored_without_the_key(dynamo, writer, queries):  # noqa: F811
    from groundchat_cli.run_repair import check_views
    from groundchat.store.tables import RUN_VIEWS

    _load(writer, tied_lines())
    views = dynamo.table(RUN_VIEWS)
    # As an entry written before the index existed: the same item without the attribute.
    stale = [i for i in views.scan()["Items"] if "by_violations" in i and i["view"] == "runs/model=tie-model"]
    for item in stale:
        views.update_item(Key={"view": item["view"], "entry": item["entry"]}, UpdateExpression="REMOVE by_violations")
    assert ids((await queries.list_runs(RunFilter(model="tie-model"), order="most_violations"))[0]) == []
    report = check_views(dynamo)
    assert sorted(report.differing) == sorted((i["view"], i["entry"]) for i in stale) and len(stale) == 5
    fixed = check_views(dynamo, fix=True)
    assert fixed.fixed == 5 and fixed.fixed_all
    assert check_views(dynamo).clean
    most, _ = await queries.list_runs(RunFilter(model="tie-model"), order="most_violations")
    assert ids(most) == ["tie-5", "tie-4", "tie-3", "tie-0", "tie-2"]
