"""After a process dies, `GET …/answer` tells the truth: `interrupted` once the answer's short lease
lapses (store/leases.py: renewed every beat, 15 s), and `answered`, with its message, for an answer
that committed just before the kill (never "ask again", which would pay twice)."""
from __future__ import annotations

import time

import pytest

import groundchat.store.answers_in_progress as answers_module
from groundchat.store.leases import BEAT_SECONDS, CLAIM_LEASE_SECONDS
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.conftest import parse_sse


class Later:
    """`time` as a process sees it `offset` seconds from now."""

    def __init__(self, offset: float) -> None:
        self.offset = offset

    def time(self) -> float:
        return time.time() + self.offset


@pytest.fixture
def env(make_env):
    return make_env(ScriptedModel([Step(text="Full context is best: 3.5 violations.")] * 4))


def killed_after_the_commit(env, monkeypatch) -> None:
    """The process dies between the commit and the record of how the answer ended."""
    async def dies(*args, **kwargs):
        raise ConnectionError("the process is gone")

    monkeypatch.setattr(env.services.answers, "end", dies)


async def ask(c, env, message: str, conversation_id: str | None = None) -> list[tuple[str, dict]]:
    body = {"message": message, "stream": True, **({"conversation_id": conversation_id} if conversation_id else {})}
    r = await c.post("/api/chat", json=body, headers={**env.token("alice"), "accept": "text/event-stream"})
    assert r.status_code == 200, r.text
    return parse_sse(r.text)


async def test_an_answer_that_committed_before_the_kill_reads_answered_with_its_message(env, monkeypatch):
    async with env.client() as c:
        first = await ask(c, env, "Which context is best?")
        cid = first[0][1]["conversation_id"]
        with monkeypatch.context() as dying:
            killed_after_the_commit(env, dying)
            frames = await ask(c, env, "And without context?", cid)
        run_id = frames[0][1]["run_id"]
        url = f"/api/conversations/{cid}/answer"
        # Within its lease the record still says running: nothing knows yet that the process died.
        assert (await c.get(url, headers=env.token("alice"))).json()["state"] == "running"
        monkeypatch.setattr(answers_module, "time", Later(CLAIM_LEASE_SECONDS + 1))
        found = (await c.get(url, headers=env.token("alice"))).json()
        assert (found["state"], found["run_id"], found["reason"]) == ("answered", run_id, "complete")
        # Set right in the store too: a reader without the check (another version) reads the same.
        assert env.services.answers.table.get_item(Key={"conversation_id": cid})["Item"]["state"] == "answered"
        messages = (await c.get(f"/api/conversations/{cid}", headers=env.token("alice"))).json()["messages"]
        assert messages[-1]["content"] == "Full context is best: 3.5 violations." and len(messages) == 4


async def test_a_first_answer_that_committed_before_the_kill_reads_answered(env, monkeypatch):
    async with env.client() as c:
        with monkeypatch.context() as dying:
            killed_after_the_commit(env, dying)
            frames = await ask(c, env, "Which context is best?")
        cid = frames[0][1]["conversation_id"]
        monkeypatch.setattr(answers_module, "time", Later(CLAIM_LEASE_SECONDS + 1))
        found = (await c.get(f"/api/conversations/{cid}/answer", headers=env.token("alice"))).json()
        assert found["state"] == "answered" and found["question"] == "Which context is best?"


async def test_a_dead_answer_that_never_committed_reads_interrupted_as_its_lease_lapses(env, monkeypatch):
    async with env.client() as c:
        first = await ask(c, env, "Which context is best?")
        cid = first[0][1]["conversation_id"]
    answers = env.services.answers
    # Another answer began and its process died at once: its record was written, nothing else.
    await answers.begin(cid, "alice", "f" * 32, "And without context?")
    item = answers.table.get_item(Key={"conversation_id": cid})["Item"]
    lease = int(item["active_until"]) - float(item["started_at"])
    assert CLAIM_LEASE_SECONDS - 1 <= lease <= CLAIM_LEASE_SECONDS  # renewed every beat, it lapses this long after the last one
    assert BEAT_SECONDS * 3 <= CLAIM_LEASE_SECONDS  # two beats may be missed before a live answer reads interrupted
    async with env.client() as c:
        url = f"/api/conversations/{cid}/answer"
        monkeypatch.setattr(answers_module, "time", Later(CLAIM_LEASE_SECONDS - 3))
        assert (await c.get(url, headers=env.token("alice"))).json()["state"] == "running"
        monkeypatch.setattr(answers_module, "time", Later(CLAIM_LEASE_SECONDS + 1))
        found = (await c.get(url, headers=env.token("alice"))).json()
        assert found["state"] == "interrupted" and found["question"] == "And without context?"
        # The conversation's last answer is the one before: nothing of the dead one was stored.
        assert len((await c.get(f"/api/conversations/{cid}", headers=env.token("alice"))).json()["messages"]) == 2
