"""Import: real axe-core results in; bad files reported by line and never half-written."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest

from groundchat.store.runs_import import import_file, import_text, parse_runs

from tests.benchmark.conftest import jsonl

AXE_PAGES = ("signup", "products", "pricing", "header", "modal", "article")


def axe_result(violations=None) -> dict:
    return {
        "testEngine": {"name": "axe-core", "version": "4.14.1"},
        "violations": violations
        if violations is not None
        else [
            {
                "id": "image-alt",
                "impact": "critical",
                "tags": ["cat.text-alternatives", "wcag2a", "wcag111"],
                "nodes": [{"target": ["img.hero"], "html": "<img class=hero>", "failureSummary": "Fix all"}],
            }
        ],
        "passes": [],
        "incomplete": [],
    }


def run_line(run_id: str = "run-1", **overrides) -> dict:
    line = {
        "id": run_id,
        "model": "m1",
        "context": "none",
        "task": "signup-form",
        "label": "round-1",
        "started_at": "2026-11-30T09:00:00Z",
        "finished_at": "2026-11-30T09:03:30Z",
        "outcome": "completed",
        "cost_usd": "0.0126",
        "tokens": {"input": 1200, "output": 800},
        "axe": axe_result(),
    }
    line.update(overrides)
    return line


def count_items(dynamo) -> int:
    from groundchat.store.tables import RUNS

    return dynamo.client.scan(TableName=dynamo.name(RUNS), Select="COUNT")["Count"]


async def test_real_axe_results_import_with_their_violations(corpus_dir, writer, queries, tmp_path):
    folder = corpus_dir / "axe-results"
    lines = []
    results = {}
    for i, page in enumerate(AXE_PAGES):
        result = json.loads((folder / f"{page}.json").read_text(encoding="utf-8"))
        results[page] = result
        lines.append(run_line(f"real-{page}", task=page, started_at=f"2026-11-30T09:0{i}:00Z",
                              finished_at=f"2026-11-30T09:0{i}:40Z", axe=result))
    path = tmp_path / "real.jsonl"
    path.write_text(jsonl(lines), encoding="utf-8")
    report = import_file(writer, path)
    assert report.errors == [] and sorted(report.imported) == sorted(f"real-{p}" for p in AXE_PAGES)

    for page, result in results.items():
        run = await queries.get_run(f"real-{page}")
        assert run.axe_version == "4.14.1" and run.graded
        assert [v.rule_id for v in run.violations] == [v["id"] for v in result["violations"]]
        for stored, src in zip(run.violations, result["violations"]):
            assert stored.impact == src["impact"]
            assert stored.tags == src["tags"]
            assert stored.node_count == len(src["nodes"])
            assert stored.nodes[0].target == " ".join(src["nodes"][0]["target"])
            assert stored.nodes[0].failure_summary == src["nodes"][0]["failureSummary"]
            assert stored.nodes[0].html == src["nodes"][0]["html"]
        # "incomplete" results need review: they are not violations.
        assert "duplicate-id-aria" not in {v.rule_id for v in run.violations}

    # The README's counts, straight from the results: 4+5+4+5+4+1 violations.
    rows = await queries.overview()
    assert rows[0].violations == 23 and rows[0].graded_runs == 6
    counts = await queries.rule_counts()
    assert (counts.rules[0].rule_id, counts.rules[0].runs) == ("color-contrast", 5)


async def test_reimport_is_a_no_op(writer, queries, dynamo):
    text = jsonl([run_line("run-1"), run_line("run-2", started_at="2026-11-30T10:00:00Z", finished_at=None)])
    first = import_text(writer, text)
    assert first.imported == ["run-1", "run-2"] and first.skipped == []
    items = count_items(dynamo)
    second = import_text(writer, text)
    assert second.imported == [] and second.skipped == ["run-1", "run-2"]
    assert count_items(dynamo) == items == 4  # two items per run, none added
    runs, _ = await queries.list_runs()
    assert [r.run_id for r in runs] == ["run-2", "run-1"]


async def test_reimport_with_changed_values_keeps_the_first(writer, queries):
    import_text(writer, jsonl([run_line("run-1", cost_usd="0.5")]))
    report = import_text(writer, jsonl([run_line("run-1", cost_usd="9.0"), run_line("run-9")]))
    assert report.imported == ["run-9"] and report.skipped == ["run-1"]
    assert (await queries.get_run("run-1")).cost_usd == Decimal("0.5")


def test_a_bad_file_writes_nothing_and_names_every_bad_line(writer, dynamo):
    good = json.dumps(run_line("run-1"))
    missing = run_line("run-3")
    del missing["model"]
    lines = [
        good,
        "{not json",
        json.dumps(missing),
        json.dumps(run_line("run-4", cost_usd="a lot")),
        json.dumps(run_line("run-5", tokens={"input": -1, "output": 2})),
        "",
        json.dumps(run_line("run-7", axe={"testEngine": {"version": "4.14.1"}, "violations": [{"id": "x", "tags": "wcag2a", "nodes": []}]})),
        json.dumps(run_line("run-1")),
        json.dumps([1, 2]),
        json.dumps(run_line("run-10", outcome="crashed")),
        json.dumps(run_line("run-11", axe=None)),
        json.dumps(run_line("run-12", started_at="2026-11-30T09:00:00")),
    ]
    report = import_text(writer, "\n".join(lines) + "\n")
    by_line = {e.line: e.message for e in report.errors}
    assert sorted(by_line) == [2, 3, 4, 5, 7, 8, 9, 10, 11, 12]
    assert "not valid JSON" in by_line[2]
    assert "model" in by_line[3] and "Field required" in by_line[3]
    assert "cost_usd" in by_line[4]
    assert "tokens.input" in by_line[5]
    assert "axe.violations.0.tags" in by_line[7]
    assert "repeats line 1" in by_line[8]
    assert "JSON object" in by_line[9]
    assert "outcome" in by_line[10]
    assert "axe result" in by_line[11]
    assert "time zone" in by_line[12]
    assert report.imported == []
    assert count_items(dynamo) == 0  # the good first line was not written either


def test_files_are_atomic_each(writer, dynamo, tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text(jsonl([run_line("run-1"), run_line("run-2")]), encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(jsonl([run_line("run-3")]) + '{"id": "run-4"}\n', encoding="utf-8")
    assert import_file(writer, bad).errors[0].line == 2
    assert count_items(dynamo) == 0
    assert import_file(writer, good).imported == ["run-1", "run-2"]
    assert count_items(dynamo) == 4


def test_missing_file_and_empty_file_are_reported(writer, tmp_path):
    assert "cannot read" in import_file(writer, tmp_path / "absent.jsonl").errors[0].message
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    assert "no runs" in import_file(writer, empty).errors[0].message


def test_money_stays_exact_and_durations_come_from_timestamps():
    runs, errors = parse_runs('{"id": "r1", "model": "m", "context": "none", "task": "t", "label": "l", '
                              '"started_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T00:02:05.5Z", '
                              '"outcome": "failed", "cost_usd": 0.1, "tokens": {"input": 1, "output": 2}}')
    assert errors == []
    assert runs[0].cost_usd == Decimal("0.1")  # parsed as Decimal, not the float 0.1000000000000000055…
    assert runs[0].duration_seconds == Decimal("125.5")
    assert runs[0].graded is False and runs[0].violations == []


def test_shadow_dom_targets_and_long_snippets_are_kept_within_limits():
    from groundchat.store.runs import MAX_HTML_CHARS, MAX_NODES_PER_VIOLATION, fit_violations

    nodes = [{"target": [["my-widget", "button.x"]], "html": "<b>" + "x" * 5000, "failureSummary": "f"}] * 8
    runs, errors = parse_runs(json.dumps(run_line(axe=axe_result([{"id": "button-name", "impact": "critical",
                                                                       "tags": ["wcag412"], "nodes": nodes}]))))
    assert errors == []
    v = runs[0].violations[0]
    assert v.node_count == 8 and v.nodes[0].target == "my-widget >>> button.x"
    stored = fit_violations(runs[0].violations)[0]
    assert len(stored["nodes"]) == MAX_NODES_PER_VIOLATION
    assert len(stored["nodes"][0]["html"]) == MAX_HTML_CHARS
    assert stored["node_count"] == 8  # the count is the full count, not the kept nodes


async def test_a_run_half_written_by_an_interrupted_import_is_finished_by_the_next(writer, queries, dynamo):
    from groundchat.store.runs import _detail_item
    from groundchat.store.tables import RUNS

    run = parse_runs(json.dumps(run_line("run-1")))[0][0]
    # Interrupted after the first of its two writes: invisible to every query.
    dynamo.table(RUNS).put_item(Item=_detail_item(run))
    assert await queries.get_run("run-1") is None
    assert (await queries.list_runs())[0] == []
    report = import_text(writer, jsonl([run_line("run-1")]))
    assert report.imported == ["run-1"]
    assert (await queries.get_run("run-1")).violations[0].rule_id == "image-alt"
