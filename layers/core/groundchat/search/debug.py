"""The debug record of one search: what ran, how the legs were weighed and fused, what each leg
found, and the timings. One typed model, filled by the pipeline's steps (search/pipeline.py) and
dumped once at the edge (`record`): the `search_docs` tool's result, the trace and the page read
that dump, under these names.

The names a client of seed 002's ChatDebugInfo reads are here as that system gives them: per-leg
enablement (`vector_enabled`, `sparse_enabled`, `graph_enabled`, and `legs_enabled` for every leg),
`fusion_method`, `rrf_k`, the weights (`weights`, with `vector_weight` and `sparse_weight`), the
confidence threshold (`confidence_threshold`) and the graph leg's counters (`graph_seeds`,
`graph_entities`, `graph_expansion_hits`, `graph_hydrated`, `graph_inserted`). The older names
(`fusion`, `switches`, `legs`) stay, because the page, the JSON answer and the traces read them.
"""
from __future__ import annotations

from typing import Mapping

from pydantic import BaseModel, ConfigDict, Field, JsonValue

# A value a leg counts in the record (search/leg.py `LegRun.counters`): a count, a switch, an
# error's code, or the words it matched.
LegCounter = int | bool | str | list[str]


class _Record(BaseModel):
    # A misspelt field is an error, not a silent new key.
    model_config = ConfigDict(extra="forbid")


class LegFound(_Record):
    """What one leg found: how many passages, and the refs of its first five."""
    hits: int
    top: list[str]


class PriorRecord(_Record):
    demoted: list[str]
    demoted_source: str | None
    demoted_levels: list[str]
    factor: float


class NamedTextRecord(_Record):
    """The text a question names, searched on its own (search/named_source_first.py)."""
    source: str
    lead: list[str] | None = None
    error: str | None = None


class RankerRecord(_Record):
    confidence: float
    threshold: float
    best_match: str


class SearchDebug(_Record):
    """Fields left unset are left out of the dump: a key is there when its step said something."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    backend: str
    leg: str
    fusion: str
    fusion_method: str
    rrf_k: int
    score_share: float
    weights: dict[str, float]
    rerank: str
    embedding_model: str
    sources: list[str]
    legs: dict[str, LegFound] = Field(default_factory=dict)
    timings_ms: dict[str, float] = Field(default_factory=dict)
    switches: dict[str, bool]
    # Per-leg enablement: whether this search runs the leg at all (it may still find nothing, or not apply).
    legs_enabled: dict[str, bool]
    vector_enabled: bool
    sparse_enabled: bool
    graph_default: bool  # GROUNDCHAT_SEARCH_GRAPH: whether an unswitched search walks the graph
    graph_enabled: bool = False  # true once the graph leg has run (search/graph_leg.py)
    vector_weight: float | None = None
    sparse_weight: float | None = None
    # The learned ranking step's threshold on its confidence (search/learned_rank.py); None without it.
    confidence_threshold: float | None = None
    expanded: str | None = None
    question_words: list[str] = Field(default_factory=list)
    legs_ran: list[str] = Field(default_factory=list)
    prior: PriorRecord | None = None
    exact: list[str] = Field(default_factory=list)
    named_text: NamedTextRecord | None = None
    ranker: RankerRecord | None = None
    distinct_first: int | None = None
    per_group: int | None = None
    # The graph leg's counters (search/graph_leg.py), named as seed 002's system names them.
    graph_seeds: int | None = None
    graph_entities: int | None = None
    graph_expansion_hits: int | None = None
    graph_hydrated: int | None = None
    graph_inserted: int | None = None
    # What could not be done: the detail stays in the trace (chat/reader_debug.py shows the reader less).
    error: str | None = None
    graph_error: str | None = None
    rerank_error: str | None = None
    # What the request narrowed (search/preferences.py), added by the tool that ran the search.
    request: dict[str, JsonValue] | None = None

    def counted(self, counters: Mapping[str, LegCounter]) -> None:
        """A leg's own counters, under their names in this record (an unknown name is an error)."""
        for name, value in counters.items():
            setattr(self, name, value)

    def record(self) -> dict[str, JsonValue]:
        """The record as JSON: what the tool's result, the trace and the page read."""
        return self.model_dump(mode="json", exclude_unset=True)


__all__ = ["LegCounter", "LegFound", "NamedTextRecord", "PriorRecord", "RankerRecord", "SearchDebug"]
