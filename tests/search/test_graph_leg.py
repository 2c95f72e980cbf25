"""The graph leg: seeds → the entities they resolve to → one hop → the passages reached, scored
against the question and placed under their seed; and what the search service makes of it (its
counters, the setting, and the switches that narrow a search)."""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import numpy as np
import pytest

from groundchat.corpus.chunk import Chunk
from groundchat.search.embeddings import QueryVector
from groundchat.search.graph_build import build_graph
from groundchat.search.graph_leg import GRAPH_LEG, GraphLeg, graph_leg
from groundchat.search.service import SearchService
from groundchat.search.preferences import SearchPreferences
from groundchat.search.types import LegHit
from tests.search.test_graph_build import ACT

BY_SECTION = {c.section: c for c in ACT}
GRAPH = build_graph(ACT, rule_criteria={})


def hit(section: str, score: float) -> LegHit:
    return LegHit(BY_SECTION[section], score)


def served(result) -> list[str]:
    return [h.chunk.section for h in result.hits]


def test_a_definition_seed_puts_the_duty_that_uses_its_term_just_under_it():
    # The question found the definition first and Article 7 only third: its paragraphs use the term.
    fused = [hit("Article 3(5)", 3.0), hit("Annex I Section II, point (a)", 2.8), hit("Article 7(2)", 2.6),
             hit("Article 7(1)", 2.5)]
    result = graph_leg(GRAPH, fused, ["eaa"])
    # 7(2) is a seed (the first of its article): its place is the other legs' word. 7(1) is not, and
    # is placed under the definition, so Article 7 is served second.
    assert served(result) == ["Article 3(5)", "Article 7(1)", "Annex I Section II, point (a)", "Article 7(2)"]
    assert [h.chunk.section for h in result.inserted] == ["Article 7(1)"]
    # Between its leader and the passage that followed it: the leader keeps its score.
    assert result.hits[0].score == 3.0 and 2.8 < result.hits[1].score < 3.0
    assert result.seeds == 3 and result.entities == 2  # only the definition walks, with its article
    assert result.counters()["graph_inserted"] == 1 and result.hydrated == 1
    assert result.expansion_hits >= 5  # 7(1), 7(2), 9(1), 3(6), Annex IV's point, Recital 41 …


def test_what_no_other_leg_found_stays_out_and_weak_matches_are_not_placed():
    # Article 9(1) refers to point (5) of Article 3 but was not among the candidates: no score to trust.
    fused = [hit("Article 3(5)", 3.0), hit("Annex I Section II, point (a)", 2.8)]
    assert served(graph_leg(GRAPH, fused, ["eaa"])) == ["Article 3(5)", "Annex I Section II, point (a)"]
    # Found, but far below the first passage: the reference alone does not lift it.
    # (Two seeds, so that 9(1) is not one itself.)
    weak = [*fused, hit("Article 9(1)", 0.9)]
    assert graph_leg(GRAPH, weak, ["eaa"], seeds=2).inserted == []
    assert [h.chunk.section for h in graph_leg(GRAPH, weak, ["eaa"], seeds=2, min_relevance=0.2).inserted] == ["Article 9(1)"]
    # A search of WCAG alone takes nothing from the Act.
    assert graph_leg(GRAPH, [*fused, hit("Article 9(1)", 2.5)], ["wcag22"], seeds=2).inserted == []


def test_only_definitions_seed_and_no_passage_moves_down_but_under_an_insertion():
    # A paragraph first: its references (Annex IV) are what every question would reach.
    fused = [hit("Article 7(2)", 3.0), hit("Article 3(6)", 2.9), hit("Annex IV, point 1", 2.0), hit("Article 9(1)", 1.9)]
    result = graph_leg(GRAPH, fused, ["eaa"], seeds=2, min_relevance=0.0, min_evidence=0.0)
    # 3(6), the importer, is a definition: Article 9(1) uses "importers" and moves up under it; the
    # paragraph seed lends Annex IV nothing.
    assert served(result) == ["Article 7(2)", "Article 3(6)", "Article 9(1)", "Annex IV, point 1"]
    assert graph_leg(GRAPH, fused, ["eaa"], seeds=2, seed_kinds=frozenset(), min_relevance=0.0).hits == fused
    before = {h.chunk.id: h.score for h in fused}
    assert all(h.score >= before[h.chunk.id] for h in result.hits)


