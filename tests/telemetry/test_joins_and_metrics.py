"""A caller's trace is joined (HTTP `traceparent`, MCP `_meta`), refusals and feedback are counted,
and with export off nothing of the SDK is loaded, at a cold start or on an answer."""
import json
import subprocess
import sys

import httpx
from pydantic import BaseModel

from groundchat.auth.callers import CHAT_USE, RUNS_READ, Caller
from groundchat.auth.tokens import issue_dev_token
from groundchat.observability import record_refusal
from groundchat.services import Services
from groundchat.telemetry import metrics
from groundchat.tools.base import Tool
from groundchat_testkit.scripted import ScriptedModel, Step

TRACE = "0af7651916cd43dd8448eb211c80319c"
PARENT = "b7ad6b7169203331"


class Filter(BaseModel):
    context: str = "all"


async def compare(ctx, args):
    return {"rows": [{"context": args.context, "mean_violations": 3.5}]}


TOOLS = [Tool(name="compare_contexts", grounding="figures", drawer="contexts", offline_template="contexts", description="compare", input_model=Filter, permission=RUNS_READ, handler=compare)]


def services_for(settings, dynamo, model=None):
    services = Services(settings=settings, dynamo=dynamo, model_override=model, tools_override=TOOLS)
    services.users.table.put_item(Item={"user_id": "ida", "grants": {CHAT_USE, RUNS_READ}})
    return services


async def test_a_traceparent_header_makes_the_answer_a_child_of_the_callers_span(recorded, settings, dynamo):
    from chat_function.app import create_app

    model = ScriptedModel([Step(tool_calls=[("compare_contexts", {})]), Step(text="Checklists win.")])
    app = create_app(services_for(settings, dynamo, model))
    headers = {"authorization": f"Bearer {issue_dev_token(settings, 'ida')}", "accept": "text/event-stream",
               "traceparent": f"00-{TRACE}-{PARENT}-01"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        response = await client.post("/api/chat", json={"message": "Which context is best?"}, headers=headers)
    assert response.status_code == 200 and "event: done" in response.text
    [answer] = recorded.named("invoke_agent")
    assert format(answer.context.trace_id, "032x") == TRACE
    assert format(answer.parent.span_id, "016x") == PARENT and answer.parent.is_remote
    assert {format(s.context.trace_id, "032x") for s in recorded.finished()} == {TRACE}


async def test_without_a_traceparent_the_answer_starts_its_own_trace(recorded, settings, dynamo):
    from chat_function.app import create_app

    app = create_app(services_for(settings, dynamo, ScriptedModel([Step(text="Hello.")])))
    headers = {"authorization": f"Bearer {issue_dev_token(settings, 'ida')}", "accept": "text/event-stream"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        await client.post("/api/chat", json={"message": "Hello?"}, headers=headers)
    [answer] = recorded.named("invoke_agent")
    assert answer.parent is None
    # The precheck's reservation is not a trace of its own when nobody sent one.
    assert not [s for s in recorded.finished() if s.attributes.get("groundchat.spend.phase") == "precheck"]


async def test_an_mcp_call_with_meta_traceparent_joins_the_hosts_trace(recorded, settings, dynamo):
    from groundchat.mcp.tool_calls import McpTools

    tools = McpTools(services_for(settings, dynamo))
    caller = Caller(id="ida")
    result = await tools.call(caller, "compare_contexts", {"context": "none"}, {"traceparent": f"00-{TRACE}-{PARENT}-01"})
    assert result.outcome == "complete"
    [span] = recorded.named("execute_tool")
    assert span.name == "execute_tool compare_contexts"
    assert format(span.context.trace_id, "032x") == TRACE and format(span.parent.span_id, "016x") == PARENT
    assert span.attributes["groundchat.run.id"] == result.run_id
    assert span.attributes["groundchat.tool.outcome"] == "ok"


def test_cap_and_busy_refusals_and_feedback_reasons_are_counted(recorded):
    record_refusal("spend-cap")
    record_refusal("spend-busy", cap=False)
    record_refusal("forbidden")
    metrics.feedback("down", ["wrong-number", "wrong-citation"])
    caps = recorded.metric_points("groundchat.cap_refusals")
    assert [(dict(p.attributes), p.value) for p in caps] == [({"groundchat.refusal.code": "spend-cap"}, 1)]
    busy = recorded.metric_points("groundchat.spend_busy_refusals")
    assert [(dict(p.attributes), p.value) for p in busy] == [({"groundchat.refusal.code": "spend-busy"}, 1)]
    reasons = sorted((p.attributes["groundchat.feedback.reason"], p.value) for p in recorded.metric_points("groundchat.feedback"))
    assert reasons == [("wrong-citation", 1), ("wrong-number", 1)]


def test_with_export_off_an_answer_loads_nothing_of_the_sdk(tmp_path):
    code = """
import asyncio, json, os, sys
for k in [k for k in os.environ if k.startswith("OTEL_")]:
    del os.environ[k]
import chat_function.main
from groundchat.chat.answer_run import LoopLimits
from groundchat.chat.loop import run_exchange
from groundchat.tools.base import ToolRegistry
from groundchat_testkit.answer_runs import kept_run
from groundchat_testkit.scripted import ScriptedModel, Step

async def main():
    run = await kept_run(ScriptedModel([Step(text="Hi.")]), ToolRegistry([], None), system="s", question="q",
                         conversation_id="c", run_id="r", limits=LoopLimits())
    return [f.type async for f in run_exchange(run)]

types = asyncio.run(main())
print(json.dumps([types, sorted(m for m in sys.modules if m.startswith(("opentelemetry.sdk", "opentelemetry.exporter", "google.protobuf")))]))
"""
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    types, loaded = json.loads(out.strip().splitlines()[-1])
    assert types[-1] == "done"
    assert loaded == []
