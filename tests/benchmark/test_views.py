"""The runs' views (store/run_views.py): what the data tools read equals a brute-force computation
over the runs after any imports, a re-import changes nothing, racing writers count each run once,
and the reads never walk the runs."""
from __future__ import annotations

import asyncio
import itertools
import json
import threading
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from groundchat.benchmark.runs import FILTER_FIELDS, RunFilter, overview_rows, rule_counts_of
from groundchat.store.runs_import import import_text, parse_runs

from tests.benchmark.conftest import jsonl

# Names with the characters a key could trip on: '/', '=', '%', spaces, and a prefix of another.
MODELS = ("m1", "m/2", "m1x")
CONTEXTS = ("none", "checklist", "a=b c")
TASKS = ("t1", "t%2")
LABELS = ("l1", "l2")
RULES = ("color-contrast", "region", "label", "aria:odd")
COSTS = ("0.012600", "0.5", "1", "0.000001", "2.25", "0")
START = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)


def axe(rules: dict[str, int]) -> dict:
    return {"testEngine": {"name": "axe-core", "version": "4.14.1"}, "violations": [
        {"id": rule, "impact": "serious", "tags": ["wcag2aa"], "nodes": [{"target": [f"#n{i}"], "html": "<b>"} for i in range(n)]}
        for rule, n in rules.items()]}


@st.composite
def run_lines(draw, index: int) -> dict:
    outcome = draw(st.sampled_from(("completed", "completed", "failed", "timeout")))
    line = {
        "id": f"run-{index}", "model": draw(st.sampled_from(MODELS)), "context": draw(st.sampled_from(CONTEXTS)),
        "task": draw(st.sampled_from(TASKS)), "label": draw(st.sampled_from(LABELS)),
        # Ties on the start time are ordered by id, as in the store.
        "started_at": (START + timedelta(minutes=draw(st.integers(0, 40)))).isoformat().replace("+00:00", "Z"),
        "outcome": outcome, "cost_usd": draw(st.sampled_from(COSTS)), "tokens": {"input": 10, "output": 5},
    }
    if outcome == "completed":
        line["axe"] = axe(draw(st.dictionaries(st.sampled_from(RULES), st.integers(0, 3), max_size=4)))
    return line


@st.composite
def imports(draw) -> list[list[dict]]:
    """Files of runs, some runs in more than one file (a re-import keeps the first)."""
    lines = [draw(run_lines(i)) for i in range(draw(st.integers(1, 24)))]
    files = []
    for _ in range(draw(st.integers(1, 3))):
        chosen = draw(st.lists(st.sampled_from(lines), min_size=1, max_size=len(lines), unique_by=lambda x: x["id"]))
        files.append(chosen)
    return files


def fresh_store(settings_, name: str):
    from groundchat.store.dynamo import Dynamo, create_tables
    from groundchat.store.runs import RunQueries, RunWriter
    from groundchat.store.tables import RUN_VIEWS, RUNS

    dynamo = Dynamo(settings_.model_copy(update={"table_prefix": f"{name}-"}))
    create_tables(dynamo, [RUNS, RUN_VIEWS])
    return dynamo, RunWriter(dynamo), RunQueries(dynamo)


def stored_runs(files: list[list[dict]]) -> list:
    first: dict[str, dict] = {}
    for file in files:
        for line in file:
            first.setdefault(line["id"], line)
    runs, errors = parse_runs(jsonl(list(first.values())))
    assert errors == []
    return [r.summary() for r in runs]


