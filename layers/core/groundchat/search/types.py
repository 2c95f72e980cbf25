"""What a search returns. Three outcomes, never merged: found something, found nothing, could not look."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from groundchat.corpus.chunk import Chunk
from groundchat.search.debug import SearchDebug

Outcome = Literal["hit", "empty", "unavailable"]
# What one search serves: the legs fused, or one leg alone.
SearchLeg = Literal["hybrid", "bm25", "vector"]


class BackendUnavailable(RuntimeError):
    """The index cannot answer; `reason` is a machine code (e.g. `index_missing`, `upstream_5xx`)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass
class LegHit:
    chunk: Chunk
    score: float


class Passage(BaseModel):
    ref: str
    source: str
    section: str
    title: str
    url: str
    text: str
    updated_at: str | None = None
    score: float
    truncated: bool = False


class Freshness(BaseModel):
    oldest_updated_at: str | None = None
    undated: int = 0


class SearchResult(BaseModel):
    outcome: Outcome
    reason: str | None = None
    query: str
    passages: list[Passage] = Field(default_factory=list)
    freshness: Freshness = Field(default_factory=Freshness)
    # What our own ceiling removed: passages beyond the count, characters cut from excerpts.
    dropped: dict[str, int] = Field(default_factory=lambda: {"passages": 0, "chars": 0})
    debug: SearchDebug | None = None  # None only for a result no search made
    # The learned ranking step's word on its first passage (search/learned_rank.py): "weak" when its
    # confidence is under the threshold chosen on the tune sets; None when the step did not run.
    best_match: Literal["strong", "weak"] | None = None
