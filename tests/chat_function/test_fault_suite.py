"""Faults in the store, the model and the index, through the chat endpoint: every answer typed,
no secret in any frame, response or trace, and every run traced."""
from __future__ import annotations

import json

import pytest

import tests.models.provider_recordings as rec
from groundchat.models.openai_compat import OpenAICompatModel
from groundchat.models.retry import RetryPolicy
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.conftest import parse_sse

# A gateway key with no known prefix: only the configured value itself can be redacted.
PLATFORM_KEY = "pl4tf0rmK3yW1thN0Prefix0987654321"


@pytest.fixture
def configured_key(monkeypatch):
    from groundchat.config import reset_settings_cache

    monkeypatch.setenv("GROUNDCHAT_OPENAI_API_KEY", PLATFORM_KEY)
    reset_settings_cache()


def gateway(*responses) -> OpenAICompatModel:
    replay = rec.OpenAIReplay(*responses)
    return OpenAICompatModel("gpt-4.1-mini", base_url="https://gateway.example/v1/", api_key=PLATFORM_KEY,
                             transport=replay.transport, retry=RetryPolicy(attempts=1))


async def ask_and_trace(env, question="Which context level is best?"):
    async with env.client() as c:
        r = await c.post("/api/chat", json={"stream": True, "message": question}, headers=env.token("alice"))
        trace = await c.get("/api/traces/latest", headers=env.token("alice"))
    return r, parse_sse(r.text) if r.status_code == 200 else [], trace


def assert_typed_and_secret_free(r, frames, trace, *, code: str):
    assert r.status_code == 200, r.text
    assert [kind for kind, _ in frames][-2:] == ["error", "done"]
    error = frames[-2][1]
    done = frames[-1][1]
    assert error["code"] == code and {k: done[k] for k in ("reason", "run_id")} == {"reason": "error", "run_id": error["run_id"]}
    # What the failed step was charged is said too (its usage unknown: the reservation), as exact text.
    assert set(done) == {"reason", "run_id", "cost", "cost_text", "recall", "answer_seq", "input_tokens", "output_tokens"}
    assert done["cost_text"].startswith("$") and done["answer_seq"] is None  # nothing stored to rate
    # The card's reason is the trace's sanitised reason, bounded: every reader sees why it failed.
    assert error["reason"] and trace.json()["failure"]["reason"].startswith(error["reason"].rstrip("…"))
    assert trace.status_code == 200 and trace.json()["run_id"] == error["run_id"]  # every run traced
    assert trace.json()["outcome"] == "error"
    for text in (r.text, trace.text):
        assert PLATFORM_KEY not in text


async def test_the_model_answering_5xx_with_a_stack_trace_and_the_key(make_env, configured_key):
    body = json.dumps({"error": {"message": f"upstream exploded with key {PLATFORM_KEY}"},
                       "trace": 'Traceback (most recent call last):\n  File "/srv/gw/app.py", line 12, in handle\n    boom()\nRuntimeError: x'}).encode()
    env = make_env(gateway((502, body, {})))
    r, frames, trace = await ask_and_trace(env)
    assert_typed_and_secret_free(r, frames, trace, code="gateway")
    assert "/srv/gw/app.py" not in trace.text


async def test_the_models_auth_error_echoing_the_key(make_env, configured_key):
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {PLATFORM_KEY}", "code": "invalid_api_key"}}).encode()
    env = make_env(gateway((401, body, {})))
    r, frames, trace = await ask_and_trace(env)
    assert_typed_and_secret_free(r, frames, trace, code="auth")
    assert "[redacted-secret]" in trace.text


async def test_the_index_missing_is_unavailable_not_an_empty_answer(make_env, settings):
    from groundchat.tools.docs_tools import search_docs

    model = ScriptedModel([Step(tool_calls=[("search_docs", {"query": "contrast of text"})]), Step(text="I cannot look that up.")])
    env = make_env(model, tools=[search_docs], grants={"alice": ["chat.use", "docs.read", "traces.read"]})
    # The embedded index was never built in this test's home: the search must say it could not run.
    r, frames, trace = await ask_and_trace(env)
    result = next(data for kind, data in frames if kind == "tool-result")
    assert result["result"]["outcome"] == "unavailable" and result["result"]["excerpts"] == []
    assert frames[-1][1]["reason"] == "complete"
    assert trace.json()["outcome"] == "complete"
