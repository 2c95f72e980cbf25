"""Bad input and faults get a typed answer: never a bare 500, never a claim left behind."""
from __future__ import annotations

import socket

import httpx
from botocore.exceptions import EndpointConnectionError

from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.conftest import parse_sse


def answer_model(*texts):
    return ScriptedModel([Step(text=t) for t in texts])


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _post_raw(env, body: bytes, **headers):
    async with env.client() as c:
        return await c.post("/api/chat", content=body, headers={**env.token("alice"), "content-type": "application/json", **headers})


async def test_a_body_that_is_not_utf8_is_400_and_calls_nothing(make_env):
    env = make_env(answer_model("x"))
    r = await _post_raw(env, b'{"message": "caf\xe9 \xff"}')
    assert (r.status_code, r.json()["error"]) == (400, {"code": "bad-request", "message": "the body is not valid UTF-8"})
    assert env.model.calls == 0


async def test_json_nested_past_what_a_question_can_be_is_400(make_env):
    env = make_env(answer_model("x"))
    deep = b'{"message": "q", "x": ' + b"[" * 30_000 + b"]" * 30_000 + b"}"
    r = await _post_raw(env, deep)
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad-request"
    nested_message = await _post_raw(env, b'{"message": ' + b"[" * 20_000 + b"]" * 20_000 + b"}")
    assert nested_message.status_code == 400
    assert env.model.calls == 0


async def test_a_body_over_64_kib_is_413_before_it_is_parsed(make_env):
    env = make_env(answer_model("x"))
    r = await _post_raw(env, b'{"message": "' + b"a" * (64 * 1024) + b'"}')
    assert r.status_code == 413 and r.json()["error"]["code"] == "too-large"
    # Without a content-length the stream is cut at the limit just the same.
    async def chunks():
        for _ in range(70):
            yield b"a" * 1024

    async with env.client() as c:
        streamed = await c.post("/api/chat", content=chunks(), headers=env.token("alice"))
    assert streamed.status_code == 413
    assert env.model.calls == 0


async def test_a_lone_surrogate_in_the_question_is_400_not_a_lost_trace(make_env):
    env = make_env(answer_model("x"))
    r = await _post_raw(env, b'{"message": "hello \\ud800 there"}')
    assert r.status_code == 400 and "lone surrogate" in r.json()["error"]["message"]
    assert env.model.calls == 0


async def test_ids_of_any_length_are_404_before_any_store_call(make_env):
    env = make_env(answer_model("x"))
    calls = []
    env.services.dynamo.client.meta.events.register("before-call.dynamodb", lambda model, **_: calls.append(model.name))
    long_id = "a" * 3000
    async with env.client() as c:
        chat = await c.post("/api/chat", json={"stream": True, "conversation_id": "x" * 64, "message": "q"}, headers=env.token("alice"))
        read = await c.get(f"/api/conversations/{long_id}", headers=env.token("alice"))
        share = await c.post(f"/api/conversations/{long_id}/share", headers=env.token("alice"))
        trace = await c.get(f"/api/traces/{long_id}", headers=env.token("alice"))
        run = await c.get(f"/api/runs/{long_id}", headers=env.token("alice"))
    assert [r.status_code for r in (chat, read, share, trace, run)] == [404] * 5
    # The grants are read (they say who may ask); no conversation, trace or run key ever was.
    assert set(calls) <= {"GetItem"} and all(
        "a" * 100 not in str(k) for k in calls)


async def test_an_unknown_run_is_404_not_400(make_env):
    from groundchat.tools.data_tools import DATA_TOOLS

    env = make_env(answer_model("x"), tools=DATA_TOOLS)
    env.services.docs_override = None
    async with env.client() as c:
        r = await c.get("/api/runs/no-such-run", headers=env.token("alice"))
    assert r.status_code == 404 and r.json()["error"]["code"] == "not-found"


async def test_a_failure_between_the_claim_and_the_first_frame_releases_the_claim(make_env, monkeypatch):
    env = make_env(answer_model("first", "third"))
    async with env.client() as c:
        first = parse_sse((await c.post("/api/chat", json={"stream": True, "message": "one"}, headers=env.token("alice"))).text)
        conversation_id = first[0][1]["conversation_id"]
        store = env.services.conversations
        real_read = store.read_history

        async def broken(_id):
            raise RuntimeError("history unreadable")

        monkeypatch.setattr(store, "read_history", broken)
        failed = await c.post("/api/chat", json={"stream": True, "conversation_id": conversation_id, "message": "two"}, headers=env.token("alice"))
        monkeypatch.setattr(store, "read_history", real_read)
        again = await c.post("/api/chat", json={"stream": True, "conversation_id": conversation_id, "message": "three"}, headers=env.token("alice"))
    assert (failed.status_code, failed.json()["error"]["code"]) == (500, "internal-error")
    assert "history unreadable" not in failed.text
    # Not 409 conversation-busy: the failed request let go of the conversation.
    assert again.status_code == 200
    assert parse_sse(again.text)[-1][1]["reason"] == "complete"


async def test_the_store_down_is_503_with_retry_after_on_every_route(make_env, settings, dynamo):
    from chat_function.app import create_app
    from groundchat.services import Services
    from groundchat.store.dynamo import Dynamo
    from share_function.app import create_share_app

    env = make_env(answer_model("x"))
    down = Dynamo(settings.model_copy(update={"dynamodb_endpoint": f"http://127.0.0.1:{_closed_port()}"}))
    services = Services(settings=settings, dynamo=down, model_override=env.model)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(services)), base_url="http://t") as c:
        answers = [
            await c.post("/api/chat", json={"stream": True, "message": "q"}, headers=env.token("alice")),
            await c.get("/api/chat/budget", headers=env.token("alice")),
            await c.get("/api/conversations", headers=env.token("alice")),
        ]
        health = await c.get("/healthz")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_share_app(services)), base_url="http://t") as c:
        answers.append(await c.get(f"/api/shared/{'a' * 32}"))
    for r in answers:
        assert (r.status_code, r.json()["error"]["code"], r.headers["retry-after"]) == (503, "store-unavailable", "5"), r.url
    assert (health.status_code, health.json()) == (503, {"status": "degraded", "store": "down"})
    assert env.model.calls == 0


async def test_the_store_failing_mid_answer_ends_with_a_store_unavailable_error_frame(make_env, monkeypatch):
    env = make_env(answer_model("fine"))

    async def commit_fails(**kwargs):
        raise EndpointConnectionError(endpoint_url="http://dynamodb.internal:8000")

    monkeypatch.setattr(env.services.conversations, "commit_exchange", commit_fails)
    async with env.client() as c:
        r = await c.post("/api/chat", json={"stream": True, "message": "q"}, headers=env.token("alice"))
    frames = parse_sse(r.text)
    error = next(data for kind, data in frames if kind == "error")
    assert error["code"] == "store-unavailable" and "dynamodb.internal" not in r.text
    assert error["reason"] == "EndpointConnectionError"  # the exception's class: its text names the store
    # The step ran (its tokens are counted); the answer was not stored (no seq to rate).
    assert frames[-1][1] == {"reason": "error", "run_id": error["run_id"], "cost": "0", "cost_text": "$0.00",
                             "recall": frames[-1][1]["recall"], "answer_seq": None, "input_tokens": 100, "output_tokens": 20}
