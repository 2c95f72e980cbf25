"""A deletion killed at any step is finished by the next sweep or the next DELETE: then the words
are nowhere (every table, the recall file, the images), and the owner's DELETE answers 204.

Conversation X holds words found nowhere else (`WREN`, `QUOKKA`) in its questions, its answers, a
reader's feedback, its images and its recall entry; conversation Y recalled X, so Y's answer and
tool result hold copies. The kill is an exception raised at the start of one of the job's steps
(or where it marks itself done), after everything before it ran, as a `kill -9` would leave it."""
from __future__ import annotations

import time

import pytest

from groundchat.auth.callers import CHAT_USE, RECALL_READ, RUNS_READ, TRACES_READ
from groundchat.recall.embedded import EmbeddedRecallIndex
from groundchat.store import deletion_jobs
from groundchat.store.deletion import delete_conversation, forget_unanswered
from groundchat.store.deletion_jobs import Cleaners, cleaners_for, finish_pending
from groundchat.store.tables import ALL_TABLES, CONVERSATIONS, DELETIONS
from groundchat.tools.recall_tool import search_my_conversations
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.conftest import TEST_TOOLS, make_env  # noqa: F401 (make_env: a fixture)
from tests.corpus_support import WordHashEmbedder
from tests.recall.test_recall_copies import QUOKKA, WREN, ask, x_then_y

GRANTS = {"alice": [CHAT_USE, RUNS_READ, RECALL_READ, TRACES_READ], "bob": [CHAT_USE]}


class Killed(Exception):
    """What the process 'dies' of, mid-deletion."""


class Bucket:
    """The images bucket, in memory: a conversation's images under its prefix."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}

    async def delete_conversation(self, conversation_id: str) -> int:
        gone = [k for k in self.objects if k.startswith(f"conversations/{conversation_id}/")]
        for key in gone:
            del self.objects[key]
        return len(gone)


@pytest.fixture
def env(make_env, tmp_path):
    env = make_env(ScriptedModel([]), grants=GRANTS, tools=[*TEST_TOOLS, search_my_conversations])
    env.services.recall_override = EmbeddedRecallIndex(tmp_path / "recall.sqlite", WordHashEmbedder)
    env.recall_file = tmp_path / "recall.sqlite"
    env.bucket = Bucket()
    return env


def cleaners(env) -> Cleaners:
    return cleaners_for(env.bucket, env.services.recall)


async def x_with_everything(c, env) -> tuple[str, str]:
    """X (questions, answers, a rating with its text, an image, a recall entry) and Y that copied it."""
    x_id, y_id = await x_then_y(c, env)
    rated = await c.post(f"/api/conversations/{x_id}/messages/1/feedback", headers=env.token("alice"),
                         json={"rating": "down", "reasons": ["other"], "text": f"not {WREN} at all"})
    assert rated.status_code == 200, rated.text
    env.bucket.objects[f"conversations/{x_id}/{'a' * 64}.png"] = f"{QUOKKA} drawn".encode()
    env.services.dynamo.table(CONVERSATIONS).update_item(Key={"conversation_id": x_id}, UpdateExpression="SET has_images = :t",
                                                         ExpressionAttributeValues={":t": True})
    return x_id, y_id


def where_the_words_are(env) -> list[str]:
    """Every place that still holds WREN or QUOKKA: each table, the recall file's bytes, the bucket."""
    dynamo, found = env.services.dynamo, []
    for table in ALL_TABLES:
        for item in dynamo.client.scan(TableName=dynamo.name(table))["Items"]:
            if WREN in str(item) or QUOKKA in str(item):
                found.append(f"{table.logical}: {str(item)[:120]}")
    env.services.recall.close()  # the file as it is on disk
    data = env.recall_file.read_bytes() if env.recall_file.exists() else b""
    found += [f"recall file: {w}" for w in (WREN, QUOKKA) if w.encode() in data]
    found += [f"bucket: {k}" for k, v in env.bucket.objects.items() if WREN.encode() in v or QUOKKA.encode() in v]
    return found


