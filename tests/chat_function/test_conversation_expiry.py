"""Retention: a conversation expires whole, GROUNDCHAT_RETENTION_DAYS after its last answer. Every
item carries the same expiry, moved at each commit, so the oldest exchanges never go first; the
local stack's sweep deletes by the same rule DynamoDB's TTL applies in AWS."""
from __future__ import annotations

import asyncio
from datetime import datetime, timezone

import pytest

from groundchat.store import conversations as conversations_module
from groundchat.store import usage as us
from groundchat.store.retention import DAY, expire_due, expiry_after
from groundchat.store.tables import CONVERSATIONS, FEEDBACK, MESSAGES, TRACES, USAGE
from groundchat_testkit.scripted import ScriptedModel, Step
from groundchat_testkit.clock import ManualClock
from tests.chat_function.conftest import parse_sse

DEC_1 = datetime(2026, 12, 1, 9, 30, tzinfo=timezone.utc).timestamp()


def expiries(dynamo, table, conversation_id: str) -> list[int]:
    scanned = dynamo.client.scan(TableName=dynamo.name(table))["Items"]
    return [int(i["expires_at"]["N"]) for i in scanned if i.get("conversation_id", {}).get("S") == conversation_id]


@pytest.fixture
def env(make_env, monkeypatch):
    from share_function.app import add_share_routes

    clock = ManualClock(DEC_1)
    monkeypatch.setattr(conversations_module, "time", clock)  # the commits' clock
    env = make_env(ScriptedModel([Step(tool_calls=[("compare_contexts", {"context": "none"})]), Step(text="It is 3.5.")] * 10))
    add_share_routes(env.app, env.services)
    env.clock = clock
    return env


async def ask(c, env, message: str, conversation_id: str | None = None) -> str:
    body = {"stream": True, "message": message, **({"conversation_id": conversation_id} if conversation_id else {})}
    r = await c.post("/api/chat", json=body, headers=env.token("alice"))
    assert parse_sse(r.text)[-1][1]["reason"] == "complete"
    return parse_sse(r.text)[0][1]["conversation_id"]


def test_the_expiry_is_the_end_of_a_utc_day_at_least_the_retention_after():
    expires = expiry_after(DEC_1, 90)
    assert datetime.fromtimestamp(expires, timezone.utc) == datetime(2027, 3, 2, tzinfo=timezone.utc)
    assert DEC_1 + 90 * DAY <= expires < DEC_1 + 91 * DAY
    assert expiry_after(DEC_1 + 3600, 90) == expires  # a day's commits share one expiry: no rewrites


async def test_every_item_of_a_conversation_carries_the_newest_expiry(env, settings):
    dynamo = env.services.dynamo
    async with env.client() as c:
        cid = await ask(c, env, "Which context is best?")
        first = expiry_after(DEC_1, settings.retention_days)
        assert set(expiries(dynamo, MESSAGES, cid)) == {first} == set(expiries(dynamo, CONVERSATIONS, cid))
        rated = await c.post(f"/api/conversations/{cid}/messages/3/feedback", json={"rating": "up"}, headers=env.token("alice"))
        assert rated.status_code == 200 and expiries(dynamo, FEEDBACK, cid) == [first]
        env.clock.now = DEC_1 + 40 * DAY  # forty days later, the conversation goes on
        await ask(c, env, "And without context?", cid)
        shared = (await c.post(f"/api/conversations/{cid}/share", headers=env.token("alice"))).json()
        page = (await c.get(f"/api/shared/{cid}")).json()
    later = expiry_after(DEC_1 + 40 * DAY, settings.retention_days)
    # The first exchange's messages moved with the conversation: all eight expire together.
    assert expiries(dynamo, MESSAGES, cid) == [later] * 8 and expiries(dynamo, CONVERSATIONS, cid) == [later]
    # The rating of the first answer too: it never lapses while its answer lives.
    assert expiries(dynamo, FEEDBACK, cid) == [later]
    # The shared page says until when it stays.
    assert page["expires_at"] == shared["conversation"]["expires_at"] == "2027-04-11T00:00:00Z"


