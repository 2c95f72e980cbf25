"""Following an answer after a reload, and stopping one, through the routes a page uses.

Served by uvicorn on 127.0.0.1 (a stream is read as a browser reads it); the store is moto. The
answer's model waits on events the test sets, so "mid-answer" is a state the test holds, not a race.
"""
from __future__ import annotations

import asyncio
import json
import threading
from decimal import Decimal

import httpx
import pytest
from pydantic import BaseModel

from groundchat.auth.callers import RUNS_READ
from groundchat.store.tables import USAGE
from groundchat.store.usage import rows_for_run_sync, total_charged
from groundchat.tools.base import Tool
from groundchat_testkit.scripted import ScriptedModel, Step
from groundchat_cli.serving import Servers

QUESTION = "Which context level is best?"


@pytest.fixture
def priced(tmp_path, monkeypatch):
    """A scripted model that costs something, so "usage equals what was spent" is not 0 == 0."""
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"scripted": {"input_per_mtok": "3.00", "output_per_mtok": "15.00"}}))
    monkeypatch.setenv("GROUNDCHAT_PRICES_FILE", str(path))
    from groundchat.config import reset_settings_cache

    reset_settings_cache()


class GatedModel(ScriptedModel):
    """Each step waits until the test lets it run (`release(step)`)."""

    def __init__(self, steps):
        super().__init__(steps)
        self.gates = [threading.Event() for _ in steps]

    def release(self, step: int) -> None:
        self.gates[step].set()

    async def __call__(self, request):
        step = self._n
        while not self.gates[step].is_set():
            await asyncio.sleep(0.02)
        async for event in super().__call__(request):
            yield event


class Nothing(BaseModel):
    pass


def gated_tool(gate: threading.Event) -> Tool:
    async def wait_then_answer(ctx, args):
        while not gate.is_set():
            await asyncio.sleep(0.02)
        return {"rows": [{"model": "m1", "context": "full", "mean_violations": 3.5, "cost_text": "$0.0126"}]}

    return Tool(name="compare_contexts", grounding="figures", drawer="contexts", offline_template="contexts", description="compare", input_model=Nothing, permission=RUNS_READ,
                handler=wait_then_answer)


class StreamReader:
    """A page's stream read in a thread: its frames as they come."""

    def __init__(self, url: str, headers: dict, body: dict) -> None:
        self.frames: list[tuple[str, dict]] = []
        self.started = threading.Event()
        self.thread = threading.Thread(target=self._read, args=(url, headers, body), daemon=True)
        self.thread.start()

    def _read(self, url, headers, body):
        event = None
        with httpx.Client(headers=headers, timeout=30) as client, client.stream("POST", f"{url}/api/chat", json={"stream": True, **body}) as resp:
            for line in resp.iter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event:
                    self.frames.append((event, json.loads(line[6:])))
                    if event == "start":
                        self.started.set()

    def start_frame(self) -> dict:
        assert self.started.wait(10), "no start frame"
        return self.frames[0][1]

    def done(self) -> dict:
        self.thread.join(15)
        assert self.frames and self.frames[-1][0] == "done", self.frames
        return self.frames[-1][1]


@pytest.fixture
def served():
    servers = Servers()
    yield servers.serve
    servers.stop_all()


def start_gated_answer(make_env, served, model):
    """`model` answering QUESTION for alice on a served app, its first step released and its
    tool held at the gate: (env, gate, stream, conversation id, address)."""
    gate = threading.Event()
    env = make_env(model, tools=[gated_tool(gate)])
    url = served(env.app)
    model.release(0)
    stream = StreamReader(url, env.token("alice"), {"message": QUESTION})
    return env, gate, stream, stream.start_frame()["conversation_id"], url


def test_a_reload_mid_answer_learns_it_runs_then_reads_the_committed_answer_without_a_second_model_call(make_env, served):
    model = GatedModel([Step(tool_calls=[("compare_contexts", {})]), Step(text="Full context is best: 3.5 violations.")])
    env, gate, stream, conversation_id, url = start_gated_answer(make_env, served, model)

    with httpx.Client(base_url=url, headers=env.token("alice"), timeout=30) as page:
        # The reload: a new conversation has no item until its commit; the answer's record says it runs.
        assert page.get(f"/api/conversations/{conversation_id}").status_code == 404
        running = page.get(f"/api/conversations/{conversation_id}/answer").json()
        assert running["state"] == "running" and running["question"] == QUESTION
        # Someone else learns nothing, not even that it exists.
        assert page.get(f"/api/conversations/{conversation_id}/answer", headers=env.token("bob")).status_code == 404

        gate.set()
        model.release(1)
        ended = page.get(f"/api/conversations/{conversation_id}/answer", params={"wait": 10}).json()
        assert ended["state"] == "answered" and ended["reason"] == "complete"
        messages = page.get(f"/api/conversations/{conversation_id}").json()["messages"]
    assert messages[-1]["content"] == "Full context is best: 3.5 violations."
    assert stream.done()["reason"] == "complete"
    assert model.calls == 2  # the reload asked the store, never the model


