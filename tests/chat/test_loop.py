"""The loop: frames, done exactly once on every exit path, and what the model sees."""
import asyncio

import pytest
from pydantic import BaseModel

from groundchat.auth.callers import Caller
from groundchat.chat.answer_run import LoopLimits
from groundchat.chat.loop import run_exchange
from groundchat_testkit.answer_runs import kept_run
from groundchat_testkit.scripted import ScriptedModel, Step
from groundchat.tools.base import Tool, ToolContext, ToolRegistry
from groundchat.models.messages import NO_RESULT


class Value(BaseModel):
    value: str = "x"


async def returns(ctx, args):
    return {"none": None, "empty": "", "zero": 0, "false": False, "x": {"answer": 42}}[args.value]


async def boom(ctx, args):
    raise RuntimeError("the tool broke")


async def allow_all(permission, caller):
    return True


def registry():
    return ToolRegistry(
        [
            Tool(name="echo", grounding="figures", drawer="plain", offline_template="generic", description="returns a value", input_model=Value, permission="runs.read", handler=returns),
            Tool(name="boom", grounding="text", drawer="plain", offline_template="generic", description="raises", input_model=Value, permission="runs.read", handler=boom),
        ],
        allow_all,
    )


async def collect(model, *, limits=None, commit=None, question="q?"):
    run = await kept_run(model, registry(), system="sys", question=question, conversation_id="c1", run_id="r1",
                         limits=limits or LoopLimits(), on_commit=commit)
    return [frame async for frame in run_exchange(run)]


def types(frames):
    """The frames' types, the step marks left out (test_each_model_step_is_marked_where_it_starts_and_ends has them)."""
    return [f.type for f in frames if f.type != "step"]


def steps(frames):
    return [(f.phase, f.step, f.finish_reason) for f in frames if f.type == "step"]


def done_reasons(frames):
    return [f.data["reason"] for f in frames if f.type == "done"]


async def test_each_model_step_is_marked_where_it_starts_and_ends():
    model = ScriptedModel([Step(tool_calls=[("echo", {"value": "x"})]), Step(text="The answer is 42.")])
    frames = await collect(model)
    assert [f.type for f in frames] == ["start", "step", "tool-call", "tool-result", "step", "step", "text", "text", "step", "done"]
    # The first step only called a tool: it still ends, after its tool ran, with the model's stop reason.
    assert steps(frames) == [("start", 0, None), ("finish", 0, "tool_use"), ("start", 1, None), ("finish", 1, "end_turn")]


async def test_a_step_that_fails_has_no_finish_and_a_capped_one_no_start():
    failing = ScriptedModel([Step(tool_calls=[("echo", {"value": "x"})]), Step(text="half", raise_error=RuntimeError("x"))])
    frames = await collect(failing)
    assert steps(frames) == [("start", 0, None), ("finish", 0, "tool_use"), ("start", 1, None)]
    assert types(frames)[-2:] == ["error", "done"]
    capped = await collect(ScriptedModel([Step(tool_calls=[("echo", {"value": "x"})])], repeat_last=True),
                           limits=LoopLimits(max_steps=2))
    assert [p for p, _, _ in steps(capped)] == ["start", "finish", "start", "finish"]  # max-steps: each ran whole
    assert done_reasons(capped) == ["max-steps"]


async def test_complete_answer_with_a_tool_round():
    model = ScriptedModel([Step(tool_calls=[("echo", {"value": "x"})]), Step(text="The answer is 42.")])
    frames = [f for f in await collect(model) if f.type != "step"]
    assert types(frames) == ["start", "tool-call", "tool-result", "text", "text", "done"]
    assert frames[0].data == {"conversation_id": "c1", "run_id": "r1"}
    assert frames[2].data["result"] == {"answer": 42}
    assert done_reasons(frames) == ["complete"]
    # The second request carries the assistant turn with its call, then the result.
    second = model.requests[1].messages
    assert [m.role for m in second] == ["user", "assistant", "tool"]
    assert second[1].tool_calls[0].name == "echo"
    assert second[2].tool_call_id == second[1].tool_calls[0].id


async def test_max_steps_ends_with_done_max_steps():
    model = ScriptedModel([Step(tool_calls=[("echo", {})])], repeat_last=True)
    frames = await collect(model, limits=LoopLimits(max_steps=3))
    assert model.calls == 3
    assert done_reasons(frames) == ["max-steps"]
    assert types(frames).count("done") == 1


async def test_model_that_raises_ends_with_error_and_one_done():
    model = ScriptedModel([Step(text="partial", raise_error=ConnectionError("socket closed"))])
    committed = []

    async def commit(ex):
        committed.append(ex)

    frames = await collect(model, commit=commit)
    assert types(frames)[-2:] == ["error", "done"]
    assert done_reasons(frames) == ["error"]
    assert frames[-2].data["run_id"] == "r1"
    assert committed == []  # a failed exchange is not committed


