"""The passages as a search serves them: each cut at our ceiling, and how fresh they are."""
from __future__ import annotations

from datetime import datetime

from groundchat.corpus.dates import as_datetime
from groundchat.search.types import Freshness, LegHit, Passage


def excerpts(kept: list[LegHit], max_chars: int) -> tuple[list[Passage], int]:
    """The passages as served, each cut at `max_chars`, and how many characters were cut."""
    passages: list[Passage] = []
    dropped_chars = 0
    for hit in kept:
        text = hit.chunk.text
        cut = len(text) > max_chars
        if cut:
            dropped_chars += len(text) - max_chars
            text = text[:max_chars].rstrip() + " …"
        c = hit.chunk
        passages.append(Passage(ref=c.ref, source=c.source, section=c.section, title=c.title, url=c.url,
                                text=text, updated_at=c.updated_at, score=round(hit.score, 6), truncated=cut))
    return passages, dropped_chars


def freshness(passages: list[Passage]) -> Freshness:
    """The oldest date among the excerpts and how many have none. Dates are compared as moments; one
    that is not strict UTC (an index built before the ingest refused such dates) counts as undated."""
    dated: list[tuple[datetime, str]] = []
    for p in passages:
        if not p.updated_at:
            continue
        try:
            dated.append((as_datetime(p.updated_at), p.updated_at))
        except ValueError:
            continue
    return Freshness(oldest_updated_at=min(dated)[1] if dated else None, undated=len(passages) - len(dated))


__all__ = ["excerpts", "freshness"]
