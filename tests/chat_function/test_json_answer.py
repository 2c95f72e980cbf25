"""One JSON answer for scripts: `"stream": false` or `Accept: application/json`. The same checks in
the same order, the same commit, the verified sources, tokens and cost, each search's debug record."""
from __future__ import annotations

import pytest

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
        unknown = await c.post("/api/chat", json={"message": "hi", "stream": False, "temperature": 0.3}, headers=env.token("alice"))
        sse = await c.post("/api/chat", json={"message": "hi", "stream": True}, headers=env.token("alice"))
    assert r.status_code == 200 and r.json()["done"] == "complete"
    assert unsigned.status_code == 401 and unsigned.json()["error"]["code"] == "unauthenticated"
    assert unknown.status_code == 400  # fields we do not take are still refused
    assert sse.headers["content-type"].startswith("text/event-stream")


# ---- what a request may ask of its searches: sources, top_k, include_* (they only narrow) --------

def searching(*calls: dict) -> ScriptedModel:
    return ScriptedModel([Step(tool_calls=[("search_docs", args) for args in calls]), Step(text="Done.")])


def search_env(make_env, real_search, model):
    from groundchat.tools.docs_tools import search_docs
    from groundchat.auth.callers import CHAT_USE, DOCS_READ

    env = make_env(model, grants={"alice": [CHAT_USE, DOCS_READ]}, tools=[search_docs])
    env.services.docs_override = real_search
    return env


async def ask_json(env, **body):
    async with env.client() as c:
        return await c.post("/api/chat", json={"message": "What must an online shop do?", "stream": False, **body},
                            headers=env.token("alice"))


async def test_sources_and_top_k_narrow_every_search_and_the_debug_record_says_so(make_env, real_search):
    env = search_env(make_env, real_search, searching({"query": "obligations of service providers"}))
    r = await ask_json(env, sources=["eaa"], top_k=2)
    assert r.status_code == 200, r.text
    (debug,) = r.json()["debug"]["searches"]
    assert debug["sources"] == ["eaa"] and debug["request"] == {"sources": ["eaa"], "top_k": 2}
    result = env.model.requests[1].messages[-1].content
    import json as _json

    excerpts = _json.loads(result)["excerpts"]
    assert 1 <= len(excerpts) <= 2 and {e["source"] for e in excerpts} == {"eaa"}


async def test_a_source_the_request_left_out_is_refused_to_the_model_and_costs_nothing(make_env, real_search):
    from groundchat.store.tables import USAGE
    from groundchat.store.usage import rows_for_run_sync

    env = search_env(make_env, real_search, searching({"query": "contrast of text", "source": "wcag22"}))
    r = await ask_json(env, sources=["eaa"])
    assert r.status_code == 200 and r.json()["done"] == "complete"
    tool_turn = env.model.requests[1].messages[-1]
    assert tool_turn.is_error and "only eaa, not wcag22" in tool_turn.content
    rows = rows_for_run_sync(env.services.dynamo.client, env.services.dynamo.name(USAGE), r.json()["run_id"])
    assert [row.get("kind") for row in rows] == ["model-step", "model-step"]  # and no search was charged


async def test_a_leg_switched_off_does_not_run(make_env, real_search):
    env = search_env(make_env, real_search, searching({"query": "focus visible keyboard"}))
    r = await ask_json(env, include_vector=False)
    (debug,) = r.json()["debug"]["searches"]
    assert "vector" not in debug["legs_ran"] and "bm25" in debug["legs_ran"]
    assert debug["switches"]["include_vector"] is False and debug["request"] == {"include_vector": False}


async def test_asking_beyond_the_ceilings_is_a_400_that_says_which(make_env):
    env = make_env(two_steps())
    for body, says in (({"top_k": 99}, "top_k: at most 8"), ({"top_k": 0}, "top_k"),
                       ({"sources": ["eaa", "gdpr"]}, "sources"), ({"sources": []}, "sources"),
                       ({"include_vector": False, "include_sparse": False}, "needs one of them")):
        r = await ask_json(env, **body)
        assert r.status_code == 400, (body, r.text)
        assert says in r.json()["error"]["message"], (body, r.json())
    assert env.model.calls == 0


@pytest.mark.parametrize("field, value, says", [
    ("top_k", True, "top_k: Input should be a valid integer"),
    ("top_k", "3", "top_k: Input should be a valid integer"),
    ("top_k", 2.5, "top_k: Input should be a valid integer, got a number with a fractional part"),
    ("stream", "false", "stream: Input should be a valid boolean"),
    ("stream", 0, "stream: Input should be a valid boolean"),
    ("include_graph", "no", "include_graph: Input should be a valid boolean"),
], ids=["top_k-true", "top_k-text", "top_k-fraction", "stream-text", "stream-zero", "switch-text"])
async def test_a_count_or_switch_of_another_type_is_a_400_not_a_guess(make_env, field, value, says):
    """Strict: `true` is not 1 and "false" is not false (it would have streamed)."""
    env = make_env(two_steps())
    async with env.client() as c:
        r = await c.post("/api/chat", json={"message": "What must an online shop do?", field: value},
                         headers={**env.token("alice"), "accept": "application/json"})
    assert r.status_code == 400, r.text
    assert r.headers["content-type"].startswith("application/json")
    assert r.json()["error"] == {"code": "bad-request", "message": says}
    assert env.model.calls == 0


async def test_a_search_without_the_request_fields_is_charged_as_before(make_env, real_search):
    """The control for the test above: the same call, no `sources`, runs and is charged."""
    from groundchat.store.tables import USAGE
    from groundchat.store.usage import rows_for_run_sync

    env = search_env(make_env, real_search, searching({"query": "contrast of text", "source": "wcag22"}))
    r = await ask_json(env)
    assert not env.model.requests[1].messages[-1].is_error
    rows = rows_for_run_sync(env.services.dynamo.client, env.services.dynamo.name(USAGE), r.json()["run_id"])
    assert sorted(row.get("kind") for row in rows) == ["model-step", "model-step", "search"]


async def test_a_corpus_id_names_the_sources_every_search_runs_over(make_env, real_search):
    env = search_env(make_env, real_search, searching({"query": "obligations of service providers"}))
    r = await ask_json(env, corpus_id="eaa")
    assert r.status_code == 200, r.text
    (debug,) = r.json()["debug"]["searches"]
    assert debug["sources"] == ["eaa"] and debug["request"] == {"sources": ["eaa"]}
