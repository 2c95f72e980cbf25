"""Powertools in every function: metrics as EMF lines, quiet and namespace-safe off Lambda."""
from __future__ import annotations

import importlib
import json
from decimal import Decimal

import pytest


@pytest.fixture
def observability(monkeypatch):
    for name in ("POWERTOOLS_METRICS_DISABLED", "POWERTOOLS_TRACE_DISABLED", "POWERTOOLS_METRICS_NAMESPACE", "AWS_LAMBDA_FUNCTION_NAME"):
        monkeypatch.delenv(name, raising=False)
    import groundchat.observability as module

    return module


def _emf(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.startswith('{"_aws"')]


def test_off_lambda_metrics_and_tracing_are_off_and_never_fail(observability, capsys, monkeypatch):
    module = importlib.reload(observability)
    import os

    assert os.environ["POWERTOOLS_TRACE_DISABLED"] == "true"
    assert os.environ["POWERTOOLS_METRICS_DISABLED"] == "true"
    module.record_answer(Decimal("0.0126"), 1200)
    module.record_refusal("spend-cap")
    assert _emf(capsys.readouterr().out) == []


def test_on_lambda_an_answer_is_one_emf_line_with_cost_and_tokens(observability, capsys, monkeypatch):
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "groundchat-chat")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "groundchat/prod")
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    observability.record_answer(Decimal("0.0126"), 1500, input_tokens=1200, output_tokens=300)
    (line,) = _emf(capsys.readouterr().out)
    assert line["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "groundchat/prod"
    assert line["AnswerCostUSD"] == [0.0126]
    assert line["AnswerTokens"] == [1500.0]
    assert line["InputTokens"] == [1200.0] and line["OutputTokens"] == [300.0]
    assert line["Answers"] == [1.0]


def test_refusals_by_code_and_cap_refusals_for_the_alarm(observability, capsys, monkeypatch):
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    observability.record_refusal("forbidden")
    observability.record_refusal("spend-cap")
    observability.record_refusal("quota", cap=True)
    lines = _emf(capsys.readouterr().out)
    refusals = [(l["code"], l["Refusals"]) for l in lines if "Refusals" in l]
    assert refusals == [("forbidden", [1.0]), ("spend-cap", [1.0]), ("quota", [1.0])]
    caps = [l for l in lines if "CapRefusals" in l]
    assert len(caps) == 2
    # No namespace configured: the default keeps the metric valid instead of raising.
    assert {l["_aws"]["CloudWatchMetrics"][0]["Namespace"] for l in lines} == {"groundchat"}
    assert caps[0]["service"] == "groundchat"


def test_concurrent_lines_do_not_mix(observability, capsys, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: observability.record_answer(Decimal(i) / 1000, i), range(1, 41)))
    lines = _emf(capsys.readouterr().out)
    assert len(lines) == 40
    assert sorted(l["AnswerTokens"][0] for l in lines) == [float(i) for i in range(1, 41)]
    assert all(len(l["AnswerTokens"]) == 1 for l in lines)
