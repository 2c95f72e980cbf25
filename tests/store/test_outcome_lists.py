"""Run lists by outcome (completed, failed, timeout): the brute-force list newest first, under every
kind of filter, paged both ways; counted exactly from the cells; and a rare outcome among many runs
found by reading the lists of the models × contexts that hold it, not every run."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from groundchat.benchmark.runs import CONTEXT_LEVELS, OUTCOMES, RunFilter
from tests.benchmark.conftest import _load, loaded  # noqa: F401  (fixtures)
from tests.benchmark.test_rule_lists import IndexReads, common_and_rare_rules, summaries
from tests.benchmark.test_views import newest_first, walk_pages
from tests.store.conftest import queries, sample_lines, writer  # noqa: F401


def ids(runs) -> list[str]:
    return [r.run_id for r in runs]


def brute(runs, flt: RunFilter) -> list[str]:
    return ids(newest_first(r for r in runs if flt.matches(r)))


async def assert_lists_as_brute_force(queries, runs, flt: RunFilter) -> None:  # noqa: F811
    want = brute(runs, flt)
    for limit in (1, 7, 100):
        listed, more = await queries.list_runs(flt, limit=limit)
        assert ids(listed) == want[:limit], (flt, limit)
        assert more == (len(want) > limit), (flt, limit)
    assert await queries.count_runs(flt) == len(want), flt
    if want:
        assert await walk_pages(queries, flt, 4) == want, flt


async def test_every_outcome_lists_newest_first_and_counts_exactly(queries, loaded):  # noqa: F811
    runs = summaries(loaded)
    assert {r.outcome for r in runs} == set(OUTCOMES)  # the slice has all three, so each list is met
    for outcome in OUTCOMES:
        await assert_lists_as_brute_force(queries, runs, RunFilter(outcome=outcome))


@pytest.mark.parametrize("fields", [("model",), ("context",), ("model", "task"), ("context", "label"),
                                    ("model", "context"), ("model", "context", "task", "label")])
async def test_an_outcome_with_other_filters_is_the_brute_force_list(queries, loaded, fields):  # noqa: F811
    runs = summaries(loaded)
    for outcome in OUTCOMES:
        one = next(r for r in runs if r.outcome == outcome)
        await assert_lists_as_brute_force(queries, runs, RunFilter(outcome=outcome, **{f: getattr(one, f) for f in fields}))


async def test_an_outcome_with_a_rule_checks_the_outcome_on_the_rules_list(queries, loaded):  # noqa: F811
    runs = summaries(loaded)
    for rule in common_and_rare_rules(runs):
        one = next(r for r in runs if rule in r.rules)
        for others in ({}, {"context": one.context}, {"model": one.model, "context": one.context},
                       {"model": one.model, "task": one.task, "label": one.label}):
            for outcome in OUTCOMES:
                await assert_lists_as_brute_force(queries, runs, RunFilter(rule=rule, outcome=outcome, **others))
    # In the sample only completed runs are graded, so a rule's runs all completed.
    rule = common_and_rare_rules(runs)[0]
    assert await queries.count_runs(RunFilter(rule=rule, outcome="completed")) == await queries.count_runs(RunFilter(rule=rule)) > 0


async def test_a_count_by_outcome_is_one_query_of_the_cells(dynamo, queries, loaded):  # noqa: F811
    runs = summaries(loaded)
    reads = IndexReads(dynamo)
    for flt in (RunFilter(outcome="timeout"), RunFilter(outcome="failed", model="birch-pro", task="nav-header"),
                RunFilter(outcome="completed", rule=common_and_rare_rules(runs)[0], context="none")):
        reads.reset()
        assert await queries.count_runs(flt) == len(brute(runs, flt)), flt
        assert [c[:2] for c in reads.calls] == [("Query", None)], flt
        assert reads.items <= 20  # at most models × contexts cells


async def test_a_common_outcome_reads_a_page_sized_by_its_share(dynamo, queries, loaded):  # noqa: F811
    """Completed runs are most of the list: its own list read once, a page of about limit ÷ share."""
    runs = summaries(loaded)
    flt = RunFilter(outcome="completed")
    share = sum(r.outcome == "completed" for r in runs) / len(runs)
    reads = IndexReads(dynamo)
    listed, more = await queries.list_runs(flt, limit=10)
    assert ids(listed) == brute(runs, flt)[:10] and more
    cells, *lists = reads.calls
    assert cells[:2] == ("Query", None) and cells[2] <= 20
    assert len(lists) == 1 and lists[0][2] <= int(11 / share) + 2


def rare_timeouts_lines(n: int = 500) -> list[dict]:
    """`n` runs over 5 models × 4 contexts, all completed but three timeouts in three cells (one
    among the newest, one in the middle, one among the oldest)."""
    start = datetime(2026, 3, 1, tzinfo=timezone.utc)
    timeouts = {3, n // 2, n - 4}
    lines = []
    for i in range(n):
        outcome = "timeout" if i in timeouts else "completed"
        line = {"id": f"run-{i:04d}", "model": f"model-{i % 5}", "context": CONTEXT_LEVELS[(i // 5) % 4],
                "task": f"task-{i % 3}", "label": "round-1", "outcome": outcome,
                "started_at": (start + timedelta(minutes=i)).isoformat().replace("+00:00", "Z"),
                "cost_usd": "0.01", "tokens": {"input": 10, "output": 10}}
        if outcome == "completed":
            line["axe"] = {"testEngine": {"name": "axe-core", "version": "4.14.1"}, "violations": []}
        lines.append(line)
    return lines


async def test_a_rare_outcome_among_many_runs_is_found_without_reading_every_run(dynamo, writer, queries):  # noqa: F811
    lines = _load(writer, rare_timeouts_lines())
    runs = summaries(lines)
    flt = RunFilter(outcome="timeout")
    want = brute(runs, flt)
    assert len(want) == 3 and len({(r.model, r.context) for r in runs if r.outcome == "timeout"}) == 3
    reads = IndexReads(dynamo)
    listed, more = await queries.list_runs(flt, limit=20)
    assert ids(listed) == want and not more
    # The cells (20), then the lists of the three models × contexts holding a timeout (25 runs
    # each, and the stop one past a page): about a sixth of the 500 runs, in four Queries.
    assert len(reads.calls) == 4 and all(c[0] == "Query" for c in reads.calls)
    assert reads.items <= 20 + 3 * 26
    # Paged one at a time, both ways: each page reads the same bounded lists.
    assert await walk_pages(queries, flt, 1) == want
    first = await queries.page_runs(flt, 1)
    reads.reset()
    page = await queries.page_runs(flt, 1, after=first.last_key)
    assert ids(page.runs) == want[1:2] and page.total == 3 and page.newer and page.older
    assert reads.items <= 2 * 20 + 3 * 26  # the cells for the list and for the count, then the three lists
    # With a model, the one model × context list that holds its timeout.
    one = next(r for r in runs if r.outcome == "timeout")
    await assert_lists_as_brute_force(queries, runs, RunFilter(outcome="timeout", model=one.model))
    assert await queries.count_runs(RunFilter(outcome="failed")) == 0
    reads.reset()
    assert await queries.list_runs(RunFilter(outcome="failed")) == ([], False)
    assert [c[:2] for c in reads.calls] == [("Query", None)]  # the cells say none: no list is read


def graded_failures_lines() -> list[dict]:
    """Runs whose failed and timed-out lines carry an axe result too (the import allows it): a
    rule's runs then end in every way, and the cells alone cannot split them."""
    start = datetime(2026, 4, 1, tzinfo=timezone.utc)
    lines = []
    for i in range(60):
        outcome = OUTCOMES[i % 3]
        violations = [{"id": "color-contrast", "impact": "serious", "tags": ["wcag2aa", "wcag143"],
                       "nodes": [{"target": ["#a"], "html": "<p>"}]}] if i % 2 else []
        lines.append({"id": f"run-g{i:03d}", "model": f"model-{i % 2}", "context": CONTEXT_LEVELS[i % 4],
                      "task": "task-a", "label": f"round-{1 + i % 2}", "outcome": outcome,
                      "started_at": (start + timedelta(minutes=i)).isoformat().replace("+00:00", "Z"),
                      "cost_usd": "0.01", "tokens": {"input": 10, "output": 10},
                      "axe": {"testEngine": {"name": "axe-core", "version": "4.14.1"}, "violations": violations}})
    return lines


async def test_a_rule_and_an_outcome_are_exact_when_failed_runs_were_graded_too(queries, writer):  # noqa: F811
    runs = summaries(_load(writer, graded_failures_lines()))
    for outcome in OUTCOMES:
        assert 0 < len(brute(runs, RunFilter(rule="color-contrast", outcome=outcome))) < sum(r.outcome == outcome for r in runs)
        for others in ({}, {"model": "model-1"}, {"model": "model-1", "context": "none"}, {"label": "round-2", "context": "checklist"}):
            await assert_lists_as_brute_force(queries, runs, RunFilter(rule="color-contrast", outcome=outcome, **others))


async def test_the_aggregates_take_no_outcome(queries, loaded):  # noqa: F811
    for call in (queries.overview, queries.overview_with_contexts, queries.rule_counts):
        with pytest.raises(ValueError, match="no outcome filter"):
            await call(RunFilter(outcome="failed"))


async def test_an_outcome_is_no_value_the_filter_check_looks_up(queries, loaded):  # noqa: F811
    assert await queries.missing(RunFilter(outcome="timeout", model="birch-pro")) == []
    assert await queries.missing(RunFilter(outcome="timeout", model="nobody")) == ["model"]