def test_a_seed_the_graph_does_not_know_gives_no_hits():
    from groundchat.corpus.chunk import make_chunk

    stranger = LegHit(make_chunk(source="docs", section="a.md > A", title="A", text="t", url="u"), 1.0)
    result = graph_leg(GRAPH, [stranger], ["eaa", "docs"])
    assert result.hits == [stranger] and result.seeds == 0 and result.inserted == []


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
    bm25 = [hit("Article 3(5)", 9.0), hit("Annex I Section II, point (a)", 6.0), hit("Article 7(2)", 5.5),
            hit("Article 7(1)", 5.0), hit("Recital 41", 1.0)]
    vector = [hit("Article 3(5)", 0.8), hit("Annex I Section II, point (a)", 0.7), hit("Article 7(2)", 0.67),
              hit("Article 7(1)", 0.65), hit("Recital 41", 0.1)]
    return bm25, vector


# Served: the first passage of each article or annex section, then the second ones (search/diversity.py).
WITHOUT = ["Article 3(5)", "Annex I Section II, point (a)", "Article 7(2)", "Recital 41", "Article 7(1)"]
WITH = ["Article 3(5)", "Article 7(1)", "Annex I Section II, point (a)", "Recital 41", "Article 7(2)"]


def test_include_graph_forces_the_leg_and_the_debug_record_counts_it():
    backend = _Backend(*_legs())
    result = SearchService(backend, _Embedder(), max_excerpts=8).search("who counts as the maker?", k=8, include_graph=True)
    debug = result.debug.record()
    assert debug["graph_enabled"] is True and debug["graph_default"] is False
    assert debug["graph_seeds"] == 4 and debug["graph_entities"] == 2 and debug["graph_inserted"] == 1
    assert debug["legs"][GRAPH_LEG] == {"hits": 1, "top": [BY_SECTION["Article 7(1)"].ref]}
    assert debug["graph_expansion_hits"] >= debug["graph_hydrated"] >= 1
    assert "graph" in debug["timings_ms"] and debug["legs_ran"] == ["bm25", GRAPH_LEG, "vector"]
    # The duty that uses the defined term comes right after the definition; nothing else moved up.
    assert [p.section for p in result.passages] == WITH


def test_the_graph_leg_is_one_module_and_one_line_of_the_pipeline():
    """Without its line in `LEGS` the graph's counters vanish from the debug record and the search
    serves what the graph-off search serves; no other module of the layer imports the leg."""
    from groundchat.search import pipeline

    assert [leg.name for leg in pipeline.LEGS].count(GRAPH_LEG) == 1
    assert Path(pipeline.__file__).read_text(encoding="utf-8").count("GraphLeg") == 2  # its import and its line
    importers = [p.name for p in Path(pipeline.__file__).parents[1].rglob("*.py")
                 if "import GraphLeg" in p.read_text(encoding="utf-8") or "graph_leg import" in p.read_text(encoding="utf-8")]
    assert importers == ["pipeline.py"]

    without = SearchService(_Backend(*_legs()), _Embedder(), max_excerpts=8)
    without.legs = tuple(leg for leg in without.legs if not isinstance(leg, GraphLeg))
    removed = without.search("who counts as the maker?", k=8, include_graph=True)
    off = SearchService(_Backend(*_legs()), _Embedder(), max_excerpts=8).search("who counts as the maker?", k=8,
                                                                                include_graph=False)
    record = removed.debug.record()
    assert not [key for key in record if key.startswith("graph_") and key not in ("graph_enabled", "graph_default")]
    assert record["graph_enabled"] is False and GRAPH_LEG not in record["legs"] and GRAPH_LEG not in record["legs_enabled"]
    assert [(p.ref, p.score) for p in removed.passages] == [(p.ref, p.score) for p in off.passages]
    assert [p.section for p in removed.passages] == WITHOUT


