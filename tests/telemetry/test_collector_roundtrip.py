"""A real answer's spans and metrics, exported over OTLP/HTTP to a real collector (Jaeger v2, built by
`make test` into the cache) and read back through the collector's own query API and its metrics page."""
from __future__ import annotations

import json
import os
import time
from decimal import Decimal

import httpx
import pytest

from groundchat import telemetry
from groundchat.auth.callers import CHAT_USE, DOCS_READ, RUNS_READ
from groundchat.auth.tokens import issue_dev_token
from groundchat.services import Services
from groundchat_cli import collector as jaeger
from groundchat_cli.collector import spans_of
from groundchat_testkit.scripted import ScriptedModel, Step

CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
KEY = "sk-proj-Zq81Xw72Lm55Pk09Rt44Yv31"


@pytest.fixture(scope="module")
def collector():
    binary = jaeger.jaeger_binary()
    if not binary.exists():
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"Jaeger is not built at {binary}: `make test` builds it (python -m groundchat_cli.collector build)")
        pytest.skip(f"Jaeger is not built at {binary}: python -m groundchat_cli.collector build")
    running = jaeger.start(binary)
    yield running
    running.stop()


@pytest.fixture
def exporting(collector, monkeypatch):
    """Export on, by the standard variables alone, to the collector."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.otlp_endpoint)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "groundchat-test")
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    telemetry.reset()
    assert telemetry.enabled()
    yield collector
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT")
    telemetry.reset()


def read_trace(collector, trace_id: str, *, until) -> list[dict]:
    """The trace once `until(spans)` holds (the collector batches for 100 ms), or what it holds at the end."""
    telemetry.flush()
    spans: list[dict] = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            spans = spans_of(collector.trace(trace_id))
        except OSError:
            spans = []  # not stored yet: the query API answers 404
        if until(spans):
            return spans
        time.sleep(0.2)
    return spans


def app_for(settings, dynamo, model, tools, docs=None, grants=(CHAT_USE, RUNS_READ, DOCS_READ)):
    from chat_function.app import create_app

    services = Services(settings=settings, dynamo=dynamo, model_override=model, tools_override=tools)
    if docs is not None:
        services.docs_override = docs
    services.users.table.put_item(Item={"user_id": "olga", "grants": set(grants)})
    return create_app(services)


async def ask(settings, app, question: str, *, traceparent: str | None = None) -> list[tuple[str, dict]]:
    headers = {"authorization": f"Bearer {issue_dev_token(settings, 'olga')}", "accept": "text/event-stream"}
    if traceparent:
        headers["traceparent"] = traceparent
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        response = await client.post("/api/chat", json={"message": question}, headers=headers)
    assert response.status_code == 200, response.text
    frames = []
    for block in response.text.strip().split("\n\n"):
        lines = [line for line in block.splitlines() if line and not line.startswith(":")]
        if lines:
            event = next(line[7:] for line in lines if line.startswith("event: "))
            frames.append((event, json.loads("".join(line[6:] for line in lines if line.startswith("data: ")))))
    return frames


async def test_an_offline_answer_arrives_as_a_span_tree_under_the_callers_trace(exporting, settings, dynamo, real_search):
    from groundchat.offline.answerer import OfflineAnswerer
    from groundchat.tools.catalog import all_tools

    app = app_for(settings, dynamo, OfflineAnswerer(), all_tools(), docs=real_search)
    frames = await ask(settings, app, "What does success criterion 1.4.3 require?",
                       traceparent=f"00-{CALLER_TRACE}-{CALLER_SPAN}-01")
    done = frames[-1][1]
    assert frames[-1][0] == "done" and done["reason"] == "complete"
    calls = [data for event, data in frames if event == "tool-call"]
    assert calls, "the offline answerer looked something up"

    spans = read_trace(exporting, CALLER_TRACE, until=lambda s: any(x["name"].startswith("invoke_agent") for x in s))
    by_id = {s["id"]: s for s in spans}
    [answer] = [s for s in spans if s["name"] == "invoke_agent groundchat"]
    assert answer["parent"] == CALLER_SPAN  # the caller's span, which the collector never received
    assert answer["attrs"]["gen_ai.operation.name"] == "invoke_agent"
    assert answer["attrs"]["gen_ai.conversation.id"] == frames[0][1]["conversation_id"]
    assert answer["attrs"]["groundchat.run.id"] == done["run_id"]
    assert answer["attrs"]["groundchat.answer.outcome"] == "complete"
    assert Decimal(answer["attrs"]["groundchat.answer.cost_usd"]) == Decimal(done["cost"])

    [precheck] = [s for s in spans if s["attrs"].get("groundchat.spend.phase") == "precheck"]
    assert precheck["parent"] == CALLER_SPAN and precheck["name"] == "groundchat.spend.reserve"

    steps = [s for s in spans if s["attrs"].get("gen_ai.operation.name") == "chat"]
    assert len(steps) >= 2 and all(s["parent"] == answer["id"] for s in steps)
    for step in steps:
        assert step["name"] == "chat offline"
        assert step["attrs"]["gen_ai.provider.name"] == "groundchat.offline"
        assert step["attrs"]["gen_ai.request.model"] == "offline"
        assert step["attrs"]["gen_ai.usage.input_tokens"] == 0 and step["attrs"]["gen_ai.usage.output_tokens"] == 0
        assert step["attrs"]["gen_ai.response.finish_reasons"]
        children = {by_id[c]["name"] for c in by_id if by_id[c]["parent"] == step["id"]}
        assert children == {"groundchat.spend.reserve", "groundchat.spend.settle"}
    assert any("gen_ai.response.time_to_first_chunk" in s["attrs"] for s in steps)

    tools = [s for s in spans if s["attrs"].get("gen_ai.operation.name") == "execute_tool"]
    assert sorted(s["attrs"]["gen_ai.tool.call.id"] for s in tools) == sorted(c["id"] for c in calls)
    assert all(s["parent"] == answer["id"] and s["name"] == f"execute_tool {s['attrs']['gen_ai.tool.name']}" for s in tools)
    searches = [s for s in spans if s["attrs"].get("gen_ai.operation.name") == "retrieval"]
    assert searches, "a search ran under a tool call"
    for search in searches:
        assert by_id[search["parent"]]["attrs"]["gen_ai.operation.name"] == "execute_tool"
        assert search["attrs"]["gen_ai.data_source.id"] == "embedded"
        assert search["attrs"]["groundchat.search.outcome"] in ("hit", "empty")
        [legs] = [s for s in spans if s["parent"] == search["id"] and s["name"] == "groundchat.search.legs"]
        leg_names = {s["attrs"]["groundchat.search.leg"] for s in spans if s["parent"] == legs["id"]}
        assert {"bm25", "vector"} <= leg_names
    search_tool = next(s for s in tools if s["attrs"]["gen_ai.tool.name"] == "search_docs")
    assert search_tool["attrs"]["groundchat.search.outcome"] in ("hit", "empty")


def priced_scripted(tmp_path, monkeypatch):
    prices = tmp_path / "priced.json"
    prices.write_text('{"scripted": {"input_per_mtok": "3", "output_per_mtok": "15", "trust_provider_cost": false}}')
    monkeypatch.setenv("GROUNDCHAT_PRICES_FILE", str(prices))
    from groundchat.config import get_settings, reset_settings_cache

    reset_settings_cache()
    return get_settings()


def keyed_answer(question: str) -> ScriptedModel:
    return ScriptedModel([Step(tool_calls=[("search_docs", {"query": question})], input_tokens=1200, output_tokens=40),
                          Step(text="Never paste a key into a chat.", input_tokens=1500, output_tokens=12)])


async def test_no_key_and_no_question_reach_the_collector_and_tokens_and_cost_do(exporting, dynamo, real_search,
                                                                                tmp_path, monkeypatch):
    from groundchat.tools.docs_tools import search_docs

    settings = priced_scripted(tmp_path, monkeypatch)
    question = f"Is the key {KEY} safe to share with accessibility auditors?"
    app = app_for(settings, dynamo, keyed_answer(question), [search_docs], docs=real_search)
    frames = await ask(settings, app, question)
    done = frames[-1][1]
    assert done["reason"] == "complete" and Decimal(done["cost"]) > 0

    spans = read_trace(exporting, _trace_of(exporting, done["run_id"]), until=lambda s: len(s) >= 8)
    dumped = json.dumps(spans)
    assert KEY not in dumped and "auditors" not in dumped  # neither the key nor the question's words
    [answer] = [s for s in spans if s["name"] == "invoke_agent groundchat"]
    assert "gen_ai.input.messages" not in answer["attrs"] and "gen_ai.output.messages" not in answer["attrs"]
    assert (answer["attrs"]["gen_ai.usage.input_tokens"], answer["attrs"]["gen_ai.usage.output_tokens"]) == (2700, 52)
    assert Decimal(answer["attrs"]["groundchat.answer.cost_usd"]) == Decimal(done["cost"])
    steps = sorted((s for s in spans if s["attrs"].get("gen_ai.operation.name") == "chat"),
                   key=lambda s: s["attrs"]["groundchat.step"])
    assert [(s["attrs"]["gen_ai.usage.input_tokens"], s["attrs"]["gen_ai.usage.output_tokens"]) for s in steps] \
        == [(1200, 40), (1500, 12)]
    assert [s["attrs"]["gen_ai.response.finish_reasons"] for s in steps] == [["tool_use"], ["end_turn"]]
    assert all(Decimal(s["attrs"]["groundchat.step.cost_usd"]) > 0 for s in steps)

    metrics = _metrics_once(exporting, "gen_ai_client_token_usage")
    assert 'gen_ai_token_type="input"' in metrics and 'gen_ai_request_model="scripted"' in metrics
    assert "gen_ai_client_operation_duration" in metrics and "groundchat_answers" in metrics


async def test_with_capture_on_the_question_arrives_without_its_key(exporting, dynamo, real_search, tmp_path, monkeypatch):
    from groundchat.tools.docs_tools import search_docs

    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    settings = priced_scripted(tmp_path, monkeypatch)
    question = f"Is the key {KEY} safe to share with accessibility auditors?"
    app = app_for(settings, dynamo, keyed_answer(question), [search_docs], docs=real_search)
    frames = await ask(settings, app, question)
    spans = read_trace(exporting, _trace_of(exporting, frames[-1][1]["run_id"]), until=lambda s: len(s) >= 8)
    assert KEY not in json.dumps(spans)
    [answer] = [s for s in spans if s["name"] == "invoke_agent groundchat"]
    [message] = json.loads(answer["attrs"]["gen_ai.input.messages"])
    assert message["role"] == "user" and "auditors" in message["parts"][0]["content"]
    assert "sk-[redacted]" in message["parts"][0]["content"]
    assert "Never paste a key" in answer["attrs"]["gen_ai.output.messages"]
    [search] = [s for s in spans if s["attrs"].get("gen_ai.operation.name") == "retrieval"]
    assert "auditors" in search["attrs"]["gen_ai.retrieval.query.text"] and KEY not in search["attrs"]["gen_ai.retrieval.query.text"]


def _trace_of(collector, run_id: str) -> str:
    """The trace id of the answer with this run id, found through the query API's search."""
    telemetry.flush()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        query = ("query.service_name=groundchat-test&query.start_time_min=2000-01-01T00:00:00Z"
                 "&query.start_time_max=2100-01-01T00:00:00Z&query.num_traces=100")
        try:
            with httpx.Client(timeout=10) as client:
                found = client.get(f"{collector.query_url}/api/v3/traces?{query}")
            if found.status_code == 200:
                for span in spans_of(found.json()):
                    if span["attrs"].get("groundchat.run.id") == run_id:
                        return span["trace"]
        except (httpx.HTTPError, KeyError, ValueError):
            pass
        time.sleep(0.2)
    raise AssertionError(f"no trace with run {run_id} in the collector")


def _metrics_once(collector, name: str) -> str:
    telemetry.flush()
    deadline = time.monotonic() + 20
    text = ""
    while time.monotonic() < deadline:
        text = collector.metrics_text()
        if name in text:
            return text
        time.sleep(0.2)
    return text