async def test_tool_that_raises_is_a_typed_error_the_model_recovers_from_and_only_the_trace_holds_why():
    model = ScriptedModel([Step(tool_calls=[("boom", {})]), Step(text="I could not get that.")])
    run = await kept_run(model, registry(), system="sys", question="q?", conversation_id="c1", run_id="r1")
    frames = [f async for f in run_exchange(run)]
    finished = run.finished
    result = next(f for f in frames if f.type == "tool-result")
    # The exception's text (which could name an endpoint) reaches neither the reader nor the model.
    assert result.data["error"] == "tool-failed: boom could not run this time (it failed inside); answer without it or try again later"
    assert done_reasons(frames) == ["complete"]
    tool_msg = model.requests[1].messages[-1]
    assert tool_msg.is_error and tool_msg.content == f"error: {result.data['error']}"
    assert "the tool broke" not in tool_msg.content
    [step] = [s for s in finished[0].steps if s.kind == "tool"]
    assert (step.outcome, step.error_detail) == ("error", "RuntimeError: the tool broke")


async def test_commit_failure_still_ends_with_one_done():
    model = ScriptedModel([Step(text="fine")])

    async def commit(ex):
        raise RuntimeError("store down")

    frames = await collect(model, commit=commit)
    assert done_reasons(frames) == ["error"]
    assert types(frames).count("done") == 1


@pytest.mark.parametrize("value,seen", [("none", NO_RESULT), ("empty", NO_RESULT), ("zero", "0"), ("false", "false")])
async def test_empty_result_is_no_result_but_zero_and_false_stay_answers(value, seen):
    model = ScriptedModel([Step(tool_calls=[("echo", {"value": value})]), Step(text="ok")])
    await collect(model)
    assert model.requests[1].messages[-1].content == seen


async def test_denied_call_is_refused_at_execution_with_an_error_frame():
    async def deny_runs(permission, caller):
        return permission != "runs.read"

    reg = ToolRegistry([Tool(name="echo", grounding="figures", drawer="plain", offline_template="generic", description="d", input_model=Value, permission="runs.read", handler=returns)], deny_runs)
    model = ScriptedModel([Step(tool_calls=[("echo", {})]), Step(text="ok")])
    frames = [f async for f in run_exchange(await kept_run(model, reg))]
    assert model.requests[0].tools == []  # not offered
    result = next(f for f in frames if f.type == "tool-result")
    assert "not available" in result.data["error"]


async def test_client_gone_the_exchange_still_completes_and_commits():
    """The consumer stops after the first frame; the detached exchange runs to done and commits."""
    from chat_function.streaming import ExchangeStream

    model = ScriptedModel([Step(tool_calls=[("echo", {})]), Step(text="done")])
    run = await kept_run(model, registry())
    frames = run_exchange(run)
    sent = []

    async def send(message):
        if message["type"] == "http.response.body" and any(m["type"] == "http.response.body" for m in sent):
            raise OSError("client disconnected")
        sent.append(message)

    async def receive():
        await asyncio.sleep(3600)

    await ExchangeStream(frames)({"type": "http"}, receive, send)
    assert [[m.role for m in ex.new_messages] for ex in run.committed] == [["user", "assistant", "tool", "assistant"]]
    assert len(sent) == 2  # headers and the first frame only


class _CountingGuard:
    """Reserves nothing real: enough for the loop to treat spending as measured."""

    requires_usage = True

    async def reserve(self, request, step):
        return step

    async def settle(self, reservation, usage, *, failed=False, never_billed=False):
        return {"charged": "0.01" if usage is None else "0.001"}


@pytest.mark.parametrize("text,stored_roles", [("", ["user"]), ("Let me look.", ["user", "assistant"])])
async def test_unmeasurable_step_never_leaves_unanswered_calls_in_the_conversation(text, stored_roles):
    from groundchat_testkit.scripted import assert_provider_transcript
    from groundchat.models.messages import Message

    model = ScriptedModel([Step(text=text, tool_calls=[("echo", {})], report_usage=False)])
    run = await kept_run(model, registry(), guard=_CountingGuard())
    frames = [f async for f in run_exchange(run)]
    committed = [m for ex in run.committed for m in ex.new_messages]
    assert done_reasons(frames) == ["unmeasurable-cost"]
    assert [m.role for m in committed] == stored_roles
    assert all(not m.tool_calls for m in committed)
    assert_provider_transcript([*committed, Message(role="user", content="next question")])


async def test_the_loop_sends_what_the_run_holds_built_once():
    """The specs, the system prompt, the history and the question's message the run was built with
    are what every step sends: nothing is read again from the registry or rebuilt."""
    from groundchat.models.messages import Message

    model = ScriptedModel([Step(tool_calls=[("echo", {"value": "x"})]), Step(text="ok")])
    earlier = [Message(role="user", content="before"), Message(role="assistant", content="answered")]
    run = await kept_run(model, registry(), system="sys", question="now?", history=earlier)
    run.offered = [spec for spec in run.offered if spec.name == "echo"]  # what the caller was offered, fixed
    await collect_run(run)
    assert [[t.name for t in r.tools] for r in model.requests] == [["echo"], ["echo"]]
    assert all(r.system == "sys" for r in model.requests)
    assert model.requests[0].messages == [*earlier, run.question]
    assert model.requests[1].messages[:3] == [*earlier, run.question]
    assert run.committed[0].new_messages[0] is run.question


async def collect_run(run):
    return [frame async for frame in run_exchange(run)]