def test_the_setting_decides_when_the_search_is_not_told_and_include_graph_false_is_the_search_without_it():
    off_by_default = SearchService(_Backend(*_legs()), _Embedder(), max_excerpts=8)
    result = off_by_default.search("who counts as the maker?", k=8)
    assert result.debug.record()["graph_enabled"] is False and result.debug.record()["graph_default"] is False
    assert GRAPH_LEG not in result.debug.record()["legs"] and [p.section for p in result.passages] == WITHOUT
    assert result.debug.record()["switches"] == {"include_vector": True, "include_sparse": True, "include_graph": False}
    on_by_default = SearchService(_Backend(*_legs()), _Embedder(), max_excerpts=8, graph=True)
    assert [p.section for p in on_by_default.search("who counts as the maker?", k=8).passages] == WITH
    forced_off = on_by_default.search("who counts as the maker?", k=8, include_graph=False)
    assert forced_off.debug.record()["graph_enabled"] is False and [p.section for p in forced_off.passages] == WITHOUT


def test_the_setting_is_on_or_off_and_reaches_the_default_search(monkeypatch, tmp_path):
    from groundchat.config import Settings
    from groundchat.search import open_default_search

    with pytest.raises(ValueError, match="valid: on, off"):
        Settings(search_graph="yes")
    settings = Settings(search_graph="on", home=tmp_path, search_backend="embedded")
    monkeypatch.setattr("groundchat.search.embeddings.make_embedder", lambda *a, **k: _Embedder())
    assert open_default_search(settings).graph is True
    assert open_default_search(Settings(search_graph="off", home=tmp_path, search_backend="embedded")).graph is False
    # On by default: it was never below the search without it on the unread sets.
    assert Settings.model_fields["search_graph"].default == "on"


def test_an_index_without_a_graph_searches_as_before_and_says_why():
    backend = _Backend(*_legs(), graph=None)
    result = SearchService(backend, _Embedder()).search("who counts as the maker?", include_graph=True)
    assert result.debug.record()["graph_enabled"] is False and result.debug.record()["graph_error"] == "no_graph"
    assert [p.section for p in result.passages] == WITHOUT


def test_the_switches_narrow_the_legs_asked_for_and_the_embedding():
    backend, embedder = _Backend(*_legs()), _Embedder()
    service = SearchService(backend, embedder)
    sparse_only = service.search("maker", include_vector=False)
    assert backend.wanted[-1] == {"bm25"} and embedder.calls == 0
    assert "vector" not in sparse_only.debug.record()["legs_ran"] and "bm25" in sparse_only.debug.record()["legs_ran"]
    service.search("maker", include_sparse=False)
    assert backend.wanted[-1] == {"vector", "question_rows"} and embedder.calls == 1
    # The graph leg belongs to hybrid: one leg asked for alone runs alone.
    alone = service.search("maker", leg="bm25")
    assert alone.debug.record()["legs_ran"] == ["bm25"] and alone.debug.record()["graph_enabled"] is False


def test_switching_off_every_leg_that_can_seed_is_a_clear_error():
    service = SearchService(_Backend(*_legs()), _Embedder())
    with pytest.raises(ValueError, match="both were switched off"):
        service.search("maker", include_vector=False, include_sparse=False)
    with pytest.raises(ValueError, match="switched off"):
        service.search("maker", leg="vector", include_vector=False)
    with pytest.raises(Exception):
        SearchPreferences(include_grpah=False)  # a misspelt switch is refused, not ignored