async def test_the_sweep_deletes_whole_expired_conversations_and_keeps_the_money(env, settings):
    from sweep_function.local import sweep_once

    dynamo = env.services.dynamo
    async with env.client() as c:
        old = await ask(c, env, "An old question")
        env.clock.now = DEC_1 + 30 * DAY
        recent = await ask(c, env, "A recent question")
    usage_before = us.all_rows_sync(dynamo.client, dynamo.name(USAGE))
    old_expiry = expiry_after(DEC_1, settings.retention_days)
    # Just before its day, nothing goes; at it, every item of the old one, and only of it.
    # The local stack runs it in a thread of its own, as here.
    assert (await asyncio.to_thread(sweep_once, dynamo, old_expiry - 1))["expired"]["messages"] == 0
    swept = await asyncio.to_thread(sweep_once, dynamo, old_expiry)
    assert swept["expired"]["conversations"] == 1 and swept["expired"]["messages"] == 4
    assert expiries(dynamo, MESSAGES, old) == [] and expiries(dynamo, CONVERSATIONS, old) == []
    assert len(expiries(dynamo, MESSAGES, recent)) == 4 and len(expiries(dynamo, CONVERSATIONS, recent)) == 1
    assert us.all_rows_sync(dynamo.client, dynamo.name(USAGE)) == usage_before  # money is never swept


async def test_an_expired_conversation_is_gone_for_every_reader_before_ttl_deletes_it(env):
    dynamo = env.services.dynamo
    async with env.client() as c:
        cid = await ask(c, env, "Which context is best?")
        assert (await c.post(f"/api/conversations/{cid}/share", headers=env.token("alice"))).status_code == 200
        # Its day has come, and DynamoDB has not deleted it yet (it takes up to a few days).
        dynamo.table(CONVERSATIONS).update_item(Key={"conversation_id": cid}, UpdateExpression="SET expires_at = :past",
                                                ExpressionAttributeValues={":past": 1_000})
        assert (await c.get(f"/api/conversations/{cid}", headers=env.token("alice"))).status_code == 404
        assert (await c.get("/api/conversations", headers=env.token("alice"))).json()["conversations"] == []
        assert (await c.get(f"/chat/shared/{cid}")).status_code == 404
        assert (await c.get("/api/shared")).json()["conversations"] == []
        r = await c.post("/api/chat", json={"stream": True, "message": "more", "conversation_id": cid}, headers=env.token("alice"))
        assert r.status_code == 404


async def test_expire_due_applies_to_every_table_with_a_ttl_and_no_other(env):
    dynamo = env.services.dynamo
    async with env.client() as c:
        cid = await ask(c, env, "Which context is best?")
    expired = await expire_due(dynamo, now=expiry_after(DEC_1, 10_000))
    assert expired["conversations"] == 1 and expired["messages"] == 4 and expired["traces"] == 1
    assert "usage" not in expired and "budget" not in expired
    assert expiries(dynamo, TRACES, cid) == []


async def test_the_local_stack_sweeps_in_the_background(env):
    from sweep_function.local import start_local_sweeps

    dynamo = env.services.dynamo
    async with env.client() as c:
        cid = await ask(c, env, "Which context is best?")
    for table in (CONVERSATIONS, MESSAGES):  # its day has come (the real clock is the sweep's)
        for item in dynamo.client.scan(TableName=dynamo.name(table))["Items"]:
            key = {k: item[k] for k in ("conversation_id", "seq") if k in item}
            dynamo.client.update_item(TableName=dynamo.name(table), Key=key, UpdateExpression="SET expires_at = :p",
                                      ExpressionAttributeValues={":p": {"N": "1000"}})
    stop = start_local_sweeps(dynamo, period=3600)  # sweeps at once, then every period
    try:
        for _ in range(100):
            if not expiries(dynamo, MESSAGES, cid) and not expiries(dynamo, CONVERSATIONS, cid):
                break
            await asyncio.sleep(0.05)
    finally:
        stop.set()
    assert expiries(dynamo, MESSAGES, cid) == [] and expiries(dynamo, CONVERSATIONS, cid) == []
