"""After an answer: what it cost (the `done` frame's Decimal text, equal to the run's usage rows),
and behind "Details" how its searches ran (the debug record the reader may see: legs, fusion,
timings, never an error's text), with a link to the run's trace for those who may read traces."""
from __future__ import annotations

import asyncio
import json
from decimal import Decimal

import pytest
from boto3.dynamodb.conditions import Key

from groundchat.auth.callers import CHAT_USE, DOCS_READ, RUNS_READ, TRACES_READ
from groundchat.search.debug import SearchDebug
from groundchat.search.types import Passage, SearchResult
from groundchat.store.tables import USAGE
from groundchat.tools.docs_tools import search_docs
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.conftest import parse_sse
from tests.chat_function.test_page_browser import CHROMIUM, ask, browser, served, sign_in  # noqa: F401

SECRET = "https://vpc-internal-search.eu-west-1.es.amazonaws.com/corpus"


class FakeDocs:
    """A search that finds one passage and whose rerank failed (its error names an endpoint)."""

    def search(self, query: str, k=None, sources=None) -> SearchResult:
        debug = {"backend": "embedded", "leg": "hybrid", "fusion": "scores+rrf", "rrf_k": 60, "score_share": 0.7,
                 "weights": {"bm25": 1.0, "vector": 1.0}, "rerank": "bedrock:cohere.rerank-v3-5:0", "embedding_model": "local:minilm-int8", "sources": ["wcag22"],
                 "legs": {"bm25": {"hits": 12, "top": ["bbbb2222"]}, "vector": {"hits": 30, "top": ["bbbb2222", "cccc3333"]}},
                 "timings_ms": {"embed": 3.5, "legs": 1.25, "fuse": 0.1, "rerank": 0.0, "total": 5.0},
                 "rerank_error": f"ConnectionError: {SECRET}",
                 "named_text": {"source": "wcag22", "lead": ["bbbb2222"]},
                 "fusion_method": "scores+rrf", "switches": {"include_vector": True, "include_sparse": True, "include_graph": False},
                 "legs_enabled": {"bm25": True, "vector": True}, "vector_enabled": True, "sparse_enabled": True,
                 "graph_default": False}
        passage = Passage(ref="bbbb2222", source="wcag22", section="1.4.3", title="1.4.3 Contrast (Minimum)",
                          url="https://www.w3.org/TR/WCAG22/#contrast-minimum", text="Body copy should stand out from its background by 4.5:1 or more.",
                          updated_at="2024-12-12T00:00:00Z", score=1.0)
        return SearchResult(outcome="hit", query=query, passages=[passage], debug=SearchDebug.model_validate(debug))


@pytest.fixture
def priced(monkeypatch, tmp_path):
    """The scripted model priced as a real one, and a rerank model, so a search costs Cohere Rerank
    3.5's $0.002 a query."""
    prices = tmp_path / "priced.json"
    prices.write_text(json.dumps({"scripted": {"input_per_mtok": "3.00", "output_per_mtok": "15.00"}}))
    monkeypatch.setenv("GROUNDCHAT_PRICES_FILE", str(prices))
    monkeypatch.setenv("GROUNDCHAT_RERANK", "bedrock:cohere.rerank-v3-5:0")
    from groundchat.config import reset_settings_cache

    reset_settings_cache()


def searching_model(answers: int = 1) -> ScriptedModel:
    return ScriptedModel([
        Step(tool_calls=[("search_docs", {"query": "contrast of text"})], input_tokens=1000, output_tokens=50),
        Step(text="Text needs 4.5:1 [bbbb2222].", input_tokens=1200, output_tokens=40),
    ] * answers)


GRANTS = {"alice": [CHAT_USE, DOCS_READ, TRACES_READ], "bob": [CHAT_USE, DOCS_READ, RUNS_READ]}


def _usage_total(dynamo, run_id: str) -> Decimal:
    rows = dynamo.table(USAGE).query(KeyConditionExpression=Key("run_id").eq(run_id))["Items"]
    assert {r["kind"] for r in rows} == {"model-step", "search"}
    return sum((Decimal(str(r["charged"])) for r in rows), Decimal(0))


