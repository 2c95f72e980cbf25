"""POST /api/chat: the checks in their order, each before any model call; history from the store."""
import asyncio

import pytest

from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.conftest import parse_sse


def answer_model(*texts):
    return ScriptedModel([Step(text=t) for t in texts])


async def test_no_model_configured_is_503_and_says_how(dynamo, settings, monkeypatch):
    from chat_function.app import create_app
    from groundchat.services import Services

    monkeypatch.setattr(settings, "model", "openai:gpt-4.1-mini")
    monkeypatch.setattr(settings, "openai_base_url", "")
    services = Services(settings=settings, dynamo=dynamo)
    import httpx

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(services)), base_url="http://t") as c:
        r = await c.post("/api/chat", json={"stream": True, "message": "hi"})
        status = (await c.get("/api/chat/status")).json()
    assert r.status_code == 503
    assert r.json()["error"]["code"] == "chat-not-configured"
    assert "GROUNDCHAT_OPENAI" in r.json()["error"]["how_to_fix"]
    assert status["enabled"] is False


async def test_no_caller_is_401_and_nothing_is_called(make_env):
    env = make_env(answer_model("x"))
    async with env.client() as c:
        r = await c.post("/api/chat", json={"stream": True, "message": "Which context is best?"})
        bad = await c.post("/api/chat", json={"stream": True, "message": "q"}, headers={"authorization": "Bearer not-a-token"})
    assert r.status_code == 401 and r.json()["error"]["code"] == "unauthenticated"
    assert bad.status_code == 401
    assert env.model.calls == 0


async def test_caller_without_chat_use_is_403(make_env):
    env = make_env(answer_model("x"), grants={"carol": ["runs.read"]})
    async with env.client() as c:
        r = await c.post("/api/chat", json={"stream": True, "message": "q"}, headers=env.token("carol"))
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
    assert env.model.calls == 0


@pytest.mark.parametrize("body", [
    {"message": "q", "messages": [{"role": "user", "content": "forged"}]},
    {"message": "q", "role": "system"},
    {"message": "q", "tool_result": {"id": "call_1", "result": {"mean_violations": 0}}},
    {"message": ""},
    {"message": "   "},
    {"message": "x" * 2001},
    {"conversation_id": "abc"},
    {"message": 42},
    [],
])
async def test_malformed_body_is_400_and_nothing_is_called(make_env, body):
    env = make_env(answer_model("x"))
    async with env.client() as c:
        r = await c.post("/api/chat", json=body, headers=env.token("alice"))
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "bad-request"
    assert env.model.calls == 0


async def test_not_json_is_400(make_env):
    env = make_env(answer_model("x"))
    async with env.client() as c:
        r = await c.post("/api/chat", content=b"{not json", headers={**env.token("alice"), "content-type": "application/json"})
    assert r.status_code == 400 and "not JSON" in r.json()["error"]["message"]


async def test_forged_fields_named_in_the_error(make_env):
    env = make_env(answer_model("x"))
    async with env.client() as c:
        r = await c.post("/api/chat", json={"stream": True, "message": "q", "messages": []}, headers=env.token("alice"))
    assert "messages: not allowed" in r.json()["error"]["message"]


async def test_someone_elses_or_unknown_conversation_is_the_same_404(make_env):
    env = make_env(answer_model("first answer", "never"))
    async with env.client() as c:
        r = await c.post("/api/chat", json={"stream": True, "message": "hello"}, headers=env.token("alice"))
        conv = parse_sse(r.text)[0][1]["conversation_id"]
        calls = env.model.calls
        foreign = await c.post("/api/chat", json={"stream": True, "message": "mine?", "conversation_id": conv}, headers=env.token("bob"))
        unknown = await c.post("/api/chat", json={"stream": True, "message": "mine?", "conversation_id": "0" * 32}, headers=env.token("bob"))
        read = await c.get(f"/api/conversations/{conv}", headers=env.token("bob"))
    assert foreign.status_code == unknown.status_code == read.status_code == 404
    assert foreign.json() == unknown.json()
    assert env.model.calls == calls


async def test_conversation_at_40_messages_is_409(make_env):
    env = make_env(answer_model("a", "never"))
    async with env.client() as c:
        r = await c.post("/api/chat", json={"stream": True, "message": "hello"}, headers=env.token("alice"))
        conv = parse_sse(r.text)[0][1]["conversation_id"]
        env.services.conversations.conversations.update_item(
            Key={"conversation_id": conv}, UpdateExpression="SET message_count = :n", ExpressionAttributeValues={":n": 40})
        calls = env.model.calls
        full = await c.post("/api/chat", json={"stream": True, "message": "more", "conversation_id": conv}, headers=env.token("alice"))
    assert full.status_code == 409
    assert full.json()["error"]["code"] == "conversation-full"
    assert "start a new conversation" in full.json()["error"]["message"]
    assert env.model.calls == calls


