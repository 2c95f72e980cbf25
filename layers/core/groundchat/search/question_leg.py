"""A leg from the questions each part of the two texts answers (corpus/question_bank.py).

The vector leg compares a question with passages; this leg compares it with questions. A part (an
article, an Article 3 definition, an annex section, a recital, a success criterion) scores the
likeness of its nearest question, and the parts nearest the question lend that score to their
passages among the candidates the other two legs found. A part none of them found stays out: the
leg reorders what the search already has, it does not bring a passage on the strength of a question
alone.

A part's likeness also counts the words its questions share with the new one
(search/question_words.py).

Decided on the tune, validation, second tune, third and fourth sets (docs/engineering/retrieval-eval.md).
By vectors alone, fused at 0.5, the EAA's MRR rose from 0.694 to 0.751 on validation and from 0.658
to 0.732 on the third set; a weight of 1 then lost WCAG questions to the Act's passages. With the
words the parts are ranked better, and at `QUESTION_WEIGHT` 1 the EAA's MRR is 0.806 and 0.787 and
WCAG's rose too. Lending to both sources at once lost the Act's questions to WCAG's.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from groundchat.corpus.chunk import whole_section
from groundchat.search.debug import LegCounter
from groundchat.search.leg import Found, Joins, LegRun, SearchPlan
from groundchat.search.question_words import WORDS_WEIGHT, QuestionWords, bank_words
from groundchat.search.types import LegHit

QUESTION_LEG = "questions"
# What a backend calls the nearest questions when asked for them with the legs (in one request).
ROWS = "question_rows"
QUESTION_WEIGHT = 1.0
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


def part_scores(question_rows: list[LegHit], words: Mapping[str, float] | None = None,
                parts: int = PARTS) -> dict[str, float]:
    """Of the `parts` parts nearest the question, those of the source whose part is nearest: a
    question most like a WCAG criterion's lends nothing to the Act's passages (the Act's annexes and
    WCAG share words for captions, links and forms), and the reverse. A part scores its nearest
    question's likeness, plus `WORDS_WEIGHT` × its share of the words (`words`, 1 for the best part)."""
    best: dict[str, float] = {}
    source_of: dict[str, str] = {}
    for row in question_rows:
        part = row.chunk.section
        best[part] = max(best.get(part, row.score), row.score)
        source_of[part] = row.chunk.meta.get("answers", "")
    for part, share in (words or {}).items():
        if part in best:
            best[part] += WORDS_WEIGHT * share
    nearest = sorted(best, key=lambda part: -best[part])[:parts]
    return {part: best[part] for part in nearest if source_of[part] == source_of[nearest[0]]}


def question_leg(scores: Mapping[str, float], candidates: dict[str, list[LegHit]]) -> list[LegHit]:
    """The candidates (vector leg first, then BM25) whose part is among the nearest (`part_scores`),
    best part first; each scores its part's score (its best part's, if it belongs to more than one)."""
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


@dataclass(frozen=True)
class BankEvidence:
    """What the bank says of one question: its parts' scores and the parts whose words it shares."""
    parts: dict[str, float]
    words: dict[str, float]


@dataclass(frozen=True)
class QuestionLeg:
    """The leg as the search runs it (search/leg.py). The nearest questions come with the backend's
    one request; the bank's words are matched against the question as asked, since the bank is in
    users' words. What the bank said is kept in the search's notes, so a second search of the same
    question over fewer sources (search/named_source_first.py) lends the same parts."""
    words: Callable[[], QuestionWords] = bank_words
    name: str = QUESTION_LEG
    joins: Joins = "votes"
    asks: frozenset[str] = frozenset({ROWS})
    needs_vector: bool = True

    def enabled(self, plan: SearchPlan) -> bool:
        return plan.hybrid and plan.preferences.include_vector

    def run(self, plan: SearchPlan, found: Found) -> LegRun | None:
        bank = found.notes.get(self.name)
        if not isinstance(bank, BankEvidence):
            rows = found.backend.get(ROWS, [])
            words = self.words().scores(plan.query) if rows else {}
            bank = found.notes[self.name] = BankEvidence(part_scores(rows, words), words)
        counters: dict[str, LegCounter] = {"question_words": sorted(bank.words, key=lambda part: -bank.words[part])[:5]}
        if not bank.parts:
            return LegRun([], counters=counters, skipped=True)
        return LegRun(question_leg(bank.parts, found.legs), counters=counters)


__all__ = ["BankEvidence", "QuestionLeg", "PARTS", "QUESTION_LEG", "QUESTION_ROWS", "ROWS", "QUESTION_WEIGHT", "parts_of", "part_scores", "question_leg"]
