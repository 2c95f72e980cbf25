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
