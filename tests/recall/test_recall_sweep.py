"""The recall sweep: when a conversation expires (or is gone), its recall entries leave the index at
the next sweep; a live conversation's stay, also when its expiry has moved since they were made.
The sweep finds candidates by a range query on the entries' expiry, in bounded rounds, and a
second sweep at the same time does nothing."""
from __future__ import annotations

import asyncio
import json
import sqlite3
from datetime import datetime, timezone

import pytest

from groundchat.auth.callers import CHAT_USE, RECALL_READ, RUNS_READ
from groundchat.recall import recall_index_path
from groundchat.recall.embedded import EmbeddedRecallIndex
from groundchat.recall.entries import make_entry
from groundchat.recall.sweep import sweep_recall
from groundchat.store import conversations as conversations_module
from groundchat.store.retention import DAY, expiry_after
from groundchat.store.tables import CONVERSATIONS
from groundchat_testkit.scripted import ScriptedModel, Step
from groundchat_testkit.clock import ManualClock
from tests.chat_function.conftest import TEST_TOOLS, make_env, parse_sse  # noqa: F401 (make_env: a fixture)
from tests.corpus_support import WordHashEmbedder
from tests.lambda_support import LambdaContext

DEC_1 = datetime(2026, 12, 1, 9, 30, tzinfo=timezone.utc).timestamp()
GRANTS = {"alice": [CHAT_USE, RUNS_READ, RECALL_READ]}


def stored(index: EmbeddedRecallIndex) -> dict[str, list[int | None]]:
    """conversation id → the expiries of its entries, read straight from the file."""
    out: dict[str, list[int | None]] = {}
    for cid, expires in sqlite3.connect(index.path).execute("SELECT conversation_id, expires_at FROM entries ORDER BY rowid"):
        out.setdefault(cid, []).append(expires)
    return out


@pytest.fixture
def env(make_env, monkeypatch, settings):
    env = make_env(ScriptedModel([]), grants=GRANTS, tools=[*TEST_TOOLS])
    env.services.recall_override = EmbeddedRecallIndex(recall_index_path(settings), WordHashEmbedder)
    env.clock = ManualClock(DEC_1)
    monkeypatch.setattr(conversations_module, "time", env.clock)  # the commits' clock
    return env


async def ask(c, env, message: str, conversation_id: str | None = None) -> str:
    env.model.steps.append(Step(text=f"An answer to: {message}"))
    body = {"stream": True, "message": message, **({"conversation_id": conversation_id} if conversation_id else {})}
    r = await c.post("/api/chat", json=body, headers=env.token("alice"))
    assert parse_sse(r.text)[-1][1]["reason"] == "complete", r.text
    return parse_sse(r.text)[0][1]["conversation_id"]


async def test_an_expired_conversations_entries_are_swept_and_a_live_ones_stay(env, settings):
    from sweep_function.local import sweep_once

    dynamo, index, days = env.services.dynamo, env.services.recall, settings.retention_days
    async with env.client() as c:
        old = await ask(c, env, "An old question about contrast")
        continued = await ask(c, env, "A question about focus")
        env.clock.now = DEC_1 + 30 * DAY
        recent = await ask(c, env, "A recent question about labels")
        env.clock.now = DEC_1 + 40 * DAY
        await ask(c, env, "More about focus", continued)  # its expiry moves: the first entry's does not
    first, later = expiry_after(DEC_1, days), expiry_after(DEC_1 + 40 * DAY, days)
    # Each entry carries the expiry its commit gave the conversation.
    assert stored(index) == {old: [first], continued: [first, later], recent: [expiry_after(DEC_1 + 30 * DAY, days)]}

    assert (await asyncio.to_thread(sweep_once, dynamo, first - 1, recall=index))["recall"]["checked"] == 0
    swept = await asyncio.to_thread(sweep_once, dynamo, first, recall=index)
    # The old conversation expired (its items are deleted by the same sweep): its entry goes. The
    # continued one lives on: its first entry is moved to the conversation's expiry, not removed.
    assert swept["expired"]["conversations"] == 1
    assert swept["recall"] == {"removed": 1, "conversations_removed": 1, "renewed": 1, "checked": 2, "backlog": False}
    assert stored(index) == {continued: [later, later], recent: [expiry_after(DEC_1 + 30 * DAY, days)]}
    assert [h.entry.conversation_id for h in index.search("alice", "old question contrast", 10)].count(old) == 0
    assert {h.entry.conversation_id for h in index.search("alice", "focus", 10)} >= {continued}

    again = await asyncio.to_thread(sweep_once, dynamo, first, recall=index)  # idempotent
    assert again["recall"] == {"removed": 0, "conversations_removed": 0, "renewed": 0, "checked": 0, "backlog": False}

    gone = await asyncio.to_thread(sweep_once, dynamo, later, recall=index)
    assert gone["recall"]["removed"] == 3 and stored(index) == {}


