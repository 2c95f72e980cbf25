"""Retrieval quality on a question set: hit@1, hit@5 and MRR, overall and per source."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundchat.search.service import SearchService
from groundchat_testkit.gold_match import matches_gold


@dataclass
class Question:
    q: str
    source: str
    gold: list[str]


def load_questions(path: Path) -> list[Question]:
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out.append(Question(q=row["q"], source=row["source"], gold=list(row["gold"])))
    return out


def evaluate(service: SearchService, questions: list[Question], *, leg: str = "hybrid", k: int = 5) -> dict[str, Any]:
    """The search is not told the source: a question must find its passage among all three."""
    per: dict[str, list[float]] = {}
    rows = []
    for question in questions:
        result = service.search(question.q, k=k, leg=leg)  # type: ignore[arg-type]
        sections = [p.section for p in result.passages if p.source == question.source]
        ranked = [p.section if p.source == question.source else None for p in result.passages]
        rank = next((i + 1 for i, s in enumerate(ranked) if s is not None and matches_gold(s, question.gold)), None)
        rows.append({"q": question.q, "source": question.source, "gold": question.gold, "rank": rank,
                     "top": sections[:3], "first": [f"{p.source} {p.section}" for p in result.passages[:3]]})
        per.setdefault(question.source, []).append(rank or 0)
    def figures(ranks: list[float]) -> dict[str, float]:
        n = len(ranks) or 1
        return {
            "n": len(ranks),
            "hit@1": round(sum(1 for r in ranks if r == 1) / n, 3),
            "hit@5": round(sum(1 for r in ranks if 0 < r <= 5) / n, 3),
            "mrr": round(sum(1 / r for r in ranks if r) / n, 3),
        }
    all_ranks = [r for ranks in per.values() for r in ranks]
    return {"leg": leg, "overall": figures(all_ranks), "per_source": {s: figures(r) for s, r in sorted(per.items())},
            "misses": [r for r in rows if not r["rank"]]}