def kill_at(monkeypatch, step: int) -> None:
    """The process dies as step `step` of the job begins (len(STEPS): as it marks itself done)."""
    async def killed(*args):
        raise Killed(f"killed at step {step}")

    if step < len(deletion_jobs.STEPS):
        steps = list(deletion_jobs.STEPS)
        steps[step] = (steps[step][0], killed)
        monkeypatch.setattr(deletion_jobs, "STEPS", tuple(steps))
    else:
        monkeypatch.setattr(deletion_jobs, "_mark_done", killed)


STEP_NAMES = [name for name, _ in deletion_jobs.STEPS] + ["done"]


@pytest.mark.parametrize("step", range(len(STEP_NAMES)), ids=STEP_NAMES)
async def test_a_deletion_killed_at_any_step_is_finished_by_the_next_sweep(env, monkeypatch, step):
    async with env.client() as c:
        x_id, y_id = await x_with_everything(c, env)
        assert where_the_words_are(env)  # the test can see them, where they are
        with monkeypatch.context() as patched:
            kill_at(patched, step)
            with pytest.raises(Killed):
                await delete_conversation(env.services.dynamo, x_id, "alice", cleaners(env))
        # Between the kill and the sweep: nothing of X can be read, the job waits.
        assert (await c.get(f"/api/conversations/{x_id}", headers=env.token("alice"))).status_code == 404
        listed = (await c.get("/api/conversations", headers=env.token("alice"))).json()["conversations"]
        assert [x["conversation_id"] for x in listed] == [y_id]
        assert [j.conversation_id for j in deletion_jobs.pending_jobs_sync(env.services.dynamo)] == [x_id]

        assert await finish_pending(env.services.dynamo, cleaners(env)) == {"finished": 1, "failed": 0}
        assert where_the_words_are(env) == []
        assert deletion_jobs.pending_jobs_sync(env.services.dynamo) == []
        # The owner's DELETE again: done (204); anyone else's: unknown.
        assert (await c.delete(f"/api/conversations/{x_id}", headers=env.token("bob"))).status_code == 404
        assert (await c.delete(f"/api/conversations/{x_id}", headers=env.token("alice"))).status_code == 204
        # Y lives on, its copies of X redacted.
        assert (await c.get(f"/api/conversations/{y_id}", headers=env.token("alice"))).status_code == 200


async def test_a_second_delete_of_a_half_deleted_conversation_finishes_it_and_answers_204(env, monkeypatch):
    async with env.client() as c:
        x_id, _ = await x_with_everything(c, env)
        with monkeypatch.context() as patched:
            kill_at(patched, STEP_NAMES.index("feedback"))
            with pytest.raises(Killed):
                await delete_conversation(env.services.dynamo, x_id, "alice", cleaners(env))
        assert any(w.startswith("feedback") for w in where_the_words_are(env))  # the reader's text, left behind
        env.services.conversations.delete_images = env.bucket.delete_conversation  # the route's cleaners: this bucket
        assert (await c.delete(f"/api/conversations/{x_id}", headers=env.token("alice"))).status_code == 204
    assert where_the_words_are(env) == []
    assert deletion_jobs.pending_jobs_sync(env.services.dynamo) == []


