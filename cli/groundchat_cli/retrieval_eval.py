"""Retrieval quality on a question set: hit@1, hit@5 and MRR, overall and per source.

A question may also name the one paragraph that answers it (`gold_paragraph`, e.g. "Article 4(5)"):
article-level gold counts a question about the micro-enterprise exemption as found when another
paragraph of Article 4 comes back. Those questions get both figures side by side: article level
(`gold`, any paragraph of the article) and paragraph level (that passage itself).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Sequence

from groundchat_cli.gold_match import matches_gold


class Found(Protocol):
    source: str
    section: str


class Result(Protocol):
    @property
    def passages(self) -> Sequence[Found]: ...


class Searches(Protocol):
    """The in-process search service, or a running app's search (groundchat_cli/mcp_search.py)."""

    def search(self, query: str, *, k: int | None = ..., leg: Any = ..., include_vector: bool = ...,
               include_sparse: bool = ..., include_graph: bool | None = ...) -> Result: ...


@dataclass
class Question:
    q: str
    source: str
    gold: list[str]
    gold_paragraph: list[str] = field(default_factory=list)


def load_questions(path: Path) -> list[Question]:
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            paragraphs = row.get("gold_paragraph") or []
            if not isinstance(paragraphs, list) or not all(isinstance(p, str) and p for p in paragraphs):
                raise ValueError(f"gold_paragraph must be a list of sections such as \"Article 4(5)\": {row['q']!r}")
            out.append(Question(q=row["q"], source=row["source"], gold=list(row["gold"]), gold_paragraph=list(paragraphs)))
    return out


def figures(ranks: list[int]) -> dict[str, float]:
    """hit@1, hit@5 and MRR of ranks (0: not found in the first k)."""
    n = len(ranks) or 1
    return {
        "n": len(ranks),
        "hit@1": round(sum(1 for r in ranks if r == 1) / n, 3),
        "hit@5": round(sum(1 for r in ranks if 0 < r <= 5) / n, 3),
        "mrr": round(sum(1 / r for r in ranks if r) / n, 3),
    }


def paragraph_rank(ranked: list[str | None], paragraphs: list[str]) -> int:
    """The rank of the first passage that is one of the gold paragraphs itself (0: none)."""
    return next((i + 1 for i, s in enumerate(ranked) if s is not None and s in paragraphs), 0)


def evaluate(service: Searches, questions: list[Question], *, leg: str = "hybrid", k: int = 5,
             include_vector: bool = True, include_sparse: bool = True, include_graph: bool = True) -> dict[str, Any]:
    """The search is not told the source: a question must find its passage among all three."""
    per: dict[str, list[int]] = {}
    article_level: dict[str, list[int]] = {}
    paragraph_level: dict[str, list[int]] = {}
    rows = []
    for question in questions:
        result = service.search(question.q, k=k, leg=leg, include_vector=include_vector,
                                include_sparse=include_sparse, include_graph=include_graph)
        sections = [p.section for p in result.passages if p.source == question.source]
        ranked = [p.section if p.source == question.source else None for p in result.passages]
        rank = next((i + 1 for i, s in enumerate(ranked) if s is not None and matches_gold(s, question.gold)), None)
        row = {"q": question.q, "source": question.source, "gold": question.gold, "rank": rank,
               "top": sections[:3], "first": [f"{p.source} {p.section}" for p in result.passages[:3]]}
        if question.gold_paragraph:
            row["gold_paragraph"] = question.gold_paragraph
            row["paragraph_rank"] = paragraph_rank(ranked, question.gold_paragraph) or None
            article_level.setdefault(question.source, []).append(rank or 0)
            paragraph_level.setdefault(question.source, []).append(row["paragraph_rank"] or 0)
        rows.append(row)
        per.setdefault(question.source, []).append(rank or 0)
    all_ranks = [r for ranks in per.values() for r in ranks]
    report: dict[str, Any] = {
        "leg": leg, "graph": include_graph, "overall": figures(all_ranks),
        "per_source": {s: figures(r) for s, r in sorted(per.items())},
        "misses": [r for r in rows if not r["rank"]],
    }
    if paragraph_level:
        # The same questions counted both ways, so the two figures compare.
        report["paragraph"] = {s: {"article": figures(article_level[s]), "paragraph": figures(paragraph_level[s])}
                               for s in sorted(paragraph_level)}
    return report
