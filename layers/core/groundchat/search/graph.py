"""The graph of the texts' own references: what it holds, how it is stored and how it is walked.

Nodes are the parts of the two texts (the Act's articles, paragraphs, Article 3 definitions,
annexes, annex sections and points, recitals; WCAG's principles, guidelines, criteria,
Understanding documents and glossary terms) and the axe rules that test criteria. A node that is a
passage of the index names its chunk; a container (an article of several paragraphs, an annex
section of points) is a node of its own, joined to its parts. Edges are typed: `refers_to` (a
reference read from the text), `uses_term` (a defined term used), `part_of`, `tested_by` (a
criterion and an axe rule whose tags name it). search/graph_build.py builds it at ingest; both
backends store it with the index as the JSON of `to_json`.
"""
from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources

from typing import TYPE_CHECKING, TypedDict

from groundchat.corpus.chunk import whole_section

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject

_RULES_TEXT = resources.files("groundchat.search").joinpath("graph_rules.json").read_text(encoding="utf-8")
RULES = json.loads(_RULES_TEXT)
# Part of the index's meta: an ingest whose graph rules differ from the serving index's builds again.
GRAPH_VERSION = hashlib.sha256(_RULES_TEXT.encode()).hexdigest()[:12]
EDGE_KINDS = tuple(RULES["hop"]["weights"])
# Nodes and edges, and each by kind (`Graph.size`).
GraphSize = dict[str, "int | dict[str, int]"]


class GraphData(TypedDict):
    """The graph as stored (`Graph.to_data`): JSON arrays, read back as these rows."""
    version: str
    nodes: list[tuple[str, str, list[str]]]  # node id, kind, its passages' chunk ids
    edges: list[tuple[int, int, str]]  # the nodes' places in `nodes`, the edge's kind


def node_id(source: str, section: str) -> str:
    return f"{source}:{section}"


@dataclass(frozen=True)
class Node:
    kind: str
    # The chunk ids of the index this node is (one for a passage, none for a container or an axe rule).
    passages: tuple[str, ...] = ()


@dataclass(frozen=True)
class Step:
    """One edge as walked from a node: where it leads, its kind and direction, and its share of the
    weight (`_walkable`)."""
    to: str
    kind: str
    direction: str  # "forward" (as written: the paragraph refers to the article) or "reverse"
    share: float


@dataclass
class Graph:
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[tuple[str, str, str]] = field(default_factory=list)  # (from, to, kind)
    _steps: dict[str, list[Step]] | None = field(default=None, repr=False, compare=False)
    _edge_set: set[tuple[str, str, str]] = field(default_factory=set, repr=False, compare=False)

    def add_node(self, nid: str, kind: str, passages: tuple[str, ...] = ()) -> None:
        known = self.nodes.get(nid)
        if known is None:
            self.nodes[nid] = Node(kind, passages)
        elif passages and not known.passages:
            self.nodes[nid] = Node(known.kind, passages)

    def add_edge(self, source: str, target: str, kind: str) -> None:
        if kind not in EDGE_KINDS:
            raise ValueError(f"unknown edge kind {kind!r}; known: {list(EDGE_KINDS)}")
        edge = (source, target, kind)
        if source != target and source in self.nodes and target in self.nodes and edge not in self._edge_set:
            self._edge_set.add(edge)
            self.edges.append(edge)
            self._steps = None

    def steps(self, nid: str) -> list[Step]:
        """The node's edges both ways, each with its share (built once, then kept)."""
        if self._steps is None:
            self._steps = _walkable(self.edges)
        return self._steps.get(nid, [])

    def containers(self, nid: str) -> list[str]:
        return [s.to for s in self.steps(nid) if s.kind == "part_of" and s.direction == "forward"]

    def size(self) -> GraphSize:
        """Nodes and edges, each by kind: the ingest's summary and the index's meta say it."""
        return {"nodes": len(self.nodes), "edges": len(self.edges),
                "nodes_by_kind": dict(sorted(Counter(n.kind for n in self.nodes.values()).items())),
                "edges_by_kind": dict(sorted(Counter(kind for _, _, kind in self.edges).items()))}

    # -- stored with the index ---------------------------------------------------------------

    def to_data(self) -> JsonObject:
        """Nodes in order, edges by the nodes' positions: the shape both backends store."""
        order = sorted(self.nodes)
        at = {nid: i for i, nid in enumerate(order)}
        return {
            "version": GRAPH_VERSION,
            "nodes": [[nid, self.nodes[nid].kind, list(self.nodes[nid].passages)] for nid in order],
            "edges": [list(e) for e in sorted({(at[a], at[b], kind) for a, b, kind in self.edges})],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_data(), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> "Graph":
        return cls.from_data(json.loads(text))

    @classmethod
    def from_data(cls, data: GraphData) -> "Graph":
        order = [row[0] for row in data["nodes"]]
        graph = cls(nodes={nid: Node(kind, tuple(passages)) for nid, kind, passages in data["nodes"]})
        for a, b, kind in data["edges"]:
            graph.add_edge(order[a], order[b], kind)
        return graph


def _walkable(edges: list[tuple[str, str, str]]) -> dict[str, list[Step]]:
    """Each edge both ways, its share 1 / sqrt(degree of the node it leaves × degree of the node it
    reaches), by kind and direction: a hub (the definition of 'product', used by half the Act) is
    reached from everywhere, so what reaches it from any one place counts little."""
    out_degree: Counter[tuple[str, str]] = Counter()
    in_degree: Counter[tuple[str, str]] = Counter()
    for a, b, kind in edges:
        out_degree[(a, kind)] += 1
        in_degree[(b, kind)] += 1
    steps: dict[str, list[Step]] = {}
    for a, b, kind in edges:
        share = 1 / math.sqrt(out_degree[(a, kind)] * in_degree[(b, kind)])
        steps.setdefault(a, []).append(Step(b, kind, "forward", share))
        steps.setdefault(b, []).append(Step(a, kind, "reverse", share))
    return steps


def size_line(size: GraphSize) -> str:
    by_kind = size.get("edges_by_kind")
    edges = ", ".join(f"{kind} {n}" for kind, n in by_kind.items()) if isinstance(by_kind, dict) else ""
    return f"{size['nodes']} nodes, {size['edges']} edges ({edges})"


def container_of(section: str) -> str | None:
    """The section a passage is part of: its article, annex section or criterion (None for a whole)."""
    whole = whole_section(section)
    return whole if whole != section else None


__all__ = ["EDGE_KINDS", "GRAPH_VERSION", "Graph", "GraphSize", "Node", "RULES", "Step", "container_of", "node_id", "size_line"]
