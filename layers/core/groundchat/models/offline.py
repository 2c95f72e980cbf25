"""The offline answerer: a deterministic stand-in for a model on machines with none configured.

It picks tools from the question, calls them through the same loop as a real model, and writes
its answer from their results with templates. It writes no prose of its own, says on every answer
that it is the offline answerer, and costs nothing. It is not a language model.
"""
from __future__ import annotations

import json
import re
from typing import Any, AsyncIterator

from groundchat.models import offline_answers as answers
from groundchat.models.messages import Message, ModelRequest, StopEvent, TextDelta, ToolCallEvent, UsageEvent

DISCLAIMER = "(This is the offline answerer: a deterministic stand-in that calls the tools and fills templates; it is not a language model.)"

RUN_ID = re.compile(r"\brun[-_][A-Za-z0-9][A-Za-z0-9_-]{3,}\b", re.I)
RULE_TOKEN = re.compile(r"\b[a-z][a-z0-9]*(?:-[a-z0-9]+)+\b|\b[a-z]{3,}\b")
COST_WORDS = ("context", "cost", "cheap", "expensive", "price", "best", "compare", "spend")
WRONG_WORDS = ("wrong", "mistake", "most often", "common", "break", "broken", "violat", "fail", "errors")
LIST_WORDS = ("list runs", "latest runs", "recent runs", "show runs", "which runs")
DOC_WORDS = ("eaa", "accessibility act", "directive", "article", "wcag", "criterion", "require", "law", "annex", "recital")


def _known_rules() -> set[str]:
    try:
        from groundchat.benchmark.axe_rules import rule_ids
    except ImportError:  # the facts table is not in this build
        return set()
    return set(rule_ids())


class OfflineAnswerer:
    model_id = "offline"
    price_id = "offline"

    def __init__(self, settings: Any = None) -> None:
        self._rules = _known_rules()

    def plan(self, question: str, offered: set[str]) -> list[tuple[str, dict[str, Any]]]:
        """Which tools to call for a question, in order (only tools this caller is offered)."""
        q = question.lower()
        calls: list[tuple[str, dict[str, Any]]] = []
        for run_id in RUN_ID.findall(question):
            calls.append(("get_run", {"run_id": run_id}))
        for token in dict.fromkeys(RULE_TOKEN.findall(q)):
            # One-word rule ids ("list", "region", "label") are everyday words too: they count as
            # rules only when the question speaks of a rule or quotes the id.
            plain_word = "-" not in token
            if token in self._rules and (not plain_word or "rule" in q or f"`{token}`" in q or f"'{token}'" in q or f'"{token}"' in q):
                calls.append(("explain_rule", {"rule_id": token}))
        if not calls:
            if any(w in q for w in LIST_WORDS):
                calls.append(("list_runs", {"limit": 10}))
            elif any(w in q for w in WRONG_WORDS) and not any(w in q for w in DOC_WORDS):
                calls.append(("top_rules", {"limit": 10}))
            elif any(w in q for w in COST_WORDS) and not any(w in q for w in DOC_WORDS):
                calls.append(("compare_contexts", {}))
        calls = [(name, args) for name, args in calls if name in offered]
        if (not calls or any(w in q for w in DOC_WORDS)) and "search_docs" in offered:
            calls.append(("search_docs", {"query": question[:500]}))
        return calls[:4]

    async def __call__(self, request: ModelRequest) -> AsyncIterator[Any]:
        offered = {t.name for t in request.tools}
        last_user = max(i for i, m in enumerate(request.messages) if m.role == "user")
        turn = request.messages[last_user:]
        question = turn[0].content
        called = [c.name for m in turn if m.role == "assistant" for c in m.tool_calls]
        if not called:
            plan = self.plan(question, offered)
            if plan:
                for j, (name, args) in enumerate(plan):
                    yield ToolCallEvent(id=f"offline_{last_user}_{j}", name=name, args=args)
                yield UsageEvent(input_tokens=0, output_tokens=0)
                yield StopEvent(reason="tool_use")
                return
        results = _tool_results(turn)
        # Step 2, where the caller may be shown views: one view of the figures, tried once; a
        # refused view changes nothing, the text answer follows either way.
        view = answers.compose_view(results) if "show_view" in offered and "show_view" not in called else None
        if view is not None:
            yield ToolCallEvent(id=f"offline_{last_user}_view", name="show_view", args=view)
            yield UsageEvent(input_tokens=0, output_tokens=0)
            yield StopEvent(reason="tool_use")
            return
        text = answers.compose(question, results) + "\n\n" + DISCLAIMER
        yield TextDelta(text=text)
        yield UsageEvent(input_tokens=0, output_tokens=0)
        yield StopEvent(reason="end_turn")


def _tool_results(turn: list[Message]) -> list[tuple[str, Any, bool]]:
    out = []
    for m in turn:
        if m.role != "tool":
            continue
        try:
            value = json.loads(m.content)
        except (json.JSONDecodeError, TypeError):
            value = m.content
        out.append((m.name or "", value, m.is_error))
    return out