def test_nothing_on_record_is_a_204_for_the_owner_and_a_404_for_anyone_else(make_env):
    env = make_env(ScriptedModel([Step(text="Full context is best.")]))

    async def go():
        async with env.client() as client:
            assert (await client.get("/api/conversations/" + "a" * 32 + "/answer", headers=env.token("alice"))).status_code == 404
            assert (await client.get("/api/conversations/not-an-id/answer", headers=env.token("alice"))).status_code == 404
            assert (await client.get("/api/conversations/" + "a" * 32 + "/answer")).status_code == 401
            r = await client.post("/api/chat", json={"stream": True, "message": QUESTION}, headers=env.token("alice"))
            conversation_id = r.text.split('"conversation_id": "')[1].split('"')[0]
            # What a conversation stored before answers were recorded looks like: no record at all.
            await env.services.answers.delete(conversation_id)
            assert (await client.get(f"/api/conversations/{conversation_id}/answer", headers=env.token("alice"))).status_code == 204
            assert (await client.get(f"/api/conversations/{conversation_id}/answer", headers=env.token("bob"))).status_code == 404
            too_long = await client.get(f"/api/conversations/{conversation_id}/answer?wait=600", headers=env.token("alice"))
            assert too_long.status_code == 400

    asyncio.run(go())


def test_stop_ends_the_answer_at_the_next_step_boundary_and_usage_equals_what_was_spent(priced, make_env, served):
    model = GatedModel([Step(tool_calls=[("compare_contexts", {})], input_tokens=1200, output_tokens=80),
                        Step(text="never sent")])
    env, gate, stream, conversation_id, url = start_gated_answer(make_env, served, model)
    run_id = stream.frames[0][1]["run_id"]

    with httpx.Client(base_url=url, headers=env.token("alice"), timeout=30) as page:
        assert page.post(f"/api/conversations/{conversation_id}/stop", headers=env.token("bob")).status_code == 404
        asked = page.post(f"/api/conversations/{conversation_id}/stop")
        assert asked.status_code == 202 and asked.json() == {"stopping": True, "run_id": run_id}
        assert page.get(f"/api/conversations/{conversation_id}/answer").json()["stopping"] is True
        gate.set()  # the tool call in flight finishes; the next step boundary reads the stop
        done = stream.done()
        assert done["reason"] == "stopped"
        model.release(1)
        assert model.calls == 1  # no step began after the stop

        ended = page.get(f"/api/conversations/{conversation_id}/answer").json()
        # The rule: a stopped answer keeps nothing in the conversation; a first question, nothing
        # anywhere: its record says how it ended, without its words.
        assert ended["state"] == "stopped" and ended["question"] == ""
        assert page.get(f"/api/conversations/{conversation_id}").status_code == 404
        again = page.post(f"/api/conversations/{conversation_id}/stop")
        assert again.status_code == 409 and again.json()["error"]["code"] == "not-answering"
        trace = page.get(f"/api/traces/{run_id}").json()
        assert trace["question"] == "" and all("args" not in step for step in trace["steps"])
        # Deletable: the owner's DELETE removes the wordless record and trace too.
        assert page.delete(f"/api/conversations/{conversation_id}", headers=env.token("bob")).status_code == 404
        assert page.delete(f"/api/conversations/{conversation_id}").status_code == 204
        assert page.get(f"/api/conversations/{conversation_id}/answer").status_code == 404
        assert page.get(f"/api/traces/{run_id}").status_code == 404
    rows = rows_for_run_sync(env.services.dynamo.client, env.services.dynamo.name(USAGE), run_id)
    spent = total_charged(rows)
    # 1,200 tokens in at $3/M and 80 out at $15/M: the one step that ran, charged and recorded.
    assert spent == Decimal("0.0036") + Decimal("0.0012")
    assert Decimal(done["cost"]) == spent
    assert trace["outcome"] == "stopped"
    from groundchat.spending.operator import budget_status

    chat = asyncio.run(budget_status(env.services.dynamo, env.settings, "alice"))["chat"]
    assert Decimal(chat["spent"]) == spent and Decimal(chat["reserved"]) == 0  # nothing left held


def test_a_stop_on_an_existing_conversation_keeps_the_earlier_answers_and_nothing_of_the_stopped_one(make_env, served):
    model = GatedModel([Step(text="Full context is best."), Step(tool_calls=[("compare_contexts", {})]),
                        Step(text="Cedar-mini did best with full context.")])
    gate = threading.Event()
    env = make_env(model, tools=[gated_tool(gate)])
    url = served(env.app)
    model.release(0)
    with httpx.Client(base_url=url, headers=env.token("alice"), timeout=30) as page:
        first = page.post("/api/chat", json={"stream": True, "message": QUESTION}).text
        conversation_id = first.split('"conversation_id": "')[1].split('"')[0]
        before = page.get(f"/api/conversations/{conversation_id}").json()["messages"]
        model.release(1)
        stream = StreamReader(url, env.token("alice"), {"message": "And for cedar-mini?", "conversation_id": conversation_id})
        stream.start_frame()
        assert page.post(f"/api/conversations/{conversation_id}/stop").status_code == 202
        gate.set()
        assert stream.done()["reason"] == "stopped"
        after = page.get(f"/api/conversations/{conversation_id}").json()["messages"]
        # The claim is free again: the next question is answered, not a 409.
        model.release(2)
        assert "Cedar-mini" in page.post("/api/chat", json={"stream": True, "message": "And cedar-mini?", "conversation_id": conversation_id}).text
    assert after == before