def filters(runs) -> list[RunFilter]:
    """No filter, each field alone, a few pairs and a full cell, with and without a rule."""
    out = [RunFilter()]
    if not runs:
        return out
    one = runs[0]
    for name in FILTER_FIELDS:
        out.append(RunFilter(**{name: getattr(one, name)}))
    out += [RunFilter(model=one.model, context=one.context), RunFilter(task=one.task, label=one.label),
            RunFilter(**{name: getattr(one, name) for name in FILTER_FIELDS})]
    rules = sorted({rule for r in runs for rule in r.rules})
    for rule in rules[:2]:
        # The rule alone, with each other field (one index each), and with several (the narrowest
        # index, the rest checked in code).
        out += [RunFilter(rule=rule)] + [RunFilter(rule=rule, **{name: getattr(one, name)}) for name in FILTER_FIELDS]
        out += [RunFilter(rule=rule, model=one.model, task=one.task), RunFilter(rule=rule, context=one.context, label=one.label),
                RunFilter(rule=rule, **{name: getattr(one, name) for name in FILTER_FIELDS})]
    return out


def newest_first(runs) -> list:
    return sorted(runs, key=lambda r: (r.started_at, r.run_id), reverse=True)


async def walk_pages(queries, flt: RunFilter, limit: int) -> list[str]:
    """Every run of the list, newest first, read page by page to the end (each page after the last
    one's key), checked against the same pages read back from the end (each before the first key)."""
    pages, after = [], None
    while True:
        page = await queries.page_runs(flt, limit, after=after)
        pages.append([r.run_id for r in page.runs])
        if not page.older:
            break
        after = page.last_key
    back, before = [], page.first_key
    while before is not None:
        page = await queries.page_runs(flt, limit, before=before)
        if page.runs:
            back.insert(0, [r.run_id for r in page.runs])
        before = page.first_key if page.newer else None
    assert back == pages[:-1], (flt, pages, back)
    return [run_id for ids in pages for run_id in ids]


async def assert_views_match(queries, dynamo, runs) -> None:
    from groundchat_cli.run_repair import check_views

    for flt in filters(runs):
        matching = [r for r in runs if flt.matches(r)]
        if flt.rule is None:
            rows, by_context = await queries.overview_with_contexts(flt)
            assert rows == overview_rows(matching), flt
            assert by_context == overview_rows(matching, per_model=False), flt
            assert await queries.rule_counts(flt, limit=50) == rule_counts_of(matching, 50), flt
        for limit in (1, 3, 100):
            listed, more = await queries.list_runs(flt, limit=limit)
            assert [r.run_id for r in listed] == [r.run_id for r in newest_first(matching)[:limit]], (flt, limit)
            assert more == (len(matching) > limit)
        if flt.rule is not None:
            assert await walk_pages(queries, flt, 3) == [r.run_id for r in newest_first(matching)], flt
    queries._facets = None
    facets = await queries.facets()
    for name in FILTER_FIELDS:
        assert set(facets[name]) == {getattr(r, name) for r in runs}
    assert set(facets["rule"]) == {rule for r in runs for rule in r.rules}
    report = check_views(dynamo)
    assert report.clean and report.runs == len(runs), report.lines()


def test_views_equal_a_brute_force_recomputation_after_random_imports(settings):
    from groundchat_cli.moto_store import make_moto_faithful
    from moto import mock_aws

    make_moto_faithful()
    counter = itertools.count()

    @hypothesis_settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(files=imports())
    def check(files):
        dynamo, writer, queries = fresh_store(settings_, f"p{next(counter)}")
        for file in files:
            assert import_text(writer, jsonl(file)).ok
        asyncio.run(assert_views_match(queries, dynamo, stored_runs(files)))

    settings_ = settings
    with mock_aws():
        check()


def snapshot(dynamo) -> dict:
    from groundchat.store.tables import RUN_VIEWS, RUNS

    out = {}
    for table in (RUNS, RUN_VIEWS):
        items = dynamo.table(table).scan(ConsistentRead=True)["Items"]
        out[table.logical] = sorted(json.dumps(i, sort_keys=True, default=str) for i in items)
    return out


