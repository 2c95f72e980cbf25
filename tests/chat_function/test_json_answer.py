"""One JSON answer for scripts: `"stream": false` or `Accept: application/json`. The same checks in
the same order, the same commit, the verified sources, tokens and cost, each search's debug record."""
from __future__ import annotations

from groundchat_testkit.scripted import ScriptedModel, Step


def two_steps() -> ScriptedModel:
    return ScriptedModel([Step(tool_calls=[("compare_contexts", {"context": "full"})], input_tokens=120, output_tokens=30),
                          Step(text="Full context had 3.5 violations a run.", input_tokens=300, output_tokens=40)])


async def test_stream_false_answers_one_json_document_and_commits(make_env):
    env = make_env(two_steps())
    async with env.client() as c:
        r = await c.post("/api/chat", json={"message": "Which context is best?", "stream": False}, headers=env.token("alice"))
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
        answer = r.json()
        stored = await c.get(f"/api/conversations/{answer['conversation_id']}", headers=env.token("alice"))
    assert answer["message"] == "Full context had 3.5 violations a run."
    assert answer["done"] == "complete" and len(answer["run_id"]) == 32
    assert answer["tokens_used"] == {"input": 420, "output": 70}
    assert answer["cost"] == "0" and answer["cost_text"] == "$0.00"  # the test settings price nothing
    assert answer["sources"] == [] and answer["error"] is None and answer["limit"] is None
    assert [m["role"] for m in stored.json()["messages"]] == ["user", "assistant", "tool", "assistant"]


async def test_accept_json_asks_for_it_too_and_refusals_stay_typed(make_env):
    env = make_env(two_steps())
    async with env.client() as c:
        r = await c.post("/api/chat", json={"message": "Which context is best?"},
                         headers={**env.token("alice"), "accept": "application/json"})
        unsigned = await c.post("/api/chat", json={"message": "hi", "stream": False})
        unknown = await c.post("/api/chat", json={"message": "hi", "stream": False, "top_k": 3}, headers=env.token("alice"))
        sse = await c.post("/api/chat", json={"message": "hi", "stream": True}, headers=env.token("alice"))
    assert r.status_code == 200 and r.json()["done"] == "complete"
    assert unsigned.status_code == 401 and unsigned.json()["error"]["code"] == "unauthenticated"
    assert unknown.status_code == 400  # fields we do not take are still refused
    assert sse.headers["content-type"].startswith("text/event-stream")
