"""`groundchat runs import` and `runs sample` through their argparse commands."""
from __future__ import annotations

import argparse
import json

from tests.benchmark.conftest import jsonl


def run_cli(*argv: str) -> int:
    """The command as typed, against the in-process moto: `--endpoint aws` is what mock_aws answers."""
    from groundchat_cli.runs import add_runs_commands

    parser = argparse.ArgumentParser()
    add_runs_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args([*argv, "--endpoint", "aws"])
    return args.func(args)


def test_import_reports_and_exits_by_outcome(dynamo, sample_lines, tmp_path, capsys):
    good = tmp_path / "good.jsonl"
    good.write_text(jsonl(sample_lines[:3]), encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(jsonl(sample_lines[3:5]) + "{oops\n", encoding="utf-8")

    assert run_cli("runs", "import", str(good)) == 0
    assert "3 run(s) imported, 0 already present" in capsys.readouterr().out
    assert run_cli("runs", "import", str(good), str(bad)) == 1
    out, err = capsys.readouterr()
    assert "0 run(s) imported, 3 already present" in out
    assert "line 3: not valid JSON" in err and "nothing from this file was written" in err

    from groundchat.store.tables import RUNS

    assert dynamo.client.scan(TableName=dynamo.name(RUNS), Select="COUNT")["Count"] == 6


def test_sample_writes_jsonl_or_loads_once(dynamo, tmp_path, capsys):
    out = tmp_path / "sample.jsonl"
    assert run_cli("runs", "sample", "--out", str(out)) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 480 and json.loads(lines[0])["id"].startswith("run-")
    assert run_cli("runs", "sample") == 0
    assert "sample of 480 runs loaded" in capsys.readouterr().out
    assert run_cli("runs", "sample") == 0
    assert "already holds runs" in capsys.readouterr().out


def test_repair_finds_no_difference_after_imports_and_fixes_what_was_broken(dynamo, sample_lines, tmp_path, capsys):
    from groundchat.store.run_views import CELLS, cell_entry, cell_view, list_view
    from groundchat.store.tables import RUN_VIEWS

    lines = [x for x in sample_lines if x["label"] == "round-3" and x["task"] in ("checkout-flow", "blog-article")]
    runs = tmp_path / "runs.jsonl"
    runs.write_text(jsonl(lines), encoding="utf-8")
    assert run_cli("runs", "import", str(runs)) == 0
    assert run_cli("runs", "import", str(runs)) == 0  # a re-import: nothing changes
    capsys.readouterr()
    assert run_cli("runs", "repair") == 0
    out = capsys.readouterr().out
    assert f"{len(lines)} run(s);" in out and "no difference" in out

    # Break the views three ways: a cell lost, a count wrong, an entry for a run that is not stored.
    views = dynamo.table(RUN_VIEWS)
    first = lines[0]
    lost = (cell_view(first["task"], first["label"]), cell_entry(first["model"], first["context"]))
    views.delete_item(Key={"view": lost[0], "entry": lost[1]})
    wrong = (CELLS, cell_entry(first["model"], first["context"]))
    views.update_item(Key={"view": wrong[0], "entry": wrong[1]}, UpdateExpression="ADD #r :one",
                      ExpressionAttributeNames={"#r": "runs"}, ExpressionAttributeValues={":one": 1})
    views.put_item(Item={"view": list_view({}), "entry": "2030-01-01T00:00:00Z#run-ghost", "cost_usd": 1, "row": "{}"})

    assert run_cli("runs", "repair") == 1
    out = capsys.readouterr().out
    assert f"missing: 1\n  {lost[0]} {lost[1]}" in out
    assert f"differing: 1\n  {wrong[0]} {wrong[1]}" in out
    assert "extra: 1\n  runs 2030-01-01T00:00:00Z#run-ghost" in out
    assert run_cli("runs", "repair", "--fix") == 0
    assert "fixed: 3; skipped (changed meanwhile, check again): 0" in capsys.readouterr().out
    assert run_cli("runs", "repair") == 0
    assert "no difference" in capsys.readouterr().out


def test_a_fix_never_overwrites_an_import_that_ran_meanwhile(dynamo, sample_lines):
    """Repair reads the views, then the runs; a run imported in between makes the cells it touched
    differ from what was read, so their fixes are refused (and the next check is clean)."""
    from groundchat.store.runs_import import import_text
    from groundchat_cli import run_repair
    from groundchat.store.runs import RunWriter

    writer = RunWriter(dynamo)
    import_text(writer, jsonl(sample_lines[:4]))
    real_pages = run_repair._pages
    calls = []

    def pages_then_import(call, kwargs):
        calls.append(kwargs)
        if len(calls) == 2:  # the views are read; the runs are next
            import_text(writer, jsonl(sample_lines[4:5]))
        return real_pages(call, kwargs)

    run_repair._pages = pages_then_import
    try:
        report = run_repair.check_views(dynamo, fix=True)
    finally:
        run_repair._pages = real_pages
    assert not report.clean and report.skipped > 0
    assert run_repair.check_views(dynamo).clean
