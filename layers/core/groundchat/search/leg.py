"""The one shape every leg of the search has (bm25, vector, questions, criterion, graph, and any
leg to come): the search's plan in, scored passages and the leg's own counters out.

A leg either *votes*, its hits fused with the others' at its weight (search/fusion.py), or
*places*: it reads the fused list and returns it reordered (the graph leg puts a passage under the
seed that led to it, and never outvotes the other legs). The legs run in the order of the pipeline's
list (search/pipeline.py), each seeing what the legs before it found (`Found`): the question leg
reorders the candidates of BM25 and the vector leg, the criterion leg reads the vector leg's and the
fused order, the graph leg the fused order.

BM25 and the vector leg are the backend's own: they are served by one request to the index (one
`_msearch` on OpenSearch), made before the legs run, with what each leg `asks` of the backend.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Literal, Protocol, runtime_checkable

from groundchat.search.debug import LegCounter
from groundchat.search.preferences import SearchPreferences
from groundchat.search.types import LegHit, SearchLeg

if TYPE_CHECKING:
    from groundchat.search.embeddings import QueryVector

Joins = Literal["votes", "places"]


@dataclass(frozen=True)
class SearchPlan:
    """What every leg reads: the question as asked and as the legs search it, its vector (None when
    no leg needs it), the sources searched and the request's preferences."""
    query: str
    expanded: str
    vector: QueryVector | None
    sources: list[str]
    preferences: SearchPreferences
    leg: SearchLeg = "hybrid"  # "bm25" or "vector": that leg alone, unfused

    @property
    def hybrid(self) -> bool:
        return self.leg == "hybrid"


@dataclass
class LegRun:
    """A leg's answer: its hits (a voting leg's candidates, or a placing leg's new order of the fused
    list), what its debug entry counts when that is not `hits` (`shown`), its weight in fusion, and
    its own counters under their names in the debug record (search/debug.py)."""
    hits: list[LegHit]
    weight: float | None = None  # None: the search's configured weight for the leg, else 1
    shown: list[LegHit] | None = None
    counters: dict[str, LegCounter] = field(default_factory=dict)
    # True: the leg had nothing to add (or could not run) and joins no list; its counters still count.
    skipped: bool = False


@dataclass
class Found:
    """What the search has so far: the backend's answer (its legs and the question bank's rows), the
    legs that ran and their weights, and the fused order they make (`fused`, recomputed when a leg
    votes, replaced when one places)."""
    backend: dict[str, list[LegHit]]
    fuse: Callable[[dict[str, list[LegHit]], dict[str, float]], list[LegHit]]
    index: object = None  # the backend itself, for a leg that reads more of it (the graph leg)
    weights: dict[str, float] = field(default_factory=dict)  # the configured ones, then each voting leg's
    legs: dict[str, list[LegHit]] = field(default_factory=dict)
    placed: list[str] = field(default_factory=list)  # the legs that placed, in order
    # What a leg worked out once per question and a second search of it reuses (the bank's parts).
    notes: dict[str, object] = field(default_factory=dict)
    _fused: list[LegHit] | None = None

    def fused(self) -> list[LegHit]:
        if self._fused is None:
            self._fused = self.fuse(self.legs, self.weights)
        return self._fused

    def vote(self, name: str, run: LegRun) -> None:
        self.legs[name] = run.hits
        if run.weight is not None:
            self.weights[name] = run.weight
        self._fused = None

    def place(self, name: str, run: LegRun) -> None:
        self.placed.append(name)
        self._fused = run.hits


@runtime_checkable
class Leg(Protocol):
    @property
    def name(self) -> str:
        """Its name in the debug record, in fusion's weights and in the ranking step's features."""
        ...

    @property
    def joins(self) -> Joins: ...

    @property
    def asks(self) -> frozenset[str]:
        """What the leg needs of the backend's one request ("bm25", "vector", "question_rows")."""
        ...

    @property
    def needs_vector(self) -> bool:
        """Whether it needs the question's vector (the expand step embeds the question only then)."""
        ...

    def enabled(self, plan: SearchPlan) -> bool:
        """Whether this search runs the leg at all (the debug record's per-leg enablement)."""
        ...

    def run(self, plan: SearchPlan, found: Found) -> LegRun | None:
        """The leg's hits, or None where it does not apply to this question."""
        ...


@dataclass(frozen=True)
class BackendLeg:
    """A leg the index serves itself (BM25, the vector leg): its hits are the backend's answer."""
    name: str
    switch: str  # the preference that turns it off
    needs_vector: bool = False
    joins: Joins = "votes"

    @property
    def asks(self) -> frozenset[str]:
        return frozenset({self.name})

    def enabled(self, plan: SearchPlan) -> bool:
        return plan.leg in ("hybrid", self.name) and bool(getattr(plan.preferences, self.switch))

    def run(self, plan: SearchPlan, found: Found) -> LegRun | None:
        return LegRun(found.backend.get(self.name, []))


BM25 = BackendLeg("bm25", "include_sparse")
VECTOR = BackendLeg("vector", "include_vector", needs_vector=True)

__all__ = ["BM25", "VECTOR", "BackendLeg", "Found", "Leg", "LegRun", "SearchPlan"]
