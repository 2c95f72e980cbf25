"""Seed 002's contract for POST /api/chat: a request that does not ask for a stream gets one JSON
ChatResponse; `corpus_id` is honoured or refused naming the corpora; `web_enabled: true` is
refused in words that say there is no web search; a failed generation is not a 200; the recall
decision is always in `debug.recall_plan`; `GET /traces/latest` as the seed names it; and the
seed's three example requests (Python, curl piped to jq, a browser's fetch) run as written."""
from __future__ import annotations

import json
import shutil
import subprocess

import httpx
import pytest

from groundchat.chat.question_body import CORPUS_IDS, ChatBody
from groundchat.models.failures import HINTS, ModelFailure
from groundchat_testkit.scripted import ScriptedModel, Step
from groundchat_cli.serving import Servers
from tests.chat_function.conftest import ASKS_FOR_THE_STREAM, parse_sse

QUESTION = "Which context level is best?"


def answering() -> ScriptedModel:
    return ScriptedModel([Step(text="Full context had 3.5 violations a run.", input_tokens=50, output_tokens=9)], repeat_last=True)


async def test_a_question_that_asks_for_no_stream_gets_one_json_answer_with_the_recall_plan(make_env):
    env = make_env(answering())
    async with env.client() as c:
        plain = await c.post("/api/chat", json={"message": QUESTION}, headers=env.token("alice"))
        streamed = await c.post("/api/chat", json={"message": QUESTION}, headers={**env.token("alice"), **ASKS_FOR_THE_STREAM})
        asked_false = await c.post("/api/chat", json={"message": QUESTION, "stream": False},
                                   headers={**env.token("alice"), **ASKS_FOR_THE_STREAM})
    assert plain.status_code == 200 and plain.headers["content-type"] == "application/json"
    answer = plain.json()
    assert answer["message"] == "Full context had 3.5 violations a run." and answer["tokens_used"] == {"input": 50, "output": 9}
    # No tool ran, so no search; the decision about past conversations is there all the same.
    assert answer["debug"]["searches"] == []
    assert set(answer["debug"]["recall_plan"]) == {"search", "reason"} and answer["debug"]["recall_plan"]["reason"]
    assert streamed.headers["content-type"].startswith("text/event-stream")
    assert parse_sse(streamed.text)[-1][1]["reason"] == "complete"
    assert asked_false.headers["content-type"] == "application/json"  # the body's own word wins


@pytest.mark.parametrize("corpus_id", CORPUS_IDS)
async def test_every_corpus_id_is_accepted(make_env, corpus_id):
    env = make_env(answering())
    async with env.client() as c:
        r = await c.post("/api/chat", json={"corpus_id": corpus_id, "message": QUESTION}, headers=env.token("alice"))
    assert r.status_code == 200, r.text
    assert r.json()["done"] == "complete"


def test_a_corpus_id_narrows_the_searches_to_its_source_and_all_narrows_nothing():
    assert ChatBody(message="q", corpus_id="eaa").search_preferences().sources == ("eaa",)
    assert ChatBody(message="q", corpus_id="all").search_preferences().sources is None
    assert ChatBody(message="q", corpus_id="all", sources=["wcag22"]).search_preferences().sources == ("wcag22",)


async def test_an_unknown_corpus_or_a_web_search_is_a_400_that_says_why(make_env):
    env = make_env(answering())
    async with env.client() as c:
        unknown = await c.post("/api/chat", json={"corpus_id": "gdpr", "message": QUESTION}, headers=env.token("alice"))
        clash = await c.post("/api/chat", json={"corpus_id": "eaa", "sources": ["wcag22"], "message": QUESTION},
                             headers=env.token("alice"))
        web = await c.post("/api/chat", json={"web_enabled": True, "message": QUESTION}, headers=env.token("alice"))
        no_web = await c.post("/api/chat", json={"web_enabled": False, "message": QUESTION}, headers=env.token("alice"))
        other = await c.post("/api/chat", json={"temperature": 0.2, "message": QUESTION}, headers=env.token("alice"))
    assert unknown.status_code == 400
    assert unknown.json()["error"]["message"] == "corpus_id: no corpus 'gdpr' here; the corpora are all, wcag22, eaa, docs"
    assert unknown.json()["error"]["corpus_ids"] == ["all", "wcag22", "eaa", "docs"]
    assert clash.status_code == 400 and "corpus 'eaa' holds only the source eaa" in clash.json()["error"]["message"]
    assert web.status_code == 400 and "there is no web search here" in web.json()["error"]["message"]
    assert no_web.status_code == 200 and no_web.json()["done"] == "complete"
    # The refusal of a field we do not take names every field we do take, not two of them.
    said = other.json()["error"]["message"]
    assert other.status_code == 400 and said.startswith("temperature: not allowed")
    assert all(name in said for name in ("corpus_id", "web_enabled", "stream", "sources", "top_k"))
    assert env.model.calls == 1  # only the question with web_enabled false was answered


