"""DELETE /api/conversations/{id}: the owner's conversation goes whole (messages, share link, run
records), the money stays (usage rows, with the conversation id only); others get 404, not 403."""
from __future__ import annotations

import json

import pytest

from groundchat.store import usage as us
from groundchat.store.tables import ANSWERS, CONVERSATIONS, FEEDBACK, MESSAGES, TRACES, USAGE
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.conftest import parse_sse


def items_of(dynamo, table, conversation_id: str) -> list[dict]:
    scanned = dynamo.client.scan(TableName=dynamo.name(table))["Items"]
    return [i for i in scanned if i.get("conversation_id", {}).get("S") == conversation_id]


@pytest.fixture
def env(make_env):
    from share_function.app import add_share_routes

    # Every answer: a tool call, then words (question, call, result, answer: four messages).
    env = make_env(ScriptedModel([Step(tool_calls=[("compare_contexts", {"context": "none"})]), Step(text="It is 3.5.")] * 10))
    add_share_routes(env.app, env.services)  # the share function, mounted beside as the local stack does
    return env


async def ask(c, env, user: str, message: str, conversation_id: str | None = None) -> str:
    body = {"stream": True, "message": message, **({"conversation_id": conversation_id} if conversation_id else {})}
    r = await c.post("/api/chat", json=body, headers=env.token(user))
    assert r.status_code == 200, r.text
    frames = parse_sse(r.text)
    assert frames[-1][1]["reason"] == "complete", frames
    return frames[0][1]["conversation_id"]


async def test_the_owner_deletes_everything_but_the_money(env):
    dynamo = env.services.dynamo
    async with env.client() as c:
        cid = await ask(c, env, "alice", "Which context is best?")
        await ask(c, env, "alice", "And without context?", cid)
        other = await ask(c, env, "alice", "A conversation that stays")
        assert (await c.post(f"/api/conversations/{cid}/share", headers=env.token("alice"))).status_code == 200
        assert (await c.get(f"/chat/shared/{cid}")).status_code == 200
        usage_before = us.all_rows_sync(dynamo.client, dynamo.name(USAGE))
        traces_before = items_of(dynamo, TRACES, cid)
        assert len(items_of(dynamo, MESSAGES, cid)) == 8 and len(traces_before) == 2
        # The owner and a reader of the shared page rate the last answer (seq 7).
        for user in ("alice", "bob"):
            rated = await c.post(f"/api/conversations/{cid}/messages/7/feedback", headers=env.token(user),
                                 json={"rating": "down", "reasons": ["wrong-number"]})
            assert rated.status_code == 200, rated.text
        assert len(items_of(dynamo, FEEDBACK, cid)) == 2 and len(items_of(dynamo, ANSWERS, cid)) == 1

        r = await c.delete(f"/api/conversations/{cid}", headers=env.token("alice"))
        assert r.status_code == 200, r.text
        assert r.json()["deleted"] == {"conversation_id": cid, "messages": 8, "share_link": True, "traces": 2, "images": 0, "recall_entries": 0, "recalled_copies": 0,
                                       "feedback": 2, "usage_rows": "kept"}
        # Gone for the owner, the share link and every reader.
        assert (await c.get(f"/api/conversations/{cid}", headers=env.token("alice"))).status_code == 404
        assert (await c.get(f"/chat/shared/{cid}")).status_code == 404
        assert (await c.get(f"/api/shared/{cid}")).status_code == 404
        listed = (await c.get("/api/conversations", headers=env.token("alice"))).json()["conversations"]
        assert [x["conversation_id"] for x in listed] == [other]
        # Asking on into it is the 404 of an unknown conversation; deleting it again is done already
        # for its owner (204) and still unknown to anyone else.
        r = await c.post("/api/chat", json={"stream": True, "message": "more", "conversation_id": cid}, headers=env.token("alice"))
        assert r.status_code == 404
        assert (await c.delete(f"/api/conversations/{cid}", headers=env.token("alice"))).status_code == 204
        assert (await c.delete(f"/api/conversations/{cid}", headers=env.token("bob"))).status_code == 404
    assert items_of(dynamo, CONVERSATIONS, cid) == [] and items_of(dynamo, MESSAGES, cid) == []
    assert items_of(dynamo, TRACES, cid) == []
    # The ratings and the record of its last answer (which holds its question) go with it.
    assert items_of(dynamo, FEEDBACK, cid) == [] and items_of(dynamo, ANSWERS, cid) == []
    # The other conversation is untouched.
    assert len(items_of(dynamo, MESSAGES, other)) == 4 and len(items_of(dynamo, TRACES, other)) == 1
    # Every usage row stays, the same rows with the same money; they name the conversation, hold none of its words.
    usage_after = us.all_rows_sync(dynamo.client, dynamo.name(USAGE))
    assert usage_after == usage_before and any(row["conversation_id"] == cid for row in usage_after)
    assert all("Which context" not in json.dumps(row, default=str) for row in usage_after)


