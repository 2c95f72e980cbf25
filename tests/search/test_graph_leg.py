"""The graph leg: seeds → the entities they resolve to → one hop → passages hydrated, and what the
search service makes of it (its counters, the switches that narrow a search)."""
from __future__ import annotations

from typing import Iterable

import numpy as np
import pytest

from groundchat.corpus.chunk import Chunk
from groundchat.search.embeddings import QueryVector
from groundchat.search.graph_build import build_graph
from groundchat.search.graph_leg import GRAPH_LEG, graph_leg
from groundchat.search.service import SearchService
from groundchat.search.types import LegHit, LegSwitches
from tests.search.test_graph_build import ACT

BY_SECTION = {c.section: c for c in ACT}
GRAPH = build_graph(ACT, rule_criteria={})


def hit(section: str, score: float) -> LegHit:
    return LegHit(BY_SECTION[section], score)


class Hydration:
    """The index's chunks by id, counting what the leg asks for."""

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def __call__(self, ids: list[str]) -> list[Chunk]:
        self.asked.append(list(ids))
        return [c for c in ACT if c.id in ids]


def test_a_definition_seed_reaches_the_duties_that_use_its_term_and_reads_them_from_the_index():
    hydrate = Hydration()
    seeds = [hit("Article 3(5)", 1.0)]
    result = graph_leg(GRAPH, seeds, seeds, hydrate, ["eaa"], seed_weight=0.0)
    found = [h.chunk.section for h in result.hits]
    # Article 7's paragraphs use "manufacturer"; Article 9(1) and Article 3(6) refer to point (5).
    assert {"Article 7(1)", "Article 7(2)", "Article 9(1)", "Article 3(6)", "Recital 41"} <= set(found)
    assert "Article 3(5)" not in found  # a seed is not its own evidence
    # A reference is worth more than a use of the term: 9(1) names point (5) of Article 3 and uses "importer".
    assert found.index("Article 9(1)") < found.index("Recital 41")
    assert result.seeds == 1 and result.entities == 2  # the definition and its article
    assert result.expansion_hits >= len(found)
    # None of them was among the candidates, so all were read by id in one call.
    assert len(hydrate.asked) == 1 and result.read == result.hydrated == len(found)


def test_candidates_are_not_read_again_and_sources_outside_the_search_are_left_out():
    hydrate = Hydration()
    seeds = [hit("Article 7(2)", 1.0)]
    candidates = [*seeds, hit("Annex IV, point 1", 0.3)]
    result = graph_leg(GRAPH, seeds, candidates, hydrate, ["eaa"])
    found = [h.chunk.section for h in result.hits]
    # Annex IV is a whole: its point is reached through it; it was a candidate, so not read.
    assert "Annex IV, point 1" in found
    assert BY_SECTION["Annex IV, point 1"].id not in {cid for ids in hydrate.asked for cid in ids}
    assert graph_leg(GRAPH, seeds, candidates, hydrate, ["wcag22"]).hits == []
    # With its seed weight a seed keeps its place in the leg, ahead of what it reaches.
    kept = graph_leg(GRAPH, seeds, candidates, hydrate, ["eaa"], seed_weight=2.0)
    assert kept.hits[0].chunk.section == "Article 7(2)"


def test_a_seed_the_graph_does_not_know_gives_no_hits():
    from groundchat.corpus.chunk import make_chunk

    stranger = LegHit(make_chunk(source="docs", section="a.md > A", title="A", text="t", url="u"), 1.0)
    result = graph_leg(GRAPH, [stranger], [stranger], Hydration(), ["eaa", "docs"])
    assert result.hits == [] and result.seeds == 0


class _Backend:
    """Fixed legs, the small graph, and hydration from the small texts."""

    name = "fixed"

    def __init__(self, bm25: list[LegHit], vector: list[LegHit], graph=GRAPH) -> None:
        self._legs = {"bm25": bm25, "vector": vector}
        self._graph = graph
        self.wanted: list[set[str]] = []

    def legs(self, query: str, vector: QueryVector | None, k: int, sources: list[str] | None,
             want: Iterable[str]) -> dict[str, list[LegHit]]:
        self.wanted.append(set(want))
        return {name: hits for name, hits in self._legs.items() if name in want}

    def get_section(self, source: str, section: str) -> Chunk | None:
        return None

    def graph(self):
        return self._graph

    def chunks_by_id(self, ids: list[str]) -> list[Chunk]:
        return [c for c in ACT if c.id in ids]


