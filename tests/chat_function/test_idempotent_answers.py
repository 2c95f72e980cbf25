"""The same request twice runs the model once: a repeat (the AI SDK's same chat id and message, or
the same `Idempotency-Key`) follows the first answer, while it runs or after it was answered; an
id that someone else's answer holds is a 404 before any work."""
from __future__ import annotations

import asyncio
import json

import pytest

from groundchat.store import usage as us
from groundchat.store.tables import USAGE
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.conftest import parse_sse
from tests.chat_function.test_ai_sdk_chat import PATH, data_parts, sdk_body

ANSWER = "Full context is best: 3.5 violations."
CHAT = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def priced(tmp_path, monkeypatch):
    """A scripted model that costs something, so each model step leaves a usage row."""
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"scripted": {"input_per_mtok": "3.00", "output_per_mtok": "15.00"}}))
    monkeypatch.setenv("GROUNDCHAT_PRICES_FILE", str(path))
    from groundchat.config import reset_settings_cache

    reset_settings_cache()


class SlowModel(ScriptedModel):
    """Each step takes a while, so the repeats arrive while the first answer runs."""

    async def __call__(self, request):
        await asyncio.sleep(0.5)
        async for event in super().__call__(request):
            yield event


def usage_rows(env) -> list[dict]:
    return us.all_rows_sync(env.services.dynamo.client, env.services.dynamo.name(USAGE))


def text_of(parts: list[dict]) -> str:
    return "".join(p.get("delta", "") for p in parts if p["type"] == "text-delta")


async def test_five_concurrent_double_submits_cost_one_answer_and_the_others_follow_it(priced, make_env):
    env = make_env(SlowModel([Step(text=ANSWER, input_tokens=1000, output_tokens=50)] * 10))
    body = sdk_body("Which context is best?", chat_id=CHAT)
    async with env.client() as c:
        replies = await asyncio.gather(*(c.post(PATH, json=body, headers=env.token("alice")) for _ in range(5)))
        assert [r.status_code for r in replies] == [200] * 5, [r.text for r in replies]
        parts = [data_parts(r.text) for r in replies]
        # One model call, one usage row: the answer was paid once.
        assert env.model.calls == 1
        rows = usage_rows(env)
        assert len(rows) == 1 and rows[0]["conversation_id"] == CHAT
        # Every reply carries the one answer, and none says "Something went wrong".
        assert [text_of(p) for p in parts] == [ANSWER] * 5
        assert all(not any(x["type"] == "error" for x in p) for p in parts)
        messages = (await c.get(f"/api/conversations/{CHAT}", headers=env.token("alice"))).json()["messages"]
        assert [m["content"] for m in messages] == ["Which context is best?", ANSWER]

        # A retry after it ended (a lost connection) follows it too: still one call, one row.
        again = await c.post(PATH, json=body, headers=env.token("alice"))
        assert again.status_code == 200 and text_of(data_parts(again.text)) == ANSWER
        assert env.model.calls == 1 and len(usage_rows(env)) == 1

        # A new message in the same chat is a new question: answered, and paid, once more.
        later = await c.post(PATH, json={**sdk_body("And without context?", chat_id=CHAT),
                                         "messages": [{"id": "m-2", "role": "user", "parts": [{"type": "text", "text": "And without context?"}]}]},
                             headers=env.token("alice"))
        assert later.status_code == 200 and env.model.calls == 2 and len(usage_rows(env)) == 2


