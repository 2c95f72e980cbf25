"""A store made before the run views had their rule × field indexes: the local stack adds the
indexes to the existing table and `runs repair --fix` gives the entries written before them their
index keys; until then repair reports each such entry, after it the lists are whole."""
from __future__ import annotations

import dataclasses

from groundchat.benchmark.runs import RunFilter
from groundchat.store.runs_import import import_text

from tests.benchmark.conftest import jsonl
from tests.benchmark.test_rule_lists import summaries
from tests.benchmark.test_views import newest_first


def old_store(settings, sample_lines):
    """Runs imported into a run views table without the indexes, its rule entries without the keys."""
    from groundchat.store.dynamo import Dynamo, create_tables
    from groundchat.store.runs import RunWriter
    from groundchat.store.tables import RUN_VIEWS, RUNS

    dynamo = Dynamo(settings.model_copy(update={"table_prefix": "old-"}))
    create_tables(dynamo, [RUNS, dataclasses.replace(RUN_VIEWS, indexes=())])
    lines = [x for x in sample_lines if x["task"] == "signup-form" and x["label"] in ("round-1", "round-2")]
    assert import_text(RunWriter(dynamo), jsonl(lines)).ok
    views = dynamo.table(RUN_VIEWS)
    stripped = 0
    for item in views.scan(ConsistentRead=True)["Items"]:
        if item["view"].startswith("runs/rule="):
            views.update_item(Key={"view": item["view"], "entry": item["entry"]},
                              UpdateExpression="REMOVE rule_model, rule_context, rule_task, rule_label")
            stripped += 1
    assert stripped
    return dynamo, lines, stripped


def test_indexes_are_added_to_an_existing_table_once(dynamo, settings, sample_lines):
    from groundchat.store.table_indexes import add_missing_indexes, missing_indexes
    from groundchat.store.tables import RUN_VIEWS, RUNS

    old, _, _ = old_store(settings, sample_lines)
    names = [f"by_rule_{n}" for n in ("model", "context", "task", "label")] + ["by_violations"]
    assert missing_indexes(old, RUN_VIEWS) == names
    assert add_missing_indexes(old, [RUNS, RUN_VIEWS]) == [f"run_views/{name}" for name in names]
    assert add_missing_indexes(old, [RUNS, RUN_VIEWS]) == []
    described = old.client.describe_table(TableName=old.name(RUN_VIEWS))["Table"]
    assert {ix["IndexName"]: ix["IndexStatus"] for ix in described["GlobalSecondaryIndexes"]} == dict.fromkeys(names, "ACTIVE")


async def test_repair_reports_the_entries_without_index_keys_and_fix_writes_them(dynamo, settings, sample_lines):
    from groundchat_cli.run_repair import check_views
    from groundchat.store.runs import RunQueries
    from groundchat.store.table_indexes import add_missing_indexes

    old, lines, stripped = old_store(settings, sample_lines)
    add_missing_indexes(old)
    queries = RunQueries(old)
    runs = summaries(lines)
    flt = RunFilter(rule=min({rule for r in runs for rule in r.rules}), context="none")
    want = [r.run_id for r in newest_first(r for r in runs if flt.matches(r))]
    assert want and (await queries.list_runs(flt, limit=100))[0] == []  # the index lists no entry yet

    report = check_views(old)
    assert not report.clean and len(report.differing) == stripped and not report.missing and not report.extra
    assert all(view.startswith("runs/rule=") for view, _ in report.differing)
    fixed = check_views(old, fix=True)
    assert fixed.fixed == stripped and fixed.skipped == 0
    assert check_views(old).clean
    assert [r.run_id for r in (await queries.list_runs(flt, limit=100))[0]] == want


def test_the_local_stack_migrates_an_old_store_when_it_starts(dynamo, settings, sample_lines):
    from groundchat_cli.run_repair import check_views
    from groundchat_cli.localstack import migrate_indexes

    old, lines, stripped = old_store(settings, sample_lines)
    said: list[str] = []
    migrate_indexes(old, said.append)
    assert said[0].startswith("tables: index(es) added: run_views/by_rule_model")
    assert said[1] == f"benchmark runs: views of {len(lines)} runs brought up to date ({stripped} item(s) rewritten)"
    assert check_views(old).clean
    said.clear()
    migrate_indexes(old, said.append)  # the next start: nothing to do, nothing said
    assert said == []


async def test_a_store_from_before_the_violations_index_gets_it_and_its_entries_their_keys(dynamo, settings, sample_lines):
    """Entries written before `by_violations` existed: the local stack adds the index and the repair
    writes the attribute, after which the ordered lists hold every graded run."""
    from groundchat_cli.run_repair import check_views
    from groundchat.store.runs import RunQueries
    from groundchat.store.tables import RUN_VIEWS
    from groundchat_cli.localstack import migrate_indexes

    old, lines, _ = old_store(settings, sample_lines)
    views = old.table(RUN_VIEWS)
    without = 0
    for item in views.scan(ConsistentRead=True)["Items"]:
        if "by_violations" in item:
            views.update_item(Key={"view": item["view"], "entry": item["entry"]}, UpdateExpression="REMOVE by_violations")
            without += 1
    runs = summaries(lines)
    graded = [r for r in runs if r.graded]
    assert without == sum(16 + len(r.rules) for r in graded) and len(graded) < len(runs)
    said: list[str] = []
    migrate_indexes(old, said.append)
    assert "run_views/by_violations" in said[0]
    # Every entry of a graded run lacked the key; the rule entries among them lacked the rule keys too.
    assert said[1] == f"benchmark runs: views of {len(lines)} runs brought up to date ({without} item(s) rewritten)"
    assert check_views(old).clean
    listed, _ = await RunQueries(old).list_runs(RunFilter(), limit=100, order="most_violations")
    want = sorted(graded, key=lambda r: (r.violation_count, r.started_at, r.run_id), reverse=True)
    assert [r.run_id for r in listed] == [r.run_id for r in want]
