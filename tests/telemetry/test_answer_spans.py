"""The answer's spans in the GenAI conventions, recorded by the real SDK in memory."""
from decimal import Decimal

from pydantic import BaseModel

from groundchat.chat.answer_run import LoopLimits
from groundchat.chat.loop import run_exchange
from groundchat.tools.base import Tool, ToolRegistry
from groundchat_testkit.answer_runs import kept_run
from groundchat_testkit.scripted import ScriptedModel, Step

KEY = "sk-proj-Abc123Def456Ghi789Jkl012"


class Query(BaseModel):
    query: str


async def search_docs(ctx, args):
    return {"outcome": "empty", "excerpts": []}


async def allow_all(permission, caller):
    return True


async def answer(question="What does 1.4.3 need?"):
    registry = ToolRegistry([Tool(name="search_docs", grounding="text", drawer="excerpts", offline_template="excerpts", description="search", input_model=Query, permission="docs.read",
                                  handler=search_docs)], allow_all)
    model = ScriptedModel([Step(tool_calls=[("search_docs", {"query": question})]), Step(text="It needs contrast.")])
    run = await kept_run(model, registry, system="sys", question=question, conversation_id="c1", run_id="r1",
                         limits=LoopLimits())
    return [frame async for frame in run_exchange(run)]


async def test_an_answer_is_an_invoke_agent_span_with_a_chat_span_per_step_and_a_tool_span_per_call(recorded):
    frames = await answer()
    assert frames[-1].type == "done"
    agent = recorded.named("invoke_agent")
    assert len(agent) == 1
    top = agent[0]
    assert top.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert top.attributes["gen_ai.conversation.id"] == "c1"
    assert top.attributes["groundchat.run.id"] == "r1"
    assert top.attributes["groundchat.answer.outcome"] == "complete"
    assert Decimal(top.attributes["groundchat.answer.cost_usd"]) == Decimal(0)
    chats = recorded.named("chat ")
    assert [s.attributes["groundchat.step"] for s in chats] == [0, 1]
    assert all(s.parent.span_id == top.context.span_id for s in chats)
    assert all(s.context.trace_id == top.context.trace_id for s in recorded.finished())
    assert chats[1].attributes["gen_ai.response.time_to_first_chunk"] >= 0
    tool = recorded.named("execute_tool")[0]
    assert tool.name == "execute_tool search_docs"
    assert tool.attributes["gen_ai.tool.name"] == "search_docs"
    assert tool.attributes["gen_ai.tool.call.id"]
    assert tool.attributes["groundchat.search.outcome"] == "empty"
    assert tool.parent.span_id == top.context.span_id


async def test_no_question_text_leaves_unless_capture_is_on(recorded, monkeypatch):
    await answer(f"Is my key {KEY} leaked?")
    dumped = " ".join(str(dict(s.attributes)) for s in recorded.finished())
    assert KEY not in dumped and "leaked" not in dumped
    assert not any("gen_ai.input.messages" in s.attributes for s in recorded.finished())


async def test_captured_content_is_redacted(recorded, monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    await answer(f"Is my key {KEY} leaked? Mail me at ada@example.org")
    top = recorded.named("invoke_agent")[0]
    question = top.attributes["gen_ai.input.messages"]
    assert "leaked" in question and KEY not in question and "ada@example.org" not in question
    assert "It needs contrast." in top.attributes["gen_ai.output.messages"]
    dumped = " ".join(str(dict(s.attributes)) for s in recorded.finished())
    assert KEY not in dumped


async def test_model_steps_are_metrics_in_the_conventions(recorded):
    await answer()
    durations = recorded.metric_points("gen_ai.client.operation.duration")
    assert sum(p.count for p in durations) == 2
    answers = recorded.metric_points("groundchat.answers")
    assert [(dict(p.attributes), p.value) for p in answers] == [({"groundchat.answer.outcome": "complete"}, 1)]


async def test_nothing_is_recorded_when_export_is_off():
    from groundchat import telemetry

    telemetry.install(None)
    frames = await answer()
    assert frames[-1].type == "done"
    assert telemetry.start("x") is telemetry.NO_SPAN


async def test_in_lambda_the_spans_leave_after_the_last_frame_and_before_the_stream_ends(monkeypatch):
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from groundchat import telemetry
    from groundchat.telemetry import sdk

    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "groundchat-chat")
    exported = InMemorySpanExporter()
    # A batch that would wait a minute: only the answer's own flush sends it in time.
    built = sdk.build(BatchSpanProcessor(exported, schedule_delay_millis=60_000), InMemoryMetricReader())
    telemetry.install(built)
    try:
        registry = ToolRegistry([Tool(name="search_docs", grounding="text", drawer="excerpts", offline_template="excerpts", description="search", input_model=Query, permission="docs.read",
                                      handler=search_docs)], allow_all)
        model = ScriptedModel([Step(text="Hello.")])
        run = await kept_run(model, registry, system="sys", question="Hi?", conversation_id="c1", run_id="r1",
                             limits=LoopLimits())
        frames = run_exchange(run)
        seen_at_done = None
        async for frame in frames:
            if frame.type == "done":
                seen_at_done = len(exported.get_finished_spans())
        assert seen_at_done == 0  # the done frame went out before any flush
        assert {s.name for s in exported.get_finished_spans()} >= {"invoke_agent groundchat", "chat scripted"}
    finally:
        telemetry.install(None)
        built.shutdown()
        telemetry.reset()