async def test_a_second_question_sent_while_the_first_runs_is_a_409_before_any_work(make_env):
    env = make_env(SlowModel([Step(text=ANSWER)] * 4))
    async with env.client() as c:
        first = await c.post(PATH, json=sdk_body("Which context is best?", chat_id=CHAT), headers=env.token("alice"))
        assert first.status_code == 200
        slow = asyncio.create_task(c.post(PATH, json={**sdk_body(chat_id=CHAT), "messages": [
            {"id": "m-2", "role": "user", "parts": [{"type": "text", "text": "And then?"}]}]}, headers=env.token("alice")))
        await asyncio.sleep(0.2)  # the second answer runs
        other = await c.post(PATH, json={**sdk_body(chat_id=CHAT), "messages": [
            {"id": "m-3", "role": "user", "parts": [{"type": "text", "text": "Something else?"}]}]}, headers=env.token("alice"))
        assert other.status_code == 409 and other.json()["error"]["code"] == "conversation-busy"
        assert (await slow).status_code == 200
    assert env.model.calls == 2


async def test_the_same_idempotency_key_opens_one_conversation_and_answers_once(priced, make_env):
    env = make_env(SlowModel([Step(text=ANSWER, input_tokens=1000, output_tokens=50)] * 4))
    key = {"idempotency-key": "2f1c0a8e-5b1d-4e7a-9f3e-6c2b8d4a7e10"}
    async with env.client() as c:
        ask = {"message": "Which context is best?", "stream": False}
        one, two = await asyncio.gather(*(c.post("/api/chat", json=ask, headers={**env.token("alice"), **key}) for _ in range(2)))
        assert one.status_code == two.status_code == 200, (one.text, two.text)
        assert one.json()["conversation_id"] == two.json()["conversation_id"]
        assert one.json()["message"] == two.json()["message"] == ANSWER and one.json()["run_id"] == two.json()["run_id"]
        assert env.model.calls == 1 and len(usage_rows(env)) == 1
        # A stream asked for with the same key follows the same answer.
        streamed = await c.post("/api/chat", json={"message": "Which context is best?"},
                                headers={**env.token("alice"), **key, "accept": "text/event-stream"})
        frames = parse_sse(streamed.text)
        assert frames[0][1]["conversation_id"] == one.json()["conversation_id"]
        assert "".join(f[1]["text"] for f in frames if f[0] == "text") == ANSWER and frames[-1][1]["reason"] == "complete"
        # Another person's same key is theirs: a conversation and an answer of their own.
        bobs = await c.post("/api/chat", json=ask, headers={**env.token("bob"), **key})
        assert bobs.status_code == 200 and bobs.json()["conversation_id"] != one.json()["conversation_id"]
        # The key sent again with another question is the client's mistake: 422, nothing run.
        reused = await c.post("/api/chat", json={"message": "Another question?", "stream": False}, headers={**env.token("alice"), **key})
        assert reused.status_code == 422 and reused.json()["error"]["code"] == "idempotency-key-reused"
        bad = await c.post("/api/chat", json=ask, headers={**env.token("alice"), "idempotency-key": "k" * 300})
        assert bad.status_code == 400 and "Idempotency-Key" in bad.json()["error"]["message"]
    assert env.model.calls == 2


@pytest.mark.parametrize("state", ["running", "stopped"])
async def test_an_id_held_by_someone_elses_answer_is_a_404_before_any_work(make_env, state):
    env = make_env(ScriptedModel([Step(text=ANSWER)]))
    answers = env.services.answers
    # Alice's first question under this id runs, or was stopped: no conversation item exists.
    await answers.claim_new(CHAT, "alice", "a" * 32, "Which context is best?")
    if state == "stopped":
        await answers.end(CHAT, "a" * 32, "stopped", "stopped")
    async with env.client() as c:
        r = await c.post(PATH, json=sdk_body("Mine now?", chat_id=CHAT), headers=env.token("bob"))
        assert r.status_code == 404 and r.json()["error"]["code"] == "not-found"
        assert (await c.get(f"/api/conversations/{CHAT}/answer", headers=env.token("bob"))).status_code == 404
    assert env.model.calls == 0
    # Alice's record is untouched.
    item = answers.table.get_item(Key={"conversation_id": CHAT})["Item"]
    assert (item["owner"], item["run_id"], item["state"]) == ("alice", "a" * 32, state)
