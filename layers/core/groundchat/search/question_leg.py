"""A leg from the questions each part of the two texts answers (corpus/question_bank.py).

The vector leg compares a question with passages; this leg compares it with questions. A part (an
article, an Article 3 definition, an annex section, a recital, a success criterion) scores the
likeness of its nearest question, and the parts nearest the question lend that score to their
passages among the candidates the other two legs found. A part none of them found stays out: the
leg reorders what the search already has, it does not bring a passage on the strength of a question
alone.

Decided on the tune, validation, second tune, third and fourth sets (docs/engineering/retrieval-eval.md):
fused at `QUESTION_WEIGHT`, the EAA's MRR rose from 0.694 to 0.751 on validation and from 0.658 to
0.732 on the third set, and WCAG's from 0.915 to 0.933 and 0.839 to 0.846. A weight of 1 lost WCAG
questions to the Act's passages; lending to both sources at once lost the Act's questions to WCAG's.
"""
from __future__ import annotations

from groundchat.corpus.chunk import whole_section
from groundchat.search.types import LegHit

QUESTION_LEG = "questions"
# What a backend calls the nearest questions when asked for them with the legs (in one request).
ROWS = "question_rows"
QUESTION_WEIGHT = 0.5
# Question rows the vector search returns: enough that the parts ranked up to `PARTS` each have
# their nearest question among them (a part has 2 to 8).
QUESTION_ROWS = 120
PARTS = 30


def parts_of(section: str) -> set[str]:
    """The parts a passage belongs to, as the question bank names them: itself ("Article 3(23)",
    "Recital 41"), its article ("Article 4" for "Article 4(5)"), its annex section ("Annex I
    Section IV" for one of its points) and, for Annexes II to VI, the annex ("Annex II")."""
    parts = {section, whole_section(section)}
    if section.startswith("Annex ") and " Section " in section:
        parts.add(section.split(" Section ", 1)[0])
    return parts


def part_scores(question_rows: list[LegHit], parts: int = PARTS) -> dict[str, float]:
    """Of the `parts` parts nearest the question (each scored by its nearest question), those of the
    source whose part is nearest: a question most like a WCAG criterion's lends nothing to the Act's
    passages (the Act's annexes and WCAG share words for captions, links and forms), and the reverse."""
    best: dict[str, float] = {}
    source_of: dict[str, str] = {}
    for row in question_rows:
        part = row.chunk.section
        best[part] = max(best.get(part, row.score), row.score)
        source_of[part] = row.chunk.meta.get("answers", "")
    nearest = sorted(best, key=lambda part: -best[part])[:parts]
    return {part: best[part] for part in nearest if source_of[part] == source_of[nearest[0]]}


def question_leg(question_rows: list[LegHit], candidates: dict[str, list[LegHit]]) -> list[LegHit]:
    """The candidates (vector leg first, then BM25) whose part is among the nearest, best part first;
    each scores its part's score (its best part's, if it belongs to more than one)."""
    scores = part_scores(question_rows)
    if not scores:
        return []
    seen: set[str] = set()
    out: list[LegHit] = []
    for leg in ("vector", "bm25"):
        for hit in candidates.get(leg, []):
            if hit.chunk.id in seen:
                continue
            matched = [scores[p] for p in parts_of(hit.chunk.section) if p in scores]
            if matched:
                seen.add(hit.chunk.id)
                out.append(LegHit(hit.chunk, max(matched)))
    out.sort(key=lambda h: -h.score)  # stable: within a part, the vector leg's order
    return out


__all__ = ["PARTS", "QUESTION_LEG", "QUESTION_ROWS", "ROWS", "QUESTION_WEIGHT", "parts_of", "part_scores", "question_leg"]