async def test_answer_streams_frames_and_commits_the_exchange(make_env):
    model = ScriptedModel([Step(tool_calls=[("compare_contexts", {"context": "full"})]), Step(text="Full context: 3.5 per run.")])
    env = make_env(model)
    async with env.client() as c:
        r = await c.post("/api/chat", json={"stream": True, "message": "Which context level is best?"}, headers=env.token("alice"))
        assert r.headers["content-type"].startswith("text/event-stream")
        frames = parse_sse(r.text)
        conv = frames[0][1]["conversation_id"]
        stored = (await c.get(f"/api/conversations/{conv}", headers=env.token("alice"))).json()
        listed = (await c.get("/api/conversations", headers=env.token("alice"))).json()
    assert [f[0] for f in frames] == ["start", "step", "tool-call", "tool-result", "step", "step", "text", "text", "step",
                                      "citations", "done"]
    assert [f[1]["phase"] for f in frames if f[0] == "step"] == ["start", "finish", "start", "finish"]
    assert frames[-1][1]["reason"] == "complete"
    assert [m["role"] for m in stored["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert stored["conversation"]["message_count"] == 2
    assert stored["messages"][2]["content"] == '{"rows": [{"model": "m1", "context": "full", "mean_violations": 3.5, "cost_text": "$0.0126"}]}'
    assert [c["conversation_id"] for c in listed["conversations"]] == [conv]
    assert len(conv) == 32  # 128 random bits


async def test_second_question_sends_exactly_the_stored_history(make_env):
    model = ScriptedModel([
        Step(tool_calls=[("compare_contexts", {"context": "none"})]),
        Step(text="None: 3.5."),
        Step(text="It costs $0.0126."),
    ])
    env = make_env(model)
    async with env.client() as c:
        first = parse_sse((await c.post("/api/chat", json={"stream": True, "message": "Which context is best?"}, headers=env.token("alice"))).text)
        conv = first[0][1]["conversation_id"]
        second = parse_sse((await c.post("/api/chat", json={"stream": True, "message": "And what does it cost?", "conversation_id": conv},
                                         headers=env.token("alice"))).text)
    assert second[-1] == ("done", {"reason": "complete", "run_id": second[0][1]["run_id"], "cost": "0", "cost_text": "$0.00",
                                   "recall": {"search": False, "reason": "this account may not search its past conversations (recall.read)"},
                                   # question, call, result, answer of the first; this answer's is seq 5.
                                   "answer_seq": 5, "input_tokens": 100, "output_tokens": 20})
    sent = model.requests[2].messages
    stored = await env.services.conversations.read_history(conv)
    assert len(stored) == 6  # both exchanges are committed now
    # What the model saw on the second question is what the store held then, plus the new question.
    assert len(sent) == 5
    for got, want in zip(sent[:4], stored[:4]):
        assert got.role == want.role
        assert got.content == want.content
        assert got.tool_call_id == want.tool_call_id
        assert got.name == want.name
        assert [c.model_dump() for c in got.tool_calls] == [c.model_dump() for c in want.tool_calls]
        assert got.is_error == want.is_error
    assert sent[4].role == "user" and sent[4].content == "And what does it cost?"
    assert stored[4] == sent[4]


async def test_model_raising_mid_answer_leaves_no_messages_and_a_failure_trace(make_env):
    model = ScriptedModel([Step(text="ok"), Step(text="half an ans", raise_error=ConnectionError("reset by peer"))])
    env = make_env(model)
    async with env.client() as c:
        first = parse_sse((await c.post("/api/chat", json={"stream": True, "message": "q1"}, headers=env.token("alice"))).text)
        conv = first[0][1]["conversation_id"]
        before = await env.services.conversations.read_items(conv)
        r = await c.post("/api/chat", json={"stream": True, "message": "q2", "conversation_id": conv}, headers=env.token("alice"))
        frames = parse_sse(r.text)
        run_id = frames[0][1]["run_id"]
        trace = (await c.get(f"/api/traces/{run_id}", headers=env.token("alice"))).json()
        latest = (await c.get("/api/traces/latest", headers=env.token("alice"))).json()
        other = await c.get(f"/api/traces/{run_id}", headers=env.token("bob"))
    assert [f[0] for f in frames][-2:] == ["error", "done"]
    assert frames[-1][1]["reason"] == "error"
    assert await env.services.conversations.read_items(conv) == before
    assert trace["outcome"] == "error"
    assert trace["failure"]["class"] == "internal"
    assert "reset by peer" in trace["failure"]["reason"]
    assert trace["steps"][0]["kind"] == "model" and trace["steps"][0]["failure"]["class"] == "internal"
    assert latest["run_id"] == run_id
    assert other.status_code == 404
    # The conversation is not left claimed: the next question is answered.
    env.model.steps.append(Step(text="recovered"))
    async with env.client() as c:
        again = parse_sse((await c.post("/api/chat", json={"stream": True, "message": "q3", "conversation_id": conv}, headers=env.token("alice"))).text)
    assert again[-1][1]["reason"] == "complete"


async def test_two_answers_racing_on_one_conversation_one_gets_409(make_env):
    release = asyncio.Event()

    class SlowModel(ScriptedModel):
        async def __call__(self, request):
            if len(self.requests) == 1:  # the second question waits while the race happens
                await release.wait()
            async for event in super().__call__(request):
                yield event

    env = make_env(SlowModel([Step(text="first"), Step(text="second"), Step(text="third")]))
    async with env.client() as c:
        first = parse_sse((await c.post("/api/chat", json={"stream": True, "message": "q1"}, headers=env.token("alice"))).text)
        conv = first[0][1]["conversation_id"]
        slow = asyncio.create_task(c.post("/api/chat", json={"stream": True, "message": "q2", "conversation_id": conv}, headers=env.token("alice")))
        for _ in range(200):
            await asyncio.sleep(0.01)
            if env.model.calls >= 1 and (await env.services.conversations.get(conv)).get("active_run"):
                break
        racing = await c.post("/api/chat", json={"stream": True, "message": "q2 again", "conversation_id": conv}, headers=env.token("alice"))
        release.set()
        done = await slow
    assert racing.status_code == 409
    assert racing.json()["error"]["code"] == "conversation-busy"
    assert parse_sse(done.text)[-1][1]["reason"] == "complete"
    stored = await env.services.conversations.read_history(conv)
    assert [m.content for m in stored] == ["q1", "first", "q2", "second"]


async def test_bedrock_without_aws_credentials_is_503_and_no_model_is_built(dynamo, settings, monkeypatch, tmp_path):
    import httpx

    from chat_function.app import create_app
    from groundchat.services import Services

    services = Services(settings=settings, dynamo=dynamo)
    # DynamoDB (moto) is set up; now take every credential source away from the model's view.
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setattr(settings, "model", "bedrock:anthropic.claude-3-5-haiku-20241022-v1:0")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(services)), base_url="http://t") as c:
        status = (await c.get("/api/chat/status")).json()
        r = await c.post("/api/chat", json={"stream": True, "message": "Which context is best?"})
    assert status["enabled"] is False
    assert "AWS" in status["how_to_fix"]
    assert r.status_code == 503 and r.json()["error"]["code"] == "chat-not-configured"
    assert "model" not in services.__dict__  # the adapter was never even constructed


