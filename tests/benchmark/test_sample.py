"""The sample benchmark: fixed, big enough, real axe facts, and shaped like a real benchmark."""
from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from statistics import mean

from groundchat.benchmark.axe_rules import load_rules
from groundchat.store.runs_import import parse_runs
from groundchat_cli.sample import CONTEXTS, generate_runs, load_sample_if_empty, sample_jsonl

from tests.benchmark.conftest import jsonl


def test_fixed_seed_gives_the_same_runs():
    assert sample_jsonl() == sample_jsonl()
    assert sample_jsonl(seed=1) != sample_jsonl()


def test_dimensions_and_outcomes(sample_lines):
    assert 300 <= len(sample_lines) <= 600
    dims = {k: {line[k] for line in sample_lines} for k in ("model", "context", "task", "label")}
    assert (len(dims["model"]), len(dims["context"]), len(dims["task"]), len(dims["label"])) >= (5, 4, 8, 3)
    outcomes = defaultdict(int)
    for line in sample_lines:
        outcomes[line["outcome"]] += 1
    assert outcomes["failed"] >= 10 and outcomes["timeout"] >= 10 and outcomes["completed"] > 0.8 * len(sample_lines)
    assert all(("axe" in line) == (line["outcome"] == "completed") for line in sample_lines)


def test_it_passes_its_own_import(sample_lines):
    runs, errors = parse_runs(jsonl(sample_lines))
    assert errors == [] and len(runs) == len(sample_lines)


def test_violations_use_real_axe_facts(sample_lines):
    facts = load_rules()
    seen = set()
    for line in sample_lines:
        for v in (line.get("axe") or {}).get("violations", []):
            seen.add(v["id"])
            assert v["id"] in facts
            assert v["impact"] == facts.impact(v["id"]) and v["tags"] == facts.tags(v["id"])
            assert v["nodes"] and all(n["target"] and n["html"] for n in v["nodes"])
    assert len(seen) >= 30


def test_more_context_means_fewer_violations_and_higher_cost(sample_lines):
    order = [c.name for c in CONTEXTS]
    violations, cost = defaultdict(list), defaultdict(list)
    for line in sample_lines:
        if line.get("axe"):
            violations[line["context"]].append(len(line["axe"]["violations"]))
        cost[line["context"]].append(Decimal(line["cost_usd"]))
    mean_v = [mean(violations[c]) for c in order]
    mean_c = [sum(cost[c]) / len(cost[c]) for c in order]
    assert mean_v == sorted(mean_v, reverse=True) and mean_v[0] > 2 * mean_v[-1]
    assert mean_c == sorted(mean_c) and mean_c[-1] > 2 * mean_c[0]


async def test_load_sample_if_empty_loads_once(dynamo, queries):
    assert await load_sample_if_empty(dynamo) == len(generate_runs())
    assert await load_sample_if_empty(dynamo) == 0
    assert len(await queries.all_runs()) == len(generate_runs())


async def test_sample_is_not_mixed_into_real_data(dynamo, writer, queries):
    from groundchat.store.runs_import import import_text

    line = generate_runs()[0]
    import_text(writer, jsonl([{**line, "id": "run-real-1"}]))
    assert await load_sample_if_empty(dynamo) == 0
    assert [r.run_id for r in await queries.all_runs()] == ["run-real-1"]


def test_the_infra_wrapper_writes_the_same_jsonl(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "infra" / "sample" / "generate.py"
    out = tmp_path / "runs.jsonl"
    subprocess.run([sys.executable, str(script), "--out", str(out)], check=True, capture_output=True)
    assert out.read_text(encoding="utf-8") == sample_jsonl()
