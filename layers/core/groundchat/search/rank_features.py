"""What the learned ranking step (search/learned_rank.py) knows about each candidate.

Every candidate the fusion keeps already carries evidence: where each leg put it and how it scored
against that leg's first, the kind of passage it is (an Article's paragraph, a whole article, a
definition, an annex point, a recital; a success criterion, its Understanding, a term), its level,
whether the graph leg placed it, how near the question bank's questions for its part are, and how
many of the other candidates come from the same article. One row of numbers per candidate, in
`FEATURES` order; the trainer (cli/groundchat_cli/ranker_train.py) and the search compute them here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from groundchat.corpus.chunk import whole_section
from groundchat.search.question_leg import parts_of
from groundchat.search.types import LegHit

LEGS = ("bm25", "vector", "questions", "criterion")
# A leg that did not return a candidate ranks here: past every leg's last (CANDIDATES_PER_LEG is 30).
ABSENT = 60.0
_PARAGRAPH = re.compile(r"^Article \d+\(\d+\)$")
_KINDS = ("eaa_paragraph", "eaa_article", "eaa_definition", "eaa_annex", "eaa_recital",
          "wcag_criterion", "wcag_understanding", "wcag_term", "wcag_other", "docs")
_LEVELS = {"A": 1.0, "AA": 2.0, "AAA": 3.0}

FEATURES: tuple[str, ...] = (
    "fused_rank", "fused_rel",
    *(f"{leg}_{what}" for leg in LEGS for what in ("rank", "rel")),
    "vector_score", "legs_found", "graph_placed",
    *(f"kind_{k}" for k in _KINDS),
    "level", "bank_part", "bank_own", "bank_words", "same_article", "named_source", "query_words",
)


@dataclass
class Evidence:
    """What the search knew when it fused: its legs, the bank's part scores and words, what the
    graph leg placed and the text the question names (None when it names none)."""
    legs: Mapping[str, Sequence[LegHit]]
    parts: Mapping[str, float] = field(default_factory=dict[str, float])
    words: Mapping[str, float] = field(default_factory=dict[str, float])
    graph_placed: frozenset[str] = frozenset()
    named_source: str | None = None


def kind_of(hit: LegHit) -> str:
    chunk = hit.chunk
    if chunk.source == "eaa":
        section = chunk.section
        if section.startswith("Article 3(") or "term" in chunk.meta:
            return "eaa_definition"
        if _PARAGRAPH.match(section):
            return "eaa_paragraph"
        if section.startswith("Article "):
            return "eaa_article"
        return "eaa_annex" if section.startswith("Annex ") else "eaa_recital"
    if chunk.source == "wcag22":
        kind = chunk.meta.get("kind", "")
        return {"success-criterion": "wcag_criterion", "understanding": "wcag_understanding",
                "term": "wcag_term"}.get(kind, "wcag_other")
    return "docs"


def feature_rows(query: str, candidates: Sequence[LegHit], evidence: Evidence) -> list[list[float]]:
    """One row per candidate, in `FEATURES` order."""
    if not candidates:
        return []
    ranks = {leg: {h.chunk.id: (i + 1, h.score) for i, h in enumerate(evidence.legs.get(leg, ()))} for leg in LEGS}
    tops = {leg: max((h.score for h in evidence.legs.get(leg, ())), default=0.0) for leg in LEGS}
    fused_top = max(candidates[0].score, 1e-9)
    articles: dict[str, int] = {}
    for hit in candidates:
        key = f"{hit.chunk.source}:{whole_section(hit.chunk.section)}"
        articles[key] = articles.get(key, 0) + 1
    words_best = max(evidence.words.values(), default=0.0) or 1.0
    query_words = float(len(query.split()))
    rows: list[list[float]] = []
    for position, hit in enumerate(candidates):
        chunk = hit.chunk
        row = [float(position + 1), hit.score / fused_top]
        found = 0
        for leg in LEGS:
            rank, score = ranks[leg].get(chunk.id, (0, 0.0))
            found += rank > 0
            row += [float(rank) if rank else ABSENT, score / tops[leg] if rank and tops[leg] > 0 else 0.0]
        row += [ranks["vector"].get(chunk.id, (0, 0.0))[1], float(found), float(chunk.ref in evidence.graph_placed)]
        kind = kind_of(hit)
        row += [float(kind == k) for k in _KINDS]
        parts = parts_of(chunk.section)
        row += [_LEVELS.get(chunk.meta.get("level", ""), 0.0),
                max((evidence.parts.get(p, 0.0) for p in parts), default=0.0),
                evidence.parts.get(chunk.section, 0.0),
                max((evidence.words.get(p, 0.0) for p in parts), default=0.0) / words_best,
                float(articles[f"{chunk.source}:{whole_section(chunk.section)}"] - 1),
                0.0 if evidence.named_source is None else (1.0 if evidence.named_source == chunk.source else -1.0),
                query_words]
        rows.append(row)
    return rows