@pytest.mark.parametrize(("failure", "status"), [
    (ModelFailure("gateway", "HTTP 500: upstream exploded", status=500), 502),
    (ModelFailure("auth", "HTTP 401: invalid key", status=401), 502),
    (ModelFailure("spend_limit", "HTTP 402: quota exceeded", status=402), 503),
    (RuntimeError("boom"), 500),
])
async def test_a_failed_generation_over_json_has_the_failures_status_and_typed_detail(make_env, failure, status):
    env = make_env(ScriptedModel([Step(raise_error=failure)]))
    async with env.client() as c:
        r = await c.post("/api/chat", json={"message": QUESTION}, headers=env.token("alice"))
        streamed = await c.post("/api/chat", json={"message": QUESTION, "stream": True}, headers=env.token("alice"))
    assert r.status_code == status, r.text
    error = r.json()["error"]
    kind = failure.cls if isinstance(failure, ModelFailure) else "internal"
    assert error["failure_kind"] == kind and error["operator_hint"] == HINTS[kind] and error["status"] == status
    assert error["gateway_reason"] == (failure.reader_reason if isinstance(failure, ModelFailure) else "RuntimeError")
    assert r.json()["done"] == "error" and r.json()["debug"]["recall_plan"] is not None
    assert streamed.status_code == 200  # a stream has begun before it fails: its `error` frame says so instead


async def test_the_latest_trace_as_the_seed_names_it(make_env):
    env = make_env(answering())
    async with env.client() as c:
        nothing = await c.get("/traces/latest", headers=env.token("alice"))
        answer = (await c.post("/api/chat", json={"message": QUESTION}, headers=env.token("alice"))).json()
        latest = await c.get("/traces/latest", headers=env.token("alice"))
        under_api = await c.get("/api/traces/latest", headers=env.token("alice"))
        anonymous = await c.get("/traces/latest")
    assert nothing.status_code == 404
    assert latest.status_code == 200 and latest.json()["run_id"] == answer["run_id"] == under_api.json()["run_id"]
    assert anonymous.status_code == 401


# ---- the seed's three example requests, as written, against a served app -----------------------

@pytest.fixture
def served_app(make_env):
    servers = Servers()
    env = make_env(answering())
    yield env, servers.serve(env.app)
    servers.stop_all()


def test_the_python_example_runs_as_written(served_app):
    env, base = served_app
    token = env.token("alice")["authorization"].removeprefix("Bearer ")
    response = httpx.post(f"{base}/api/chat", json={"corpus_id": "all", "message": QUESTION},
                          headers={"Authorization": f"Bearer {token}"}, timeout=30)
    data = response.json()
    assert data["message"] == "Full context had 3.5 violations a run."
    assert data["conversation_id"] and data["tokens_used"]["output"] == 9 and "recall_plan" in data["debug"]


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq")), reason="curl and jq are not installed")
def test_the_curl_example_piped_to_jq_runs_as_written(served_app):
    env, base = served_app
    token = env.token("alice")["authorization"].removeprefix("Bearer ")
    script = f"""curl -s -X POST {base}/api/chat \\
  -H "Authorization: Bearer $TOKEN" \\
  -H "Content-Type: application/json" \\
  -d '{{"corpus_id": "wcag22", "message": "{QUESTION}"}}' | jq .
"""
    done = subprocess.run(["bash", "-o", "pipefail", "-c", script], env={"TOKEN": token, "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["message"] == "Full context had 3.5 violations a run."


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")
def test_the_browser_fetch_example_runs_as_written(served_app):
    from playwright.sync_api import sync_playwright

    from tests.chat_function.test_page_browser import CHROMIUM_ARGS

    env, base = served_app
    token = env.token("alice")["authorization"].removeprefix("Bearer ")
    example = """async ([token, question]) => {
      const response = await fetch("/api/chat", {
        method: "POST",
        headers: { "Content-Type": "application/json", "Authorization": `Bearer ${token}` },
        body: JSON.stringify({ corpus_id: "eaa", message: question, web_enabled: false }),
      });
      const data = await response.json();
      return { status: response.status, data };
    }"""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{base}/chat")
            got = page.evaluate(example, [token, QUESTION])
        finally:
            browser.close()
    assert got["status"] == 200 and got["data"]["message"] == "Full context had 3.5 violations a run."
    assert got["data"]["debug"]["recall_plan"]["search"] in (True, False)
