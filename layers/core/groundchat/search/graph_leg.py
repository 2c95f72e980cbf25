"""The graph leg: from the passages the other legs put first, one hop along the texts' references.

A question about a tablet or a chat widget finds the definition of the product, or Annex I's
features, by its words; the duty that applies is the passage that *refers to* them, which shares
few of the question's words. So:

1. **seeds**: the first `SEEDS` passages of the other legs fused, each weighted by its fused score
   over the first one's;
2. **entities**: each seed's node in the graph and its whole (a paragraph's article, a point's annex
   section, an Understanding chunk's criterion), the whole at `container_share` of the seed's weight;
3. **one hop** along every typed edge of those entities, weighted per kind and direction
   (graph_rules.json) and shared out by the degrees of both ends (search/graph.py); a seed lends
   nothing to itself or its whole by the hop, and keeps `seed_weight` of its own weight in the leg,
   so what the hop brings is fused below the seeds rather than in their place;
4. **hydration**: the nodes reached are passages, or wholes whose parts are (at `container_share`,
   shared over the parts); the best `PASSAGES` are taken from the other legs' candidates where they
   are there, and read from the index by chunk id where not.

The list is fused as a leg like the others (search/service.py). Its counters are named as the
tri-brid system we follow names them in its debug footer.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable

from groundchat.corpus.chunk import Chunk
from groundchat.search.graph import RULES, Graph, node_id
from groundchat.search.types import LegHit

GRAPH_LEG = "graph"
_HOP = RULES["hop"]
WEIGHTS: dict[str, dict[str, float]] = _HOP["weights"]
CONTAINER_SHARE: float = _HOP["container_share"]
SEEDS: int = _HOP["seeds"]
PASSAGES: int = _HOP["passages"]
GRAPH_WEIGHT: float = _HOP["leg_weight"]
SEED_WEIGHT: float = _HOP["seed_weight"]

Hydrate = Callable[[list[str]], list[Chunk]]


@dataclass
class GraphLegResult:
    hits: list[LegHit] = field(default_factory=list)
    seeds: int = 0  # seeds that resolved to a node of the graph
    entities: int = 0  # their nodes and wholes
    expansion_hits: int = 0  # nodes reached by the hop
    hydrated: int = 0  # passages the leg lists
    read: int = 0  # of those, read from the index (not among the other legs' candidates)

    def counters(self) -> dict[str, int]:
        return {"graph_seeds": self.seeds, "graph_entities": self.entities,
                "graph_expansion_hits": self.expansion_hits, "graph_hydrated": self.hydrated,
                "graph_read": self.read}


def graph_leg(graph: Graph, fused: list[LegHit], candidates: Iterable[LegHit], hydrate: Hydrate,
              sources: list[str], *, seeds: int = SEEDS, passages: int = PASSAGES,
              seed_weight: float = SEED_WEIGHT) -> GraphLegResult:
    """The passages one hop from the first `seeds` of `fused`, best first (see the module's doc)."""
    out = GraphLegResult()
    seeded = [(h, node_id(h.chunk.source, h.chunk.section)) for h in fused[:seeds]]
    seeded = [(h, nid) for h, nid in seeded if nid in graph.nodes]
    if not seeded:
        return out
    top = max(h.score for h, _ in seeded) or 1.0
    reached: dict[str, float] = {}
    entities: set[str] = set()
    for hit, nid in seeded:
        weight = max(hit.score, 0.0) / top
        own = {nid: weight, **{whole: weight * CONTAINER_SHARE for whole in graph.containers(nid)}}
        entities.update(own)
        reached[nid] = reached.get(nid, 0.0) + weight * seed_weight
        for entity, activation in own.items():
            for step in graph.steps(entity):
                if step.to in own:
                    continue  # a seed is not its own evidence, nor is its whole
                gain = activation * WEIGHTS[step.kind][step.direction] * step.share
                reached[step.to] = reached.get(step.to, 0.0) + gain
    out.seeds, out.entities, out.expansion_hits = len(seeded), len(entities), len(reached)
    scores = _passage_scores(graph, reached, set(sources))
    best = sorted(scores, key=lambda cid: -scores[cid])[:passages]
    known = {h.chunk.id: h.chunk for h in candidates}
    missing = [cid for cid in best if cid not in known]
    if missing:
        known.update({c.id: c for c in hydrate(missing)})
    out.hits = [LegHit(known[cid], scores[cid]) for cid in best if cid in known]
    out.hydrated, out.read = len(out.hits), sum(1 for cid in missing if cid in known)
    return out


def _passage_scores(graph: Graph, reached: dict[str, float], sources: set[str]) -> dict[str, float]:
    """Chunk id -> score: a passage node's own, a whole's shared over its parts' passages."""
    scores: dict[str, float] = {}
    for nid, score in reached.items():
        if nid.split(":", 1)[0] not in sources:
            continue
        node = graph.nodes[nid]
        if node.passages:
            targets = [(cid, score) for cid in node.passages]
        else:
            parts = [s.to for s in graph.steps(nid) if s.kind == "part_of" and s.direction == "reverse"]
            share = score * CONTAINER_SHARE / math.sqrt(len(parts)) if parts else 0.0
            targets = [(cid, share) for part in parts for cid in graph.nodes[part].passages]
        for cid, value in targets:
            if value > 0:
                scores[cid] = scores.get(cid, 0.0) + value
    return scores


__all__ = ["GRAPH_LEG", "GRAPH_WEIGHT", "GraphLegResult", "graph_leg"]
