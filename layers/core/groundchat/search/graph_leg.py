"""The graph leg: from the passages the other legs put first, one hop along the texts' references,
and what it reaches placed just under the seed that led to it.

A question about a tablet or a distributor finds the definition by its words; the duty is the
passage that *uses* the defined term or *refers to* the definition, which shares fewer of the
question's words. So:

1. **seeds**: the first passage of each of the first `seeds` articles, annex sections or criteria
   of the other legs fused (what the first five excerpts would be), of the node kinds in
   `seed_kinds`: a definition lends its term to the paragraphs that use it; an Annex I point or a
   paragraph lends its references to everything, which is why they are not seeds (measured in
   docs/engineering/retrieval-eval.md);
2. **entities**: each seed's node and its whole (a definition's Article 3), the whole at
   `container_share` of the seed's weight;
3. **one hop** along the typed edges of those entities, weighted per kind and direction
   (graph_rules.json) and shared out by the degrees of both ends (search/graph.py);
4. **hydration**: the passages reached are scored against the question with what the other legs
   already said of them (their fused score over the first one's). A passage no leg found has no
   such score and is left out: the hop's weight alone brought in Article 2's scope and Article 25
   on every other question. Evidence × relevance must reach `min_evidence`, and the relevance
   `min_relevance`;
5. **insertion**: at most `max_inserts` of them, best first, get a score just under their leader
   (the first seed that reached them), so the search's spread (search/diversity.py) serves them
   right after it. A seed itself is never moved (its place is the other legs' word), though another
   paragraph of a seed's article may be, which serves that article earlier. The leader and every
   seed above it keep their places, a passage never moves down, and nothing is fused with a weight
   of its own, so the graph can add a passage under a seed but cannot outvote the other legs.

Its counters are named as the tri-brid system we follow names them in its debug footer.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from groundchat.search.diversity import group_of
from groundchat.search.graph import RULES, Graph, node_id
from groundchat.search.leg import Found, Joins, LegRun, SearchPlan
from groundchat.search.types import BackendUnavailable, LegHit

GRAPH_LEG = "graph"
_HOP = RULES["hop"]
WEIGHTS: dict[str, dict[str, float]] = _HOP["weights"]
CONTAINER_SHARE: float = _HOP["container_share"]
SEEDS: int = _HOP["seeds"]
SEED_KINDS: frozenset[str] = frozenset(_HOP["seed_kinds"])
MIN_RELEVANCE: float = _HOP["min_relevance"]
MIN_EVIDENCE: float = _HOP["min_evidence"]
MAX_INSERTS: int = _HOP["max_inserts"]


@dataclass
class GraphLegResult:
    hits: list[LegHit] = field(default_factory=list)  # the fused list with the insertions
    inserted: list[LegHit] = field(default_factory=list)  # what the leg placed, in its new place's order
    seeds: int = 0  # seeds that resolved to a node of the graph
    entities: int = 0  # their nodes and wholes
    expansion_hits: int = 0  # nodes reached by the hop
    hydrated: int = 0  # passages reached that the other legs had scored against the question

    def counters(self) -> dict[str, int]:
        return {"graph_seeds": self.seeds, "graph_entities": self.entities,
                "graph_expansion_hits": self.expansion_hits, "graph_hydrated": self.hydrated,
                "graph_inserted": len(self.inserted)}


@dataclass
class _Walk:
    evidence: dict[str, float] = field(default_factory=dict)  # chunk id -> what the hop lends it
    leader: dict[str, int] = field(default_factory=dict)  # chunk id -> place in `fused` of its first seed
    entities: set[str] = field(default_factory=set)
    reached: set[str] = field(default_factory=set)


def graph_leg(graph: Graph, fused: list[LegHit], sources: list[str], *, seeds: int = SEEDS,
              seed_kinds: frozenset[str] = SEED_KINDS, min_relevance: float = MIN_RELEVANCE,
              min_evidence: float = MIN_EVIDENCE, max_inserts: int = MAX_INSERTS) -> GraphLegResult:
    """`fused` with the passages one hop from its seeds placed under them (see the module's doc)."""
    out = GraphLegResult(hits=fused)
    if not fused:
        return out
    top = fused[0].score if fused[0].score > 0 else 1.0
    relevance = {h.chunk.id: max(h.score, 0.0) / top for h in fused}
    seeded = [(at, nid) for at, nid in _seeds(fused, seeds) if nid in graph.nodes]
    out.seeds = len(seeded)
    walk = _walk(graph, [(at, nid, relevance[fused[at].chunk.id]) for at, nid in seeded
                         if graph.nodes[nid].kind in seed_kinds], set(sources))
    out.entities, out.expansion_hits = len(walk.entities), len(walk.reached)
    place = {h.chunk.id: at for at, h in enumerate(fused)}
    seed_ids = {fused[at].chunk.id for at, _ in seeded}
    scored: list[tuple[float, str]] = []
    for cid, evidence in walk.evidence.items():
        at = place.get(cid)
        if at is None or cid in seed_ids:
            continue  # no leg scored it against the question, or it is a seed already
        lead = fused[walk.leader[cid]]
        if _group(fused[at]) == _group(lead) or at < walk.leader[cid]:
            continue  # its own article already leads there, or it is above its leader already
        out.hydrated += 1
        if relevance[cid] >= min_relevance and evidence * relevance[cid] >= min_evidence:
            scored.append((evidence * relevance[cid], cid))
    chosen = [cid for _, cid in sorted(scored, reverse=True)[:max_inserts]]
    if chosen:
        out.hits, out.inserted = _inserted(fused, chosen, walk.leader, place, max_inserts)
    return out


@runtime_checkable
class GraphReader(Protocol):
    """A backend that stores the graph with its passages (both of ours; a test's double may not)."""

    def graph(self) -> Graph | None: ...


@dataclass(frozen=True)
class GraphLeg:
    """The leg as the search runs it (search/leg.py): it places, on the fused order of the voting
    legs, over the sources searched. An index without a graph, or one that fails to read it, leaves
    the search as it was and says why in the debug record."""
    name: str = GRAPH_LEG
    joins: Joins = "places"
    asks: frozenset[str] = frozenset()
    needs_vector: bool = False

    def enabled(self, plan: SearchPlan) -> bool:
        return plan.hybrid and plan.preferences.include_graph

    def run(self, plan: SearchPlan, found: Found) -> LegRun | None:
        fused = found.fused()
        if not fused:
            return None
        try:
            graph = found.index.graph() if isinstance(found.index, GraphReader) else None
        except BackendUnavailable as exc:
            return LegRun([], counters={"graph_error": exc.reason}, skipped=True)
        if graph is None:
            return LegRun([], counters={"graph_error": "no_graph"}, skipped=True)
        result = graph_leg(graph, fused, plan.sources)
        return LegRun(result.hits, shown=result.inserted, counters={"graph_enabled": True, **result.counters()})


def _seeds(fused: list[LegHit], n: int) -> list[tuple[int, str]]:
    """(place in `fused`, node id) of the first passage of each of the first `n` groups."""
    out: list[tuple[int, str]] = []
    groups: set[str] = set()
    for at, hit in enumerate(fused):
        if len(out) >= n:
            break
        if _group(hit) not in groups:
            groups.add(_group(hit))
            out.append((at, node_id(hit.chunk.source, hit.chunk.section)))
    return out


def _walk(graph: Graph, seeds: list[tuple[int, str, float]], sources: set[str]) -> _Walk:
    walk = _Walk()
    for at, nid, weight in seeds:
        own = {nid: weight, **{whole: weight * CONTAINER_SHARE for whole in graph.containers(nid)}}
        walk.entities.update(own)
        for entity, activation in own.items():
            for step in graph.steps(entity):
                kind_weight = WEIGHTS[step.kind][step.direction]
                if step.to in own or kind_weight <= 0:
                    continue  # a seed is not its own evidence, nor is its whole
                walk.reached.add(step.to)
                if step.to.split(":", 1)[0] not in sources:
                    continue
                for cid, gain in _passages(graph, step.to, activation * kind_weight * step.share):
                    walk.evidence[cid] = walk.evidence.get(cid, 0.0) + gain
                    walk.leader[cid] = min(walk.leader.get(cid, at), at)
    return walk


def _passages(graph: Graph, nid: str, gain: float) -> list[tuple[str, float]]:
    """A passage node's chunk, or a whole's parts' chunks at `container_share`, shared over them."""
    node = graph.nodes[nid]
    if node.passages:
        return [(cid, gain) for cid in node.passages]
    parts = [s.to for s in graph.steps(nid) if s.kind == "part_of" and s.direction == "reverse"]
    share = gain * CONTAINER_SHARE / math.sqrt(len(parts)) if parts else 0.0
    return [(cid, share) for part in parts for cid in graph.nodes[part].passages] if share > 0 else []


def _inserted(fused: list[LegHit], chosen: list[str], leader: dict[str, int], place: dict[str, int],
              max_inserts: int) -> tuple[list[LegHit], list[LegHit]]:
    """Each chosen passage scored between its leader and the passage after it (several under one
    leader in the order chosen); only ever up."""
    scores = {h.chunk.id: h.score for h in fused}
    under: dict[int, int] = {}
    for cid in chosen:
        at = leader[cid]
        anchor = fused[at].score
        following = fused[at + 1].score if at + 1 < len(fused) else anchor - 1e-3
        under[at] = under.get(at, 0) + 1
        scores[cid] = max(scores[cid], anchor - (anchor - following) * under[at] / (max_inserts + 1))
    ordered = sorted(fused, key=lambda h: -scores[h.chunk.id])  # stable: the others keep their order
    hits = [LegHit(h.chunk, scores[h.chunk.id]) for h in ordered]
    picked = set(chosen)
    return hits, [h for h in hits if h.chunk.id in picked]


def _group(hit: LegHit) -> str:
    return group_of(hit.chunk.source, hit.chunk.section)


__all__ = ["GraphLeg", "GRAPH_LEG", "GraphLegResult", "graph_leg"]