def test_done_says_what_the_answer_cost_and_the_search_shows_its_debug_without_errors(priced, make_env, dynamo):
    env = make_env(searching_model(), grants=GRANTS, tools=[search_docs])
    env.services.docs_override = FakeDocs()

    async def go():
        async with env.client() as c:
            return await c.post("/api/chat", json={"stream": True, "message": "Why contrast?"}, headers=env.token("alice"))

    frames = parse_sse(asyncio.run(go()).text)
    done = frames[-1][1]
    # 1000 in + 50 out, then 1200 in + 40 out at $3 / $15 per million, and one search's rerank.
    expected = Decimal("0.003") + Decimal("0.00075") + Decimal("0.0036") + Decimal("0.0006") + Decimal("0.002")
    assert Decimal(done["cost"]) == expected == _usage_total(dynamo, done["run_id"])
    assert done["cost_text"] == "$0.00995"
    result = next(data for kind, data in frames if kind == "tool-result")
    debug = result["debug"]
    assert debug["legs"] == {"bm25": {"hits": 12, "top": ["bbbb2222"]}, "vector": {"hits": 30, "top": ["bbbb2222", "cccc3333"]}}
    assert (debug["fusion"], debug["rrf_k"], debug["timings_ms"]["total"], debug["rerank_failed"]) == ("scores+rrf", 60, 5.0, True)
    assert debug["score_share"] == 0.7 and debug["named_text"] == {"source": "wcag22", "lead": ["bbbb2222"]}
    assert SECRET not in json.dumps(frames) and "rerank_error" not in debug


pytestmark_browser = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")


@pytestmark_browser
def test_the_answer_shows_its_cost_and_its_details_and_a_trace_link_for_trace_readers(priced, browser, served):
    env, url = served(searching_model(answers=2), grants=GRANTS, tools=[search_docs])
    env.services.docs_override = FakeDocs()
    page = browser.new_page()
    sign_in(page, url, env, "alice")
    ask(page, "Why contrast?")
    answer = page.locator(".msg.assistant")
    assert answer.locator(".answer-cost").inner_text() == "This answer cost $0.00995"
    details = answer.locator("details.answer-details")
    assert not details.locator(".search-debug").is_visible()
    details.locator("summary").click()
    debug = details.locator(".search-debug").inner_text()
    assert "Search “contrast of text”" in debug
    assert "bm25: 12 hits (first bbbb2222); vector: 30 hits (first bbbb2222, cccc3333)" in debug
    assert "normalised scores 0.7 and reciprocal rank, k = 60, weights bm25 1, vector 1" in debug
    assert "embed 3.5 ms, legs 1.25 ms, fuse 0.1 ms, rerank 0 ms, total 5 ms" in debug
    assert "(failed: the fused order was kept)" in debug and SECRET not in page.content()
    assert "WCAG 2.2: its own first passages lead (bbbb2222)" in debug
    # alice may read traces: the link opens a readable trace of this very run.
    page.wait_for_selector(".trace-link a")
    trace_address = details.locator(".trace-link a").get_attribute("href")
    run_id = trace_address.split("run=")[1]
    with page.context.expect_page() as opened:
        details.locator(".trace-link a").click()
    trace = opened.value
    trace.wait_for_selector("#steps table")
    assert trace.inner_text("#title") == f"Trace of run {run_id}"
    steps = trace.locator("#steps tbody tr").all_inner_texts()
    assert len(steps) == 3 and steps[1].startswith("tool search_docs\tquery: contrast of text")
    assert "0.00375 USD" in steps[0] and "bm25: 12 hits" in trace.inner_text("#searches")
    # bob may not read traces: no link, and his trace page says why.
    other = browser.new_page()
    sign_in(other, url, env, "bob")
    ask(other, "Why contrast?")
    other.locator(".answer-details summary").click()
    other.wait_for_timeout(300)
    assert other.locator(".trace-link").count() == 0
    other.goto(f"{url}{trace_address}")
    other.wait_for_function("() => document.getElementById('message').textContent.length > 0")
    assert other.inner_text("#message") == "Your account may not read traces (it needs the traces.read permission)."