class _Embedder:
    model_id = "fixed"
    dimension = 2

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), 2), dtype=np.float32)

    def embed_query(self, text: str) -> QueryVector:
        self.calls += 1
        return QueryVector(self.model_id, np.ones(2, dtype=np.float32))


def _legs():
    bm25 = [hit("Article 3(5)", 9.0), hit("Annex I Section II, point (a)", 2.0)]
    vector = [hit("Article 3(5)", 0.8), hit("Annex I Section II, point (a)", 0.5)]
    return bm25, vector


def test_the_service_fuses_the_leg_and_counts_it_in_the_debug_record():
    backend = _Backend(*_legs())
    result = SearchService(backend, _Embedder(), max_excerpts=8).search("who counts as the maker?", k=8)
    debug = result.debug
    assert debug["graph_enabled"] is True
    assert debug["graph_seeds"] == 2 and debug["graph_entities"] == 4
    assert debug["graph_hydrated"] == debug["legs"][GRAPH_LEG]["hits"] > 0
    assert debug["graph_expansion_hits"] >= debug["graph_hydrated"]
    assert "graph" in debug["timings_ms"] and debug["legs_ran"] == ["bm25", GRAPH_LEG, "vector"]
    served = [p.section for p in result.passages]
    # The duties that name the manufacturer come in though no other leg found them.
    assert served[0] == "Article 3(5)" and "Article 7(1)" in served and "Article 9(1)" in served


def test_include_graph_false_is_the_same_search_without_the_leg():
    backend = _Backend(*_legs())
    service = SearchService(backend, _Embedder(), max_excerpts=8)
    result = service.search("who counts as the maker?", k=8, include_graph=False)
    assert result.debug["graph_enabled"] is False and GRAPH_LEG not in result.debug["legs"]
    assert [p.section for p in result.passages] == ["Article 3(5)", "Annex I Section II, point (a)"]
    assert result.debug["switches"] == {"include_vector": True, "include_sparse": True, "include_graph": False}


def test_an_index_without_a_graph_searches_as_before_and_says_why():
    backend = _Backend(*_legs(), graph=None)
    result = SearchService(backend, _Embedder()).search("who counts as the maker?")
    assert result.debug["graph_enabled"] is False and result.debug["graph_error"] == "no_graph"
    assert [p.section for p in result.passages] == ["Article 3(5)", "Annex I Section II, point (a)"]


def test_the_switches_narrow_the_legs_asked_for_and_the_embedding():
    backend, embedder = _Backend(*_legs()), _Embedder()
    service = SearchService(backend, embedder)
    sparse_only = service.search("maker", include_vector=False)
    assert backend.wanted[-1] == {"bm25"} and embedder.calls == 0
    assert "vector" not in sparse_only.debug["legs_ran"] and "bm25" in sparse_only.debug["legs_ran"]
    service.search("maker", include_sparse=False)
    assert backend.wanted[-1] == {"vector", "question_rows"} and embedder.calls == 1
    # The graph leg belongs to hybrid: one leg asked for alone runs alone.
    alone = service.search("maker", leg="bm25")
    assert alone.debug["legs_ran"] == ["bm25"] and alone.debug["graph_enabled"] is False


def test_switching_off_every_leg_that_can_seed_is_a_clear_error():
    service = SearchService(_Backend(*_legs()), _Embedder())
    with pytest.raises(ValueError, match="both were switched off"):
        service.search("maker", include_vector=False, include_sparse=False)
    with pytest.raises(ValueError, match="switched off"):
        service.search("maker", leg="vector", include_vector=False)
    with pytest.raises(Exception):
        LegSwitches(include_grpah=False)  # a misspelt switch is refused, not ignored