async def test_reimport_leaves_every_aggregate_unchanged(dynamo, writer, queries, loaded):
    before = snapshot(dynamo)
    rows = await queries.overview_with_contexts()
    report = import_text(writer, jsonl(loaded))
    assert report.imported == [] and len(report.skipped) == len(loaded)
    # A fresh writer knows no cell: it learns they exist only from its refused transactions.
    from groundchat.store.runs import RunWriter

    again = import_text(RunWriter(dynamo), jsonl(loaded[:40]))
    assert again.imported == [] and len(again.skipped) == 40
    assert snapshot(dynamo) == before
    assert await queries.overview_with_contexts() == rows


async def test_writers_that_race_count_each_run_once(dynamo, queries, sample_lines):
    """Two importers with overlapping files at once: each cell ends with each run counted once,
    whichever writer lost a race re-reading the cell and trying again."""
    from groundchat_cli.run_repair import check_views
    from groundchat.store.runs import RunWriter

    lines = [x for x in sample_lines if x["label"] == "round-1" and x["task"] in ("signup-form", "modal-dialog")]
    halves = (lines[: len(lines) * 2 // 3], lines[len(lines) // 3:])
    reports = []

    def run(part):
        reports.append(import_text(RunWriter(dynamo), jsonl(part)))

    threads = [threading.Thread(target=run, args=(part,)) for part in halves]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(itertools.chain.from_iterable(r.imported for r in reports)) == sorted(x["id"] for x in lines)
    runs = stored_runs([lines])
    assert await queries.overview_with_contexts() == (overview_rows(runs), overview_rows(runs, per_model=False))
    assert check_views(dynamo).clean


async def test_a_stale_guess_is_read_again_and_a_half_counted_run_is_refused(dynamo, writer, queries):
    from groundchat.store.run_views import list_entry, list_view
    from groundchat.store.runs import RunWriter, ViewsOutOfStep
    from groundchat.store.tables import RUN_VIEWS

    from tests.benchmark.test_import import run_line

    first, second = RunWriter(dynamo), RunWriter(dynamo)
    assert import_text(first, jsonl([run_line("run-1")])).imported == ["run-1"]
    assert import_text(second, jsonl([run_line("run-2")])).imported == ["run-2"]
    # `first` still believes its cells hold one run: its conditions fail, it reads, it retries.
    assert import_text(first, jsonl([run_line("run-3")])).imported == ["run-3"]
    assert (await queries.overview())[0].runs == 3

    orphan = parse_runs(jsonl([run_line("run-4")]))[0][0].summary()
    dynamo.table(RUN_VIEWS).put_item(Item=list_entry(list_view({}), orphan))
    with pytest.raises(ViewsOutOfStep, match="groundchat runs repair --fix"):
        writer.put_run(parse_runs(jsonl([run_line("run-4")]))[0][0])
    assert (await queries.overview())[0].runs == 3  # nothing of run-4 was counted


def test_a_run_breaking_more_rules_than_a_transaction_holds_is_refused():
    from groundchat.store.run_views import MAX_RULES_PER_RUN, MAX_TRANSACTION_ITEMS, FIXED_ITEMS_PER_RUN

    from tests.benchmark.test_import import run_line

    assert FIXED_ITEMS_PER_RUN + MAX_RULES_PER_RUN == MAX_TRANSACTION_ITEMS
    ok = run_line("run-1", axe=axe({f"rule-{i}": 1 for i in range(MAX_RULES_PER_RUN)}))
    too_many = run_line("run-2", axe=axe({f"rule-{i}": 1 for i in range(MAX_RULES_PER_RUN + 1)}))
    _, errors = parse_runs(jsonl([ok, too_many]))
    assert [e.line for e in errors] == [2] and f"more than {MAX_RULES_PER_RUN} distinct axe rules" in errors[0].message


async def test_a_run_with_the_most_rules_fits_one_transaction(writer, queries):
    from groundchat.store.run_views import MAX_RULES_PER_RUN

    from tests.benchmark.test_import import run_line

    line = run_line("run-1", axe=axe({f"rule-{i:02d}": 2 for i in range(MAX_RULES_PER_RUN)}))
    assert import_text(writer, jsonl([line])).imported == ["run-1"]
    counts = await queries.rule_counts(limit=100)
    assert len(counts.rules) == MAX_RULES_PER_RUN and counts.rules[0].nodes == 2


class Reads:
    """The DynamoDB calls a client makes and the items they return."""

    def __init__(self, dynamo) -> None:
        self.calls: list[str] = []
        self.items = 0
        for client in (dynamo.client, dynamo.resource.meta.client):
            client.meta.events.register("after-call.dynamodb", self._seen)

    def _seen(self, http_response, parsed, model, **_):
        self.calls.append(model.name)
        if "Item" in parsed:
            self.items += 1
        self.items += len(parsed.get("Items", []))
        self.items += sum(len(v) for v in parsed.get("Responses", {}).values())

    def reset(self) -> None:
        self.calls, self.items = [], 0


async def test_tools_read_a_few_items_and_never_every_run(dynamo, loaded, registry, ctx):
    reads = Reads(dynamo)
    cells = 5 * 4  # models × contexts: the most items a cell partition holds
    await registry.execute("compare_contexts", {}, ctx)  # warms nothing: tools check filters exactly
    for name, args, most in [
        ("compare_contexts", {}, cells),
        ("compare_contexts", {"task": "signup-form", "label": "round-2"}, 2 + cells),
        ("top_rules", {"task": "nav-header", "limit": 10}, 1 + cells),
        ("list_runs", {"context": "guidelines", "limit": 20}, 1 + 21),
        ("list_runs", {"model": "birch-pro", "context": "none", "task": "pricing-table", "label": "round-1"}, 4 + 21),
        ("list_runs", {"rule": "select-name", "limit": 5}, 2 + 6),
        ("get_run", {"run_id": loaded[0]["id"]}, 1),
    ]:
        reads.reset()
        await registry.execute(name, args, ctx)
        assert "Scan" not in reads.calls, name
        assert reads.items <= most, (name, args, reads.items, reads.calls)
    reads.reset()
    await registry.execute("get_run", {"run_id": loaded[0]["id"]}, ctx)
    assert reads.calls == ["GetItem"]


async def test_runs_stored_by_the_first_writer_still_read_and_get_their_views(dynamo, queries, sample_lines):
    """A local store filled before the views existed: its runs still open with get_run, and the
    sample loader builds their views once at start."""
    from groundchat.store.run_items import detail_item, summary_item
    from groundchat.store.tables import RUNS
    from groundchat_cli.sample import load_sample_if_empty_sync

    lines = sample_lines[:30]
    runs = parse_runs(jsonl(lines))[0]
    for run in runs:  # the first writer: a detail with the violations alone, then the summary
        dynamo.table(RUNS).put_item(Item=detail_item(run))
        dynamo.table(RUNS).put_item(Item=summary_item(run))
    got = await queries.get_run(runs[3].run_id)
    assert got == runs[3].model_copy(update={"violations": got.violations}) and len(got.violations) == len(runs[3].violations)
    assert await queries.overview() == []
    assert load_sample_if_empty_sync(dynamo) == 0
    summaries = [r.summary() for r in runs]
    assert await queries.overview() == overview_rows(summaries)
    listed, _ = await queries.list_runs(RunFilter(context="none"), limit=100)
    assert [r.run_id for r in listed] == [r.run_id for r in newest_first(summaries) if r.context == "none"]


async def test_money_sums_stay_exact(writer, queries):
    from tests.benchmark.test_import import run_line

    costs = ["0.1", "0.2", "0.000001", "1234.56789", "0.012600"]
    lines = [run_line(f"run-{i}", cost_usd=c, started_at=f"2026-11-30T09:0{i}:00Z", finished_at=None) for i, c in enumerate(costs)]
    import_text(writer, jsonl(lines))
    [row] = await queries.overview()
    assert row.total_cost_usd == sum(Decimal(c) for c in costs) == Decimal("1234.880491")
    assert str(row.total_cost_usd) == str(sum((Decimal(c) for c in costs), Decimal(0)))
