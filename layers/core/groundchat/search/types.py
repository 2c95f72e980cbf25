"""What a search returns. Three outcomes, never merged: found something, found nothing, could not look."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from groundchat.corpus.chunk import Chunk

Outcome = Literal["hit", "empty", "unavailable"]
Leg = Literal["hybrid", "bm25", "vector"]


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


class LegSwitches(BaseModel):
    """Which legs one search may run, for evaluation and for the chat's JSON API. They only narrow:
    a leg switched on still runs only where the search runs it (the graph leg in hybrid only, seeded
    by the other legs), and the debug record says which legs ran."""

    model_config = ConfigDict(extra="forbid")

    include_vector: bool = True  # the vector leg, and the question bank's rows, which need the vector
    include_sparse: bool = True  # the BM25 leg
    # The graph leg (search/graph_leg.py); None: as GROUNDCHAT_SEARCH_GRAPH says.
    include_graph: bool | None = None


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
    debug: dict[str, JsonValue] = Field(default_factory=dict)
    # The learned ranking step's word on its first passage (search/learned_rank.py): "weak" when its
    # confidence is under the threshold chosen on the tune sets; None when the step did not run.
    best_match: Literal["strong", "weak"] | None = None