async def test_a_new_conversation_cannot_take_the_id_of_one_whose_deletion_is_pending(env, monkeypatch):
    async with env.client() as c:
        x_id, _ = await x_with_everything(c, env)
        with monkeypatch.context() as patched:
            kill_at(patched, 0)
            with pytest.raises(Killed):
                await delete_conversation(env.services.dynamo, x_id, "alice", cleaners(env))
        # The AI SDK's route opens a conversation under a client-chosen id: not this one, yet.
        body = {"id": x_id, "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "hello"}]}]}
        refused = await c.post("/api/ai-sdk/chat", json=body, headers=env.token("alice"))
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "conversation-busy"
        await finish_pending(env.services.dynamo, cleaners(env))
    assert where_the_words_are(env) == []


@pytest.mark.parametrize("step", range(len(STEP_NAMES)), ids=STEP_NAMES)
async def test_an_unanswered_first_question_killed_while_its_words_go_is_finished_by_the_sweep(env, monkeypatch, step):
    dynamo, answers = env.services.dynamo, env.services.answers
    cid, run_id = "c" * 32, "r" * 32
    await answers.begin(cid, "alice", run_id, f"Is {WREN} allowed?")
    await env.services.traces.put(run_id=run_id, caller="alice", conversation_id=cid, started_at=time.time(), outcome="error",
                                  steps=[], failure=None, question=f"Is {WREN} allowed?")
    with monkeypatch.context() as patched:
        kill_at(patched, step)
        with pytest.raises(Killed):
            await forget_unanswered(dynamo, cid, "alice", run_id, cleaners(env))
    assert await finish_pending(dynamo, cleaners(env)) == {"finished": 1, "failed": 0}
    assert where_the_words_are(env) == []
    async with env.client() as c:
        assert (await c.delete(f"/api/conversations/{cid}", headers=env.token("alice"))).status_code == 204


async def test_a_first_question_whose_process_died_is_deletable_by_its_owner(env):
    """No conversation item, no job: only its record, `running` with a lapsed lease. The owner's
    DELETE removes it and its trace (204); no one else's does (404); one still running is a 409."""
    dynamo, answers = env.services.dynamo, env.services.answers
    cid, run_id = "d" * 32, "e" * 32
    await answers.begin(cid, "alice", run_id, f"Is {QUOKKA} allowed?")
    await env.services.traces.put(run_id=run_id, caller="alice", conversation_id=cid, started_at=time.time(), outcome="error",
                                  steps=[], failure=None, question=f"Is {QUOKKA} allowed?")
    async with env.client() as c:
        busy = await c.delete(f"/api/conversations/{cid}", headers=env.token("alice"))
        assert busy.status_code == 409
        dynamo.table(deletion_jobs.ANSWERS).update_item(Key={"conversation_id": cid}, UpdateExpression="SET active_until = :t",
                                                        ExpressionAttributeValues={":t": int(time.time()) - 1})
        assert (await c.get(f"/api/conversations/{cid}/answer", headers=env.token("alice"))).json()["state"] == "interrupted"
        assert (await c.delete(f"/api/conversations/{cid}", headers=env.token("bob"))).status_code == 404
        assert (await c.delete(f"/api/conversations/{cid}", headers=env.token("alice"))).status_code == 204
        assert (await c.get(f"/api/conversations/{cid}/answer", headers=env.token("alice"))).status_code == 404
    assert where_the_words_are(env) == []
    assert dynamo.table(DELETIONS).get_item(Key={"conversation_id": cid})["Item"]["state"] == deletion_jobs.DONE


def test_the_local_sweep_finishes_a_pending_deletion(env, monkeypatch):
    """The local stack's sweep thread runs the same `finish_pending` (sweep_function.local)."""
    import asyncio

    from sweep_function.local import sweep_once

    async def setup() -> str:
        async with env.client() as c:
            x_id, _ = await x_with_everything(c, env)
        with monkeypatch.context() as patched:
            kill_at(patched, 1)
            with pytest.raises(Killed):
                await delete_conversation(env.services.dynamo, x_id, "alice", cleaners(env))
        return x_id

    asyncio.run(setup())
    summary = sweep_once(env.services.dynamo, images=env.bucket, recall=env.services.recall)
    assert summary["deletions"] == {"finished": 1, "failed": 0, "forgotten": 0}
    assert where_the_words_are(env) == []


def test_the_scheduled_sweep_in_aws_finishes_a_pending_deletion_and_counts_one_that_fails_again(env, monkeypatch):
    """The sweep function's handler runs `finish_deletions` every minute: one job finished, one
    whose step keeps failing counted (the handler then raises, for the Errors alarm)."""
    import asyncio

    from sweep_function.handler import finish_deletions

    async def setup() -> tuple[str, str]:
        async with env.client() as c:
            x_id, y_id = await x_then_y(c, env)  # no images: the sweep's bucket is AWS's, absent here
        for cid in (x_id, y_id):
            with monkeypatch.context() as patched:
                kill_at(patched, STEP_NAMES.index("traces"))
                with pytest.raises(Killed):
                    await delete_conversation(env.services.dynamo, cid, "alice", cleaners(env))
        return x_id, y_id

    x_id, y_id = asyncio.run(setup())
    real_traces = dict(deletion_jobs.STEPS)["traces"]

    async def traces_of_y_keep_failing(dynamo, job, cleaners):
        if job.conversation_id == y_id:
            raise ConnectionError("the traces table does not answer")
        return await real_traces(dynamo, job, cleaners)

    steps = [(name, traces_of_y_keep_failing if name == "traces" else step) for name, step in deletion_jobs.STEPS]
    with monkeypatch.context() as patched:
        patched.setattr(deletion_jobs, "STEPS", tuple(steps))
        assert finish_deletions(env.services.dynamo, env.services.recall) == {"finished": 1, "failed": 1, "forgotten": 0}
    assert [j.conversation_id for j in deletion_jobs.pending_jobs_sync(env.services.dynamo)] == [y_id]
    assert finish_deletions(env.services.dynamo, env.services.recall) == {"finished": 1, "failed": 0, "forgotten": 0}
    assert where_the_words_are(env) == []


async def test_a_first_question_whose_process_died_is_forgotten_by_the_sweep_once_its_lease_lapsed(env):
    """Only its record holds the question: the sweep finds it in the `by_lapse` index a lease after
    its lease lapsed and removes it; a live answer's record, and a dead answer to a conversation
    that exists (its words are the conversation's to delete), are kept."""
    from groundchat.store.deletion import sweep_deletions
    from groundchat.store.leases import CLAIM_LEASE_SECONDS

    dynamo, answers = env.services.dynamo, env.services.answers
    async with env.client() as c:
        x_id, _ = await x_then_y(c, env)
    dead, alive = "d" * 32, "e" * 32
    await answers.claim_new(dead, "alice", "1" * 32, f"Is {WREN} allowed?")
    await answers.claim_new(alive, "alice", "2" * 32, "Still thinking?")
    await answers.begin(x_id, "alice", "3" * 32, "And the other one?")  # an answer to X, dead too
    soon = time.time() + CLAIM_LEASE_SECONDS + 1
    # Just lapsed: not yet (a live answer that missed beats renews within a lease).
    assert await sweep_deletions(dynamo, cleaners(env), now=soon) == {"finished": 0, "failed": 0, "forgotten": 0}
    await answers.renew(alive, "2" * 32)  # this one lives on: renewed
    dynamo.table(deletion_jobs.ANSWERS).update_item(Key={"conversation_id": alive}, UpdateExpression="SET active_until = :t",
                                                    ExpressionAttributeValues={":t": int(soon) + 3 * CLAIM_LEASE_SECONDS})
    later = soon + CLAIM_LEASE_SECONDS + 1
    assert await sweep_deletions(dynamo, cleaners(env), now=later) == {"finished": 0, "failed": 0, "forgotten": 1}
    assert answers.table.get_item(Key={"conversation_id": dead}).get("Item") is None
    assert "Item" in answers.table.get_item(Key={"conversation_id": alive})
    kept = answers.table.get_item(Key={"conversation_id": x_id})["Item"]
    assert kept["question"] == "And the other one?" and "running_flag" not in kept  # looked at once, not every minute
    assert WREN not in str(dynamo.client.scan(TableName=dynamo.name(deletion_jobs.ANSWERS))["Items"])
    assert await sweep_deletions(dynamo, cleaners(env), now=later) == {"finished": 0, "failed": 0, "forgotten": 0}
