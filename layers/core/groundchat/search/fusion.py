"""Reciprocal rank fusion, in our code so both backends fuse the same way."""
from __future__ import annotations

from groundchat.search.types import LegHit

RRF_K = 60


def rrf(legs: dict[str, list[LegHit]], *, k: int = RRF_K, weights: dict[str, float] | None = None) -> list[LegHit]:
    """Score = sum over legs of weight / (k + rank), rank from 1. Ties keep the first leg's order."""
    weights = weights or {}
    scores: dict[str, float] = {}
    chunks: dict[str, LegHit] = {}
    for leg, hits in legs.items():
        weight = weights.get(leg, 1.0)
        for rank, hit in enumerate(hits, start=1):
            scores[hit.chunk.id] = scores.get(hit.chunk.id, 0.0) + weight / (k + rank)
            chunks.setdefault(hit.chunk.id, hit)
    ordered = sorted(scores, key=lambda cid: -scores[cid])
    return [LegHit(chunk=chunks[cid].chunk, score=scores[cid]) for cid in ordered]
