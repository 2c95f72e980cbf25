"""The ingest function as Lambda runs it: powertools around the handler, the summary returned and logged."""
from __future__ import annotations

import json
import logging
from pathlib import Path

from groundchat.search.ingest import IngestSummary, SourceChange
from tests.lambda_support import LambdaContext




def _wire(monkeypatch, summary: IngestSummary) -> list[dict]:
    from ingest_function import handler as module

    runs: list[dict] = []

    def run_ingest(specs, store, embedder, *, force=False, **_):
        runs.append({"specs": specs, "store": store, "embedder": embedder, "force": force})
        return summary

    monkeypatch.setattr(module, "specs_for", lambda settings, workdir: ["wcag", "eaa"] if Path(workdir).is_dir() else None)
    monkeypatch.setattr(module, "open_index_store", lambda settings: "store")
    monkeypatch.setattr(module, "make_embedder", lambda model, region=None: "embedder")
    monkeypatch.setattr(module, "run_ingest", run_ingest)
    return runs


def test_the_handler_runs_the_ingest_and_returns_and_logs_its_summary(monkeypatch, caplog):
    from ingest_function.handler import handler

    summary = IngestSummary(changed=True, model_id="bedrock:amazon.titan-embed-text-v2:0", total_chunks=7, seconds=1.234,
                            sources=[SourceChange("wcag", "converted", chunks=5, added=5, embedded=5), SourceChange("eaa", "unchanged", chunks=2)])
    runs = _wire(monkeypatch, summary)

    with caplog.at_level(logging.INFO):
        result = handler({"force": True}, LambdaContext())

    assert runs == [{"specs": ["wcag", "eaa"], "store": "store", "embedder": "embedder", "force": True}]
    assert result["changed"] is True and result["total_chunks"] == 7 and result["seconds"] == 1.23
    assert [s["source"] for s in result["sources"]] == ["wcag", "eaa"]
    assert result["summary"] == summary.lines()
    json.dumps(result)
    # Logged through the powertools Logger, with the Lambda context injected.
    from groundchat.observability import logger

    [record] = [r for r in caplog.records if r.getMessage() == "ingest finished"]
    line = json.loads(logger.registered_formatter.format(record))  # the JSON line CloudWatch gets
    assert line["total_chunks"] == 7 and line["summary"] == summary.lines() and line["changed"] is True
    assert line["function_request_id"] == LambdaContext.aws_request_id
    assert line["function_name"] == LambdaContext.function_name


def test_a_scheduled_run_is_not_forced_and_says_when_nothing_changed(monkeypatch, caplog):
    from ingest_function.handler import handler

    runs = _wire(monkeypatch, IngestSummary(changed=False, model_id="m", reason="every source hash and the model match"))
    with caplog.at_level(logging.INFO):
        result = handler({"source": "aws.events", "detail-type": "Scheduled Event"}, LambdaContext())
    assert runs[0]["force"] is False
    assert result["changed"] is False
    assert result["summary"] == ["nothing changed (every source hash and the model match); the serving index was kept"]
    assert any(r.getMessage() == "ingest finished: nothing changed" for r in caplog.records)
