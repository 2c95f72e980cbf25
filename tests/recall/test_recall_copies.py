"""What recall copies of one conversation into another, and what deleting and sharing leave of it.

Conversation X holds words found nowhere else (`WREN`, `QUOKKA`); conversation Y recalls X, and its
answer quotes them. A shared Y never shows them, Y is never indexed for recall itself (no echo),
and once X is deleted they are found nowhere: not in Y as its owner reads it, not on Y's shared
page, not in recall, not in the traces."""
from __future__ import annotations

import json

import pytest

from groundchat.auth.callers import CHAT_USE, RECALL_READ, RUNS_READ, TRACES_READ
from groundchat.recall.embedded import EmbeddedRecallIndex
from groundchat.recall.entries import make_entry
from groundchat.store.deletion import delete_conversation
from groundchat.store.deletion_jobs import Cleaners
from groundchat.tools.recall_tool import search_my_conversations
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.conftest import TEST_TOOLS, make_env, parse_sse  # noqa: F401 (make_env: a fixture)
from tests.corpus_support import WordHashEmbedder

WREN, QUOKKA = "wrenfeather", "quokkaligned"
GRANTS = {"alice": [CHAT_USE, RUNS_READ, RECALL_READ, TRACES_READ]}


@pytest.fixture
def env(make_env, tmp_path):
    env = make_env(ScriptedModel([]), grants=GRANTS, tools=[*TEST_TOOLS, search_my_conversations])
    env.services.recall_override = EmbeddedRecallIndex(tmp_path / "recall.sqlite", WordHashEmbedder)
    return env


async def ask(c, env, message, *steps):
    env.model.steps.extend(steps)
    r = await c.post("/api/chat", json={"stream": True, "message": message}, headers=env.token("alice"))
    assert r.status_code == 200, r.text
    frames = parse_sse(r.text)
    assert frames[-1][1]["reason"] == "complete", frames[-1]
    return frames


async def x_then_y(c, env):
    """X with its unique words, then Y whose answer recalls and quotes them."""
    x = await ask(c, env, f"Which context is best for contrast, {WREN}?", Step(text=f"Checklist is best for contrast, {QUOKKA}."))
    x_id, x_run = x[0][1]["conversation_id"], x[0][1]["run_id"]
    ref = make_entry("alice", x_id, x_run, "", "").ref
    y = await ask(c, env, "What did I ask before about contrast?",
                  Step(tool_calls=[("search_my_conversations", {"query": "contrast"})]),
                  Step(text=f"You asked about {WREN}; the answer was {QUOKKA} [{ref}]."))
    excerpts = next(d for e, d in y if e == "tool-result")["result"]["excerpts"]
    assert [h["section"] for h in excerpts] == [x_id] and QUOKKA in excerpts[0]["text"]  # the copy happened
    return x_id, y[0][1]["conversation_id"]


def words_in(text: str) -> set[str]:
    return {w for w in (WREN, QUOKKA) if w in text}


async def test_a_shared_conversation_never_shows_what_recall_brought(env):
    from share_function.app import add_share_routes

    add_share_routes(env.app, env.services)
    async with env.client() as c:
        x_id, y_id = await x_then_y(c, env)
        assert (await c.post(f"/api/conversations/{y_id}/share", headers=env.token("alice"))).status_code == 200
        shared = (await c.get(f"/api/shared/{y_id}")).text
        page = (await c.get(f"/chat/shared/{y_id}")).text
        owner_view = (await c.get(f"/api/conversations/{y_id}", headers=env.token("alice"))).text
    assert words_in(shared) == set() and x_id not in shared
    assert words_in(page) == set() and x_id not in page
    messages = json.loads(shared)["messages"]
    recall_result = json.loads(next(m for m in messages if m["role"] == "tool")["content"])
    assert recall_result == {"outcome": "withheld", "consulted": 1, "excerpts": [],
                             "note": "1 past conversation consulted; a shared page does not show them"}
    assert messages[-1]["content"] == "This answer drew on the owner's earlier conversations, which a shared page does not show."
    assert words_in(owner_view) == {WREN, QUOKKA}  # the owner still reads their own answer whole


async def test_an_answer_built_on_recall_is_not_indexed_again(env):
    async with env.client() as c:
        x_id, y_id = await x_then_y(c, env)
    found = env.services.recall.search("alice", f"{WREN} {QUOKKA} contrast", 20)
    assert [h.entry.conversation_id for h in found] == [x_id]