async def test_entries_left_by_a_deleted_conversation_or_from_before_expiries_are_settled(env):
    dynamo, index = env.services.dynamo, env.services.recall
    async with env.client() as c:
        live = await ask(c, env, "A question about headings")
    expires = int(dynamo.table(CONVERSATIONS).get_item(Key={"conversation_id": live})["Item"]["expires_at"])
    index.add(make_entry("alice", live, "old-run", "Indexed before expiries", "kept", expires_at=None))
    index.add(make_entry("alice", "f" * 32, "r1", "A conversation deleted while the index was down", "x", expires_at=1_000))
    index.add(make_entry("alice", "e" * 32, "r2", "Indexed before expiries, gone since", "y", expires_at=None))
    index.add(make_entry("mallory", live, "r3", "Someone else's entry under alice's conversation", "z", expires_at=1_000))

    from sweep_function.local import sweep_once

    swept = (await asyncio.to_thread(sweep_once, dynamo, DEC_1, recall=index))["recall"]
    assert (swept["removed"], swept["conversations_removed"], swept["renewed"]) == (3, 3, 1)
    assert stored(index) == {live: [expires, expires]}  # the entry from before expiries now carries its own


def test_a_backlog_is_swept_in_bounded_rounds_and_the_rest_next_time(tmp_path):
    index = EmbeddedRecallIndex(tmp_path / "recall.sqlite", WordHashEmbedder)
    for n in range(25):
        index.add(make_entry("alice", f"{n:032x}", "r", f"question {n}", "answer", expires_at=1_000))
    reads: list[list[str]] = []

    def nothing_held(ids: list[str]) -> dict:
        reads.append(ids)
        return {}

    first = sweep_recall(index, nothing_held, 2_000, batch=10, max_rounds=2)
    assert (first.removed, first.checked, first.backlog) == (20, 20, True)
    assert [len(r) for r in reads] == [10, 10]  # one read of at most `batch` conversations a round
    second = sweep_recall(index, nothing_held, 2_000, batch=10, max_rounds=2)
    assert (second.removed, second.backlog) == (5, False) and stored(index) == {}


def test_the_due_query_reads_the_expiry_index_not_every_entry(tmp_path):
    index = EmbeddedRecallIndex(tmp_path / "recall.sqlite", WordHashEmbedder)
    index.add(make_entry("alice", "c" * 32, "r", "q", "a", expires_at=5))
    asked: list[str] = []
    index._db().set_trace_callback(asked.append)
    assert index.due_conversations(10, 100) == [("alice", "c" * 32)]
    index._db().set_trace_callback(None)
    [query] = [q for q in asked if q.startswith("SELECT")]
    plan = [row[3] for row in index._db().execute("EXPLAIN QUERY PLAN " + query)]
    assert any("USING INDEX entries_expiry (expires_at<?)" in step for step in plan), plan
    assert not any(step.startswith("SCAN entries") for step in plan), plan