async def test_others_get_404_signed_out_401_and_malformed_ids_404(env):
    async with env.client() as c:
        cid = await ask(c, env, "alice", "Which context is best?")
        assert (await c.delete(f"/api/conversations/{cid}", headers=env.token("bob"))).status_code == 404
        unknown = await c.delete(f"/api/conversations/{'f' * 32}", headers=env.token("bob"))
        assert unknown.status_code == 404 and unknown.json() == (await c.delete(f"/api/conversations/{cid}", headers=env.token("bob"))).json()
        assert (await c.delete(f"/api/conversations/{cid}")).status_code == 401
        assert (await c.delete("/api/conversations/not-an-id", headers=env.token("alice"))).status_code == 404
        # Nothing of alice's went.
        assert (await c.get(f"/api/conversations/{cid}", headers=env.token("alice"))).status_code == 200


async def test_an_answer_in_progress_makes_the_delete_a_409_and_the_answer_commits(env):
    from groundchat.auth.callers import Caller
    from groundchat.chat.answer import answer_question

    async with env.client() as c:
        cid = await ask(c, env, "alice", "Which context is best?")
        # An answer holds the claim on the conversation until its frames have run out.
        answer = await answer_question(env.services, Caller(id="alice"), {"message": "And then?", "conversation_id": cid})
        busy = await c.delete(f"/api/conversations/{cid}", headers=env.token("alice"))
        assert busy.status_code == 409 and busy.json()["error"]["code"] == "conversation-busy"
        frames = [f async for f in answer.frames]
        assert frames[-1].data["reason"] == "complete"
        assert len(items_of(env.services.dynamo, MESSAGES, cid)) == 8  # the answer was not cut in half
        assert (await c.delete(f"/api/conversations/{cid}", headers=env.token("alice"))).status_code == 200
    assert items_of(env.services.dynamo, MESSAGES, cid) == []


async def test_a_commit_between_the_read_and_the_delete_is_deleted_too(env, monkeypatch):
    """The delete is conditional on the version it read: an exchange that lands in between makes it
    look again, so no message committed before the delete is left behind."""
    from groundchat.store import deletion

    async with env.client() as c:
        cid = await ask(c, env, "alice", "Which context is best?")
        real_keys, landed = deletion.message_keys_sync, []

        def keys_then_an_answer_lands(dynamo, conversation_id):
            keys = real_keys(dynamo, conversation_id)
            if not landed:  # once: bump the version and add a message, as a commit would
                landed.append(True)
                dynamo.table(MESSAGES).put_item(Item={"conversation_id": cid, "seq": 99, "role": "user", "content": "late"})
                dynamo.table(CONVERSATIONS).update_item(Key={"conversation_id": cid}, UpdateExpression="SET version = version + :one",
                                                        ExpressionAttributeValues={":one": 1})
            return keys

        monkeypatch.setattr(deletion, "message_keys_sync", keys_then_an_answer_lands)
        r = await c.delete(f"/api/conversations/{cid}", headers=env.token("alice"))
    assert r.status_code == 200 and r.json()["deleted"]["messages"] == 5
    assert items_of(env.services.dynamo, MESSAGES, cid) == []


async def test_a_conversation_longer_than_one_transaction_is_deleted_whole(env):
    from groundchat.store.deletion import delete_conversation

    dynamo = env.services.dynamo
    async with env.client() as c:
        cid = await ask(c, env, "alice", "Which context is best?")
    with dynamo.table(MESSAGES).batch_writer() as batch:
        for seq in range(4, 250):
            batch.put_item(Item={"conversation_id": cid, "seq": seq, "role": "tool", "content": "x", "run_id": "r" * 32})
    deleted = await delete_conversation(dynamo, cid, "alice")
    assert deleted.messages == 250
    assert items_of(dynamo, MESSAGES, cid) == [] and items_of(dynamo, CONVERSATIONS, cid) == []


async def test_the_images_of_a_conversation_go_with_it(env):
    from groundchat.store.deletion import delete_conversation
    from groundchat.store.deletion_jobs import Cleaners

    dynamo = env.services.dynamo
    async with env.client() as c:
        with_images = await ask(c, env, "alice", "What is wrong in this screenshot?")
        without = await ask(c, env, "alice", "Which context is best?")
    dynamo.table(CONVERSATIONS).update_item(Key={"conversation_id": with_images}, UpdateExpression="SET has_images = :t",
                                            ExpressionAttributeValues={":t": True})
    removed: list[str] = []

    async def remove_images(conversation_id: str) -> int:
        removed.append(conversation_id)
        return 2

    assert (await delete_conversation(dynamo, with_images, "alice", Cleaners(remove_images=remove_images))).images == 2
    # A conversation that never held an image does not ask the image store for anything.
    assert (await delete_conversation(dynamo, without, "alice", Cleaners(remove_images=remove_images))).images == 0
    assert removed == [with_images]