async def test_deleting_x_leaves_its_words_nowhere(env):
    from share_function.app import add_share_routes

    add_share_routes(env.app, env.services)
    async with env.client() as c:
        x_id, y_id = await x_then_y(c, env)
        await c.post(f"/api/conversations/{y_id}/share", headers=env.token("alice"))
        # A summary of Y's older messages, as `long-authoring` keeps one, written from the copies.
        env.services.conversations.conversations.update_item(
            Key={"conversation_id": y_id}, UpdateExpression="SET history_summary = :s",
            ExpressionAttributeValues={":s": json.dumps({"text": f"Earlier: {WREN}, {QUOKKA}.", "through": 3})})
        deleted = await c.delete(f"/api/conversations/{x_id}", headers=env.token("alice"))
        assert deleted.status_code == 200
        assert deleted.json()["deleted"]["recall_entries"] == 1 and deleted.json()["deleted"]["recalled_copies"] == 3  # the search step, its result, the answer
        seen = {
            "owner's view of Y": (await c.get(f"/api/conversations/{y_id}", headers=env.token("alice"))).text,
            "Y's shared JSON": (await c.get(f"/api/shared/{y_id}")).text,
            "Y's shared page": (await c.get(f"/chat/shared/{y_id}")).text,
            "the conversation list": (await c.get("/api/conversations", headers=env.token("alice"))).text,
            "the latest trace": (await c.get("/api/traces/latest", headers=env.token("alice"))).text,
        }
    assert {where: words_in(text) for where, text in seen.items()} == {where: set() for where in seen}
    assert all(x_id not in text for text in seen.values())
    hits = env.services.recall.search("alice", f"{WREN} {QUOKKA} contrast", 20)
    assert [h for h in hits if words_in(h.entry.text())] == []
    y = json.loads(seen["owner's view of Y"])["messages"]
    assert y[-1]["content"] == "This answer quoted a conversation that has since been deleted, so its words were removed."
    excerpt = json.loads(next(m for m in y if m["role"] == "tool")["content"])["excerpts"][0]
    assert excerpt["removed"] is True and set(excerpt) == {"ref", "source", "removed", "text"}
    # Nothing of the redaction is left to find: the conversation no longer names X.
    item = env.services.conversations.conversations.get_item(Key={"conversation_id": y_id})["Item"]
    assert "recalled_from" not in item or x_id not in item["recalled_from"]
    assert "history_summary" not in item  # dropped: the next answer summarises the redacted messages


class DeletesXBeforeAnswering(ScriptedModel):
    """X is deleted while Y's answer is being written: after Y's recall search, before its commit."""

    def __init__(self, delete):
        super().__init__([])
        self.delete = delete

    async def __call__(self, request):
        if self._n == 2:  # Y's answering step (X took step 0, Y's search step 1)
            await self.delete()
        async for event in super().__call__(request):
            yield event


async def test_a_conversation_deleted_while_an_answer_quoting_it_runs_is_redacted_at_its_commit(env):
    box = {}

    async def delete_x():
        box["deleted"] = await delete_conversation(env.services.dynamo, box["x"], "alice",
                                                   Cleaners(remove_recall=env.services.remove_recall))

    env.model = env.services.model_override = DeletesXBeforeAnswering(delete_x)
    async with env.client() as c:
        x = await ask(c, env, f"Which context is best for contrast, {WREN}?", Step(text=f"Checklist, {QUOKKA}."))
        box["x"] = x[0][1]["conversation_id"]
        y = await ask(c, env, "What did I ask before about contrast?",
                      Step(tool_calls=[("search_my_conversations", {"query": "contrast"})]),
                      Step(text=f"You asked about {WREN}; it was {QUOKKA}."))
        assert box["deleted"].recalled_copies == 0  # Y had not committed: the deletion found nothing to redact
        owner_view = (await c.get(f"/api/conversations/{y[0][1]['conversation_id']}", headers=env.token("alice"))).text
    assert words_in(owner_view) == set()


def test_a_removed_entrys_words_leave_the_recall_file(tmp_path):
    """Deleted rows stay in SQLite's free pages and FTS5's old segments until rewritten."""
    index = EmbeddedRecallIndex(tmp_path / "recall.sqlite", WordHashEmbedder)
    index.add(make_entry("alice", "c1", "r1", f"Which context, {WREN}?", f"Checklist, {QUOKKA}."))
    index.add(make_entry("alice", "c2", "r2", "Which context is cheapest?", "Minimal is cheapest."))
    assert WREN.encode() in (tmp_path / "recall.sqlite").read_bytes()
    assert index.remove_conversation("alice", "c1") == 1
    index.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("recall.sqlite*"))
    assert WREN.encode() not in raw and QUOKKA.encode() not in raw
    assert b"cheapest" in raw