def test_a_file_written_before_expiries_were_kept_gains_them(tmp_path):
    path = tmp_path / "recall.sqlite"
    old = sqlite3.connect(path)
    old.executescript("""
        CREATE TABLE entries (rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, owner TEXT NOT NULL,
          conversation_id TEXT NOT NULL, run_id TEXT NOT NULL, question TEXT NOT NULL, answer TEXT NOT NULL,
          created_at REAL NOT NULL, model_id TEXT NOT NULL, vector BLOB NOT NULL);
        CREATE VIRTUAL TABLE entries_fts USING fts5(question, answer, tokenize='porter unicode61');
        INSERT INTO entries VALUES (1, 'x', 'alice', 'cccc', 'r', 'q', 'a', 1.0, 'm', x'00');
    """)
    old.commit()
    old.close()
    index = EmbeddedRecallIndex(path, WordHashEmbedder)
    assert index.due_conversations(0, 10) == [("alice", "cccc")]  # no expiry yet: looked at first
    assert sweep_recall(index, lambda ids: {}, 0).removed == 1


async def test_the_scheduled_handler_sweeps_the_recall_index(env, settings, monkeypatch):
    """What Lambda runs every 15 minutes: reservations, then recall entries; it reads the
    conversations with BatchGetItem only (the template's sweep policy names exactly that)."""
    import boto3
    from sweep_function.handler import handler

    dynamo, index = env.services.dynamo, env.services.recall
    async with env.client() as c:
        expired = await ask(c, env, "A question that will expire")
        live = await ask(c, env, "A question that stays")
    dynamo.table(CONVERSATIONS).update_item(Key={"conversation_id": expired}, UpdateExpression="SET expires_at = :p",
                                            ExpressionAttributeValues={":p": 1_000})
    index.add(make_entry("alice", expired, "r-old", "q", "a", expires_at=1_000))  # as a commit long ago left it
    seen: list[tuple[str, dict]] = []
    real_client = boto3.client

    def recording_client(service, *args, **kwargs):
        client = real_client(service, *args, **kwargs)
        if service == "dynamodb":
            client.meta.events.register("before-parameter-build.dynamodb",
                                        lambda params, model, **_: seen.append((model.name, json.loads(json.dumps(params, default=str)))))
        return client

    monkeypatch.setattr(boto3, "client", recording_client)
    result = await asyncio.to_thread(handler, {"source": "aws.events"}, LambdaContext())
    assert result["recall"] == {"removed": 2, "conversations_removed": 1, "renewed": 0, "checked": 1, "backlog": False}
    assert set(stored(index)) == {live}
    reads = [p for name, p in seen if name == "BatchGetItem"]
    assert len(reads) == 1 and list(reads[0]["RequestItems"]) == [dynamo.name(CONVERSATIONS)]
    assert {name for name, _ in seen} <= {"Query", "TransactWriteItems", "BatchGetItem"}


async def test_the_local_stacks_background_sweep_opens_the_configured_recall_index(env):
    """`groundchat serve` starts the sweeps without naming the recall index: each sweep opens the
    configured one (here the file the chat writes), as the Lambda handler does in AWS."""
    from sweep_function.local import start_local_sweeps

    dynamo, index = env.services.dynamo, env.services.recall
    async with env.client() as c:
        cid = await ask(c, env, "A question about contrast")
    dynamo.table(CONVERSATIONS).update_item(Key={"conversation_id": cid}, UpdateExpression="SET expires_at = :p",
                                            ExpressionAttributeValues={":p": 1_000})
    with sqlite3.connect(index.path) as db:  # its day has come (the real clock is the sweep's)
        db.execute("UPDATE entries SET expires_at = 1000")
    stop = start_local_sweeps(dynamo, period=3600)
    try:
        for _ in range(100):
            if not stored(index):
                break
            await asyncio.sleep(0.05)
    finally:
        stop.set()
    assert stored(index) == {}
