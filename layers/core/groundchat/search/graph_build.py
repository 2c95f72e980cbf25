"""The graph built at ingest from the converted texts alone (search/graph.py holds its shape).

Nothing here lists an edge by hand. The parts come from the chunks' sections (a paragraph is part
of its article, a point of its annex section, an Understanding document of its criterion, a
criterion of the guideline its meta names); the references come from reading each passage with the
patterns of graph_rules.json ("referred to in Article 7", "point (5) of Article 3", "Section IV of
Annex I"); the uses of a defined term from the Act's Article 3 terms and WCAG's glossary; the axe
rules from their tags (benchmark/axe_rules.py). A reference that names a part the index does not
hold falls back to its whole ("Article 4(10)" to Article 4), or is dropped.

The Act's recitals cite no article by number, so a recital is joined to the articles only by the
terms they share.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Protocol

from groundchat.corpus.chunk import Chunk, kind, whole_section
from groundchat.search.graph import RULES, Graph, GraphSize, container_of, node_id


class GraphStore(Protocol):
    def add_graph(self, graph: Graph) -> None: ...

_TEMPLATE = re.compile(r"\{(\d+|article|annex|list)\}")
_LIST_ITEM = re.compile(r"(\d{1,2})(?:\(\d{1,2}\))?(?:\s+to\s+(\d{1,2}))?")

# The graph's kind of node for a chunk's kind (corpus/chunk.py `kind`).
_NODE_KIND = {"success-criterion": "criterion", "guideline": "guideline", "principle": "principle",
              "term": "glossary_term", "understanding": "understanding", "recital": "recital",
              "definition": "definition"}


@dataclass(frozen=True)
class _Reference:
    kind: str  # "refers_to" or "skip"
    pattern: re.Pattern[str]
    targets: tuple[str, ...]
    only_in: str | None


def _references(source: str) -> list[_Reference]:
    return [_Reference(r["kind"], re.compile(r["pattern"]),
                       tuple(t for t in (r.get("target"), r.get("also")) if t), r.get("only_in"))
            for r in RULES["references"].get(source, [])]


_READERS = {source: _references(source) for source in RULES["references"]}


def build_graph(chunks: Iterable[Chunk], rule_criteria: Mapping[str, list[str]] | None = None) -> Graph:
    """The graph of the Act's and WCAG's chunks (docs and the question bank have no place in it);
    `rule_criteria` is each axe rule's criteria by its tags (None: the package's table)."""
    texts = [c for c in chunks if c.source in _READERS]
    graph = Graph()
    for chunk in texts:
        _add_parts(graph, chunk)
    for chunk in texts:
        _add_references(graph, chunk)
    for source in _READERS:
        _add_term_uses(graph, [c for c in texts if c.source == source])
    _add_axe_rules(graph, _axe_rule_criteria() if rule_criteria is None else rule_criteria)
    return graph


def store_graph(build: GraphStore, chunks: list[Chunk]) -> GraphSize:
    """The graph of these chunks, added to the index being built; its size for the summary."""
    graph = build_graph(chunks)
    build.add_graph(graph)
    return graph.size()


# -- parts ------------------------------------------------------------------------------------

def _node_kind(chunk: Chunk) -> str:
    chunk_kind = kind(chunk)
    if chunk_kind == "annex":
        return "annex_point" if ", " in chunk.section else ("annex_section" if " Section " in chunk.section else "annex")
    if chunk_kind == "article":
        return "paragraph" if container_of(chunk.section) else "article"
    return _NODE_KIND.get(chunk_kind, chunk_kind)


def _add_parts(graph: Graph, chunk: Chunk) -> None:
    nid = node_id(chunk.source, chunk.section)
    graph.add_node(nid, _node_kind(chunk), (chunk.id,))
    for child, parent, parent_kind in _chain(chunk):
        graph.add_node(node_id(chunk.source, parent), parent_kind)
        graph.add_edge(node_id(chunk.source, child), node_id(chunk.source, parent), "part_of")


def _chain(chunk: Chunk) -> list[tuple[str, str, str]]:
    """(part, whole, the whole's kind) up from the chunk: a point to its annex section to its annex,
    a paragraph or definition to its article, an Understanding chunk to its criterion, a criterion to
    its guideline to its principle."""
    section, links = chunk.section, []
    if chunk.source == "eaa":
        whole = container_of(section)
        if whole is not None:
            links.append((section, whole, "annex_section" if " Section " in whole else
                          ("annex" if whole.startswith("Annex ") else "article")))
            section = whole
        if section.startswith("Annex ") and " Section " in section:
            links.append((section, section.split(" Section ", 1)[0], "annex"))
        return links
    criterion = chunk.meta.get("criterion")
    if criterion and chunk.section != criterion:
        links.append((section, criterion, "criterion"))
        section = criterion
    guideline = chunk.meta.get("guideline") if criterion is None else None
    if guideline:
        links.append((section, f"Guideline {guideline}", "guideline"))
    if section.startswith("Guideline ") or guideline:
        number = (guideline or section.removeprefix("Guideline ")).split(".", 1)[0]
        links.append((f"Guideline {guideline}" if guideline else section, f"Principle {number}", "principle"))
    return links


# -- references -------------------------------------------------------------------------------

def _add_references(graph: Graph, chunk: Chunk) -> None:
    """A passage's references: its heading's belong to its whole (every point of Annex I Section I
    repeats the section's "in accordance with Article 2(1)"), its body's to itself."""
    nid = node_id(chunk.source, chunk.section)
    heading, body = _heading_and_body(chunk)
    owner = container_of(chunk.section)
    for text, source_node in ((heading, node_id(chunk.source, owner) if owner else nid), (body, nid)):
        own = {source_node, nid, *graph.containers(nid)}
        for target in references_in(text, chunk):
            target_node = _resolve(graph, chunk.source, target)
            if target_node is not None and target_node not in own:
                graph.add_edge(source_node, target_node, "refers_to")


def _heading_and_body(chunk: Chunk) -> tuple[str, str]:
    first, sep, rest = chunk.text.partition("\n")
    if sep and (first.startswith(whole_section(chunk.section)) or first.startswith("Success Criterion")):
        return first, rest
    return "", chunk.text


def references_in(text: str, chunk: Chunk) -> list[str]:
    """The sections a text names, in the order read, by the passage's source's patterns."""
    own = {"article": chunk.meta.get("article", ""), "annex": _annex_of(chunk.section)}
    found: list[tuple[int, str]] = []
    masked = text
    for ref in _READERS.get(chunk.source, []):
        if ref.only_in and whole_section(chunk.section) != ref.only_in:
            continue
        if any(f"{{{name}}}" in t and not value for t in ref.targets for name, value in own.items()):
            continue
        for m in ref.pattern.finditer(masked):
            masked = masked[: m.start()] + " " * (m.end() - m.start()) + masked[m.end():]
            if ref.kind == "skip":
                continue
            for template in ref.targets:
                found.extend((m.start(), target) for target in _filled(template, m, own))
    return [target for _, target in sorted(found, key=lambda f: f[0])]


def _annex_of(section: str) -> str:
    return section.removeprefix("Annex ").split(" ", 1)[0].rstrip(",") if section.startswith("Annex ") else ""


def _filled(template: str, match: re.Match[str], own: dict[str, str]) -> list[str]:
    numbers = _list_numbers(match.group(1)) if "{list}" in template else [""]
    out = []
    for number in numbers:
        def value(m: re.Match[str]) -> str:
            key = m.group(1)
            return own[key] if key in own else number if key == "list" else match.group(int(key))
        out.append(_TEMPLATE.sub(value, template))
    return out


def _list_numbers(text: str) -> list[str]:
    """'7, 8 and 9' -> 7, 8, 9; '7 to 13' -> 7 … 13 (a range of at most 40)."""
    out: list[str] = []
    for m in _LIST_ITEM.finditer(text):
        first, last = int(m.group(1)), int(m.group(2) or m.group(1))
        out.extend(str(n) for n in range(first, min(last, first + 40) + 1))
    return out


def _resolve(graph: Graph, source: str, section: str) -> str | None:
    for candidate in (section, container_of(section)):
        if candidate and node_id(source, candidate) in graph.nodes:
            return node_id(source, candidate)
    return None


# -- defined terms ----------------------------------------------------------------------------

def defined_terms(chunks: list[Chunk]) -> dict[str, str]:
    """term (lower case) -> the node that defines it: an Article 3 definition or a glossary entry."""
    minimum = RULES["terms"]["min_length"]
    out: dict[str, str] = {}
    for chunk in chunks:
        term = chunk.meta.get("term") or (chunk.section.removeprefix("Glossary: ")
                                          if chunk.section.startswith("Glossary: ") else None)
        if term and len(term) >= minimum:
            out.setdefault(term.lower(), node_id(chunk.source, chunk.section))
    return out


def _add_term_uses(graph: Graph, chunks: list[Chunk]) -> None:
    terms = defined_terms(chunks)
    if not terms:
        return
    longest_first = sorted(terms, key=len, reverse=True)
    pattern = re.compile(r"\b(" + "|".join(re.escape(t) for t in longest_first) + ")" + RULES["terms"]["plural"] + r"\b",
                         re.IGNORECASE)
    for chunk in chunks:
        nid = node_id(chunk.source, chunk.section)
        for m in pattern.finditer(chunk.text):
            graph.add_edge(nid, terms[m.group(1).lower()], "uses_term")


# -- axe rules --------------------------------------------------------------------------------

def _add_axe_rules(graph: Graph, rule_criteria: Mapping[str, list[str]]) -> None:
    for rule, criteria in sorted(rule_criteria.items()):
        present = [c for c in criteria if node_id("wcag22", c) in graph.nodes]
        if not present:
            continue
        graph.add_node(node_id("axe", rule), "axe_rule")
        for criterion in present:
            graph.add_edge(node_id("wcag22", criterion), node_id("axe", rule), "tested_by")


def _axe_rule_criteria() -> dict[str, list[str]]:
    from groundchat.benchmark import axe_rules

    return {rule: [c.number for c in axe_rules.explain(rule).criteria] for rule in axe_rules.rule_ids()}


GraphBuilder = Callable[[Iterable[Chunk]], Graph]

__all__ = ["GraphBuilder", "build_graph", "store_graph", "defined_terms", "references_in"]
