"""Scoring the offline answerer's router on a question set: the tool, and the arguments the
question pins down (for a docs search, the source; its query words are free)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from groundchat.offline.router import Facets, route
from groundchat_cli.gold_match import matches_gold

TOOLS = {"compare_contexts", "list_runs", "get_run", "top_rules", "explain_rule", "search_docs", "show_view"}


@dataclass
class RouterCase:
    q: str
    tool: str
    args: dict[str, Any]
    split: str


def load_cases(path: Path) -> list[RouterCase]:
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [RouterCase(r["q"], r["tool"], r.get("args", {}), r.get("split", "")) for r in rows]


# A question's likeness margin (offline/topic_neighbours.py), as the offline answerer weighs it; None
# scores the word lists alone.
Topic = Callable[[str], float | None] | None
# How near the corpus comes to a question (search/service.py `nearness`), as the answerer passes it.
Nearness = Callable[[str], float | None] | None


def planned(case: RouterCase, facets: Facets, rules: set[str], topic: Topic = None,
            nearness: Nearness = None) -> tuple[str, dict[str, Any]]:
    plan = route(case.q, TOOLS, facets, rules, topic=topic, nearness=nearness)
    if plan.refusal is not None or not plan.calls:
        return "none", {}
    return plan.calls[0]


def correct(case: RouterCase, tool: str, args: dict[str, Any]) -> bool:
    if tool != case.tool:
        return False
    if tool == "search_docs":
        return args.get("source") == case.args.get("source")
    return args == case.args


def score(cases: list[RouterCase], facets: Facets, rules: set[str], topic: Topic = None,
          nearness: Nearness = None) -> dict[str, Any]:
    misses = []
    tool_right = 0
    for case in cases:
        tool, args = planned(case, facets, rules, topic, nearness)
        tool_right += tool == case.tool
        if not correct(case, tool, args):
            misses.append({"q": case.q, "expected": [case.tool, case.args], "planned": [tool, args]})
    n = len(cases) or 1
    return {"n": len(cases), "tool": round(tool_right / n, 3), "tool_and_args": round((len(cases) - len(misses)) / n, 3),
            "misses": misses}


def answered_from_the_texts(search, questions: list, facets: Facets, rules: set[str], k: int = 5,
                            topic: Topic = None) -> dict[str, Any]:
    """The offline answerer on a retrieval set, end to end: the router's plan, then the search it
    plans (with the text it chose, if it chose one). A question is found when a passage of its gold
    is in the first `k`; one the router refuses or sends to the runs' data is not. Per source, and
    how many questions reached search_docs at all."""
    found: dict[str, list[int]] = {}
    searched = 0
    for question in questions:
        args = next((a for name, a in route(question.q, TOOLS, facets, rules, topic=topic).calls
                     if name == "search_docs"), None)
        hit = False
        if args is not None:
            searched += 1
            source = args.get("source")
            result = search.search(args["query"], k=k, sources=[source] if source else None)
            hit = any(p.source == question.source and matches_gold(p.section, question.gold) for p in result.passages[:k])
        tally = found.setdefault(question.source, [0, 0])
        tally[0] += hit
        tally[1] += 1
    n = sum(t[1] for t in found.values()) or 1
    return {"n": n, "searched": round(searched / n, 3), "found@5": round(sum(t[0] for t in found.values()) / n, 3),
            "per_source": {s: round(t[0] / t[1], 3) for s, t in found.items()}}
