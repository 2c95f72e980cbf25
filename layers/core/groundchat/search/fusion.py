"""Fusion of the legs' ranked lists, in our code so both backends fuse the same way.

Each leg gives each of its passages a share of its weight from two things:

- its score, min-max normalised over the leg's candidates (1 for its best, 0 for its last), so a
  passage one leg finds far ahead of everything else stays ahead of passages both legs rank low;
- its rank, as reciprocal rank fusion counts it: (k + 1) / (k + rank), 1 for the first.

Reciprocal rank alone throws the scores away and counts any place among the other leg's 30
candidates as a large bonus: an article whose words a question shares, first in BM25 by a wide
margin and not found by the vector leg, fell behind passages both legs ranked twentieth. Scores
alone follow one leg's outliers. The shares were set on the tune, validation and second tune sets
(docs/engineering/retrieval-eval.md). A leg's raw scores are not comparable with another's (BM25
against cosine), which is why each is normalised within its own leg, and why the min-max form:
OpenSearch's scores for the same legs differ from the embedded index's by a shift and a scale.
"""
from __future__ import annotations

from groundchat.search.types import LegHit

RRF_K = 60
SCORE_SHARE = 0.7  # of a leg's contribution, from its normalised score; the rest from its rank
FUSION = "scores+rrf"


def fuse(legs: dict[str, list[LegHit]], *, k: int = RRF_K, weights: dict[str, float] | None = None,
         score_share: float = SCORE_SHARE) -> list[LegHit]:
    """Sum over legs of weight × (share × normalised score + (1 − share) × (k + 1) / (k + rank)).
    `score_share=0` orders as reciprocal rank fusion. Ties keep the first leg's order."""
    weights = weights or {}
    scores: dict[str, float] = {}
    chunks: dict[str, LegHit] = {}
    for leg, hits in legs.items():
        if not hits:
            continue
        weight = weights.get(leg, 1.0)
        best, worst = max(h.score for h in hits), min(h.score for h in hits)
        spread = best - worst
        for rank, hit in enumerate(hits, start=1):
            normalised = (hit.score - worst) / spread if spread > 0 else 1.0
            by_rank = (k + 1) / (k + rank)
            contribution = weight * (score_share * normalised + (1 - score_share) * by_rank)
            scores[hit.chunk.id] = scores.get(hit.chunk.id, 0.0) + contribution
            chunks.setdefault(hit.chunk.id, hit)
    ordered = sorted(scores, key=lambda cid: -scores[cid])
    return [LegHit(chunk=chunks[cid].chunk, score=scores[cid]) for cid in ordered]


__all__ = ["FUSION", "RRF_K", "SCORE_SHARE", "fuse"]
