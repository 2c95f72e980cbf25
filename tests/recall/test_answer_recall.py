"""Recall through the chat: committed exchanges become the owner's searchable past, a failed one
never does, a hit is cited and verified like an excerpt, and deleting the conversation removes it."""
from __future__ import annotations

import pytest

from groundchat.auth.callers import CHAT_USE, RECALL_READ, RUNS_READ
from groundchat.recall.embedded import EmbeddedRecallIndex
from groundchat.recall.entries import make_entry
from groundchat.tools.recall_tool import search_my_conversations
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.conftest import TEST_TOOLS, make_env, parse_sse  # noqa: F401 (make_env: a fixture)
from tests.corpus_support import WordHashEmbedder

GRANTS = {user: [CHAT_USE, RUNS_READ, RECALL_READ] for user in ("alice", "bob")}


@pytest.fixture
def env(make_env, tmp_path):
    env = make_env(ScriptedModel([]), grants=GRANTS, tools=[*TEST_TOOLS, search_my_conversations])
    env.services.recall_override = EmbeddedRecallIndex(tmp_path / "recall.sqlite", WordHashEmbedder)
    return env


async def ask(c, env, user, message, *steps, conversation_id=None):
    env.model.steps.extend(steps)
    body = {"stream": True, "message": message, **({"conversation_id": conversation_id} if conversation_id else {})}
    r = await c.post("/api/chat", json=body, headers=env.token(user))
    assert r.status_code == 200, r.text
    return parse_sse(r.text)


async def test_recall_end_to_end(env):
    index = env.services.recall
    async with env.client() as c:
        first = await ask(c, env, "alice", "Which context is best for contrast?", Step(text="Checklist is best for contrast."))
        cid, run_id = first[0][1]["conversation_id"], first[0][1]["run_id"]
        assert first[-1][1]["reason"] == "complete"
        # No cue in the question: the recall tool was not offered (the corpus tools were).
        assert [t.name for t in env.model.requests[-1].tools] == ["compare_contexts"]
        await ask(c, env, "bob", "Which context is best for contrast?", Step(text="Bob heard guidelines."))
        failed = await ask(c, env, "alice", "A secret question about contrast", Step(text="half", raise_error=RuntimeError("x")))
        assert failed[-1][1]["reason"] == "error"

        ref = make_entry("alice", cid, run_id, "", "").ref
        frames = await ask(c, env, "alice", "What did I ask before about contrast?",
                           Step(tool_calls=[("search_my_conversations", {"query": "contrast"})]),
                           Step(text=f"You asked which context is best; the answer was checklist [{ref}]."))
        assert "search_my_conversations" in [t.name for t in env.model.requests[-1].tools]
        result = next(data for event, data in frames if event == "tool-result")
        hits = result["result"]["excerpts"]
        # Only alice's committed exchange: not bob's, not the failed one.
        assert [h["section"] for h in hits] == [cid] and hits[0]["ref"] == ref
        assert hits[0]["url"] == f"/chat?conversation={cid}"
        assert result["debug"]["recall_plan"]["search"] is True and "explicit" in result["debug"]["recall_plan"]["signals"]
        citations = next(data for event, data in frames if event == "citations")
        assert citations["verified"] == 1 and citations["sources"][0]["url"] == f"/chat?conversation={cid}"

        questions = [h.entry.question for h in index.search("alice", "secret question contrast", 20)]
        assert "A secret question about contrast" not in questions
        assert [h.entry.owner for h in index.search("bob", "contrast", 20)] == ["bob"]

        r = await c.delete(f"/api/conversations/{cid}", headers=env.token("alice"))
        assert r.status_code == 200 and r.json()["deleted"]["recall_entries"] == 1
    assert all(h.entry.conversation_id != cid for h in index.search("alice", "contrast", 20))


async def test_a_caller_without_recall_read_is_never_indexed(env):
    env.services.users.table.put_item(Item={"user_id": "carol", "grants": {CHAT_USE, RUNS_READ}})
    async with env.client() as c:
        await ask(c, env, "carol", "What did I ask before about contrast?", Step(text="Nothing to look at."))
    assert env.services.recall.search("carol", "contrast", 10) == []
    assert [t.name for t in env.model.requests[-1].tools] == ["compare_contexts"]


async def test_an_expired_conversation_is_never_recalled_though_its_entry_is_still_indexed(env):
    """TTL removes an expired conversation from the tables, not from the recall index: the tool
    checks each hit's conversation and shows none that has expired."""
    async with env.client() as c:
        first = await ask(c, env, "alice", "Which context is best for contrast?", Step(text="Checklist is best for contrast."))
        cid = first[0][1]["conversation_id"]
        table = env.services.conversations.conversations
        table.update_item(Key={"conversation_id": cid}, UpdateExpression="SET expires_at = :past",
                          ExpressionAttributeValues={":past": 1})
        assert [h.entry.conversation_id for h in env.services.recall.search("alice", "contrast", 20)] == [cid]
        frames = await ask(c, env, "alice", "What did I ask before about contrast?",
                           Step(tool_calls=[("search_my_conversations", {"query": "contrast"})]),
                           Step(text="You have no earlier questions about contrast."))
        result = next(data for event, data in frames if event == "tool-result")
        assert result["result"] == {"outcome": "empty", "excerpts": []}
