"""What is stored with an answer for its cost line and "Details": the done frame's figure, the
reader's view of each search, and a bound on the size, with what was left out counted."""
from __future__ import annotations

import json
from decimal import Decimal

from groundchat.chat.answer_record import MAX_DETAILS_CHARS, MAX_SEARCHES, answer_record
from groundchat.chat.answer_run import Exchange, answer_cost
from groundchat.chat.steps import ModelStep, ToolStep


def search_step(n: int, debug: dict | None = None, outcome: str = "ok") -> ToolStep:
    debug = debug if debug is not None else {
        "backend": "embedded", "fusion": "rrf", "rrf_k": 60, "legs": {"bm25": {"hits": n, "top": ["aaaa1111"]}},
        "timings_ms": {"total": 1.5}, "error": "ConnectionError: https://internal.example/endpoint"}
    return ToolStep(id=f"t{n}", name="search_docs", args={"query": f"query {n}", "sources": ["wcag22"]}, outcome=outcome,
                    latency_ms=1.0, debug=debug)


def exchange(*steps) -> Exchange:
    ex = Exchange(conversation_id="c", run_id="r", question="q", done_reason="complete")
    ex.steps.extend(steps)
    return ex


def test_the_cost_is_the_done_frames_figure_and_a_search_keeps_what_details_shows():
    model = ModelStep(step=0, model="m", input_tokens=10, output_tokens=5, cost="0.00375", stop="end", latency_ms=3.0)
    ex = exchange(model, search_step(1), search_step(2, outcome="error"), ToolStep(
        id="t3", name="compare_contexts", args={}, outcome="ok", latency_ms=1.0))  # no debug: not a search
    ex.answer.search_charges.append(Decimal("0.0003"))
    record = answer_record(ex)
    assert record["cost"] == "0.00405" and Decimal(record["cost"]) == answer_cost(ex)
    # The reader's view: the error's text never (only that it failed), the query and no other argument.
    assert record["details"] == {"reason": "complete", "searches": [{"query": "query 1", "debug": {
        "backend": "embedded", "fusion": "rrf", "rrf_k": 60, "legs": {"bm25": {"hits": 1, "top": ["aaaa1111"]}},
        "timings_ms": {"total": 1.5}, "failed": True}}]}


def test_details_are_bounded_and_say_how_many_searches_were_left_out():
    many = exchange(*(search_step(n) for n in range(40)))
    details = answer_record(many)["details"]
    assert len(details["searches"]) == MAX_SEARCHES and details["searches_omitted"] == 40 - MAX_SEARCHES
    assert [s["query"] for s in details["searches"]] == [f"query {n}" for n in range(MAX_SEARCHES)]  # the first ones
    # Big debug records: cut by size, well under DynamoDB's 400 KB item limit.
    huge = {"backend": "embedded", "expanded": "x" * 5000, "legs": {"bm25": {"hits": 1, "top": ["a" * 8] * 200}}}
    big = answer_record(exchange(*(search_step(n, dict(huge)) for n in range(10))))["details"]
    assert len(json.dumps(big, separators=(",", ":"))) <= MAX_DETAILS_CHARS
    assert big["searches_omitted"] == 10 - len(big["searches"]) > 0 and len(big["searches"]) >= 1
    assert "searches_omitted" not in answer_record(exchange(search_step(1)))["details"]