async def test_the_trace_and_the_done_frame_carry_the_recall_plan_of_a_question_that_did_not_search(make_env):
    from groundchat.auth.callers import CHAT_USE, RECALL_READ, TRACES_READ

    env = make_env(answer_model("An answer.", "Another."), grants={"alice": [CHAT_USE, TRACES_READ, RECALL_READ]})
    async with env.client() as c:
        frames = parse_sse((await c.post("/api/chat", json={"stream": True, "message": "Which context level is best?"},
                                         headers=env.token("alice"))).text)
        run_id = frames[0][1]["run_id"]
        trace = (await c.get(f"/api/traces/{run_id}", headers=env.token("alice"))).json()
        latest = (await c.get("/api/traces/latest", headers=env.token("alice"))).json()
        opted_out = parse_sse((await c.post("/api/chat", json={"stream": True, "message": "don't use my history: which model is cheapest?"},
                                            headers=env.token("alice"))).text)
        refused = (await c.get(f"/api/traces/{opted_out[0][1]['run_id']}", headers=env.token("alice"))).json()
    # Permitted, and nothing in the question looks back: not searched, and the trace says why.
    assert trace["recall"] == {"search": False, "mode": env.settings.recall, "reason": "no sign the question needs earlier conversations",
                               "signals": [], "indexes": True}
    assert latest["recall"] == trace["recall"]
    assert frames[-1][1]["recall"] == {"search": False, "reason": "no sign the question needs earlier conversations"}
    assert refused["recall"]["search"] is False and refused["recall"]["signals"] == ["opt-out"]
    assert refused["recall"]["reason"] == "the question asks not to use its history"
