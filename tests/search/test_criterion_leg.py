"""For a question about WCAG, a criterion that matches over its passages beats one lucky passage."""
from __future__ import annotations

from typing import Iterable

import numpy as np

from groundchat.corpus.chunk import Chunk, make_chunk
from groundchat.search.criterion_leg import CRITERION_LEG, criterion_leg, criterion_leg_applies
from groundchat.search.embeddings import QueryVector
from groundchat.search.service import SearchService
from groundchat.search.types import LegHit


def hit(source: str, section: str, score: float) -> LegHit:
    return LegHit(make_chunk(source=source, section=section, title=section, text=f"text of {section}", url="u"), score)


def sections(hits: list[LegHit]) -> list[str]:
    return [h.chunk.section for h in hits]


def test_two_good_passages_of_a_criterion_beat_one_better_passage_of_another():
    vector = [hit("wcag22", "Understanding 2.4.13 Examples", 0.70), hit("wcag22", "Understanding 2.4.7 Examples", 0.66),
              hit("wcag22", "2.4.7", 0.65), hit("wcag22", "2.4.13", 0.40), hit("wcag22", "1.4.3", 0.30)]
    leg = criterion_leg(vector)
    assert sections(leg) == ["Understanding 2.4.7 Examples", "2.4.7", "Understanding 2.4.13 Examples", "2.4.13", "1.4.3"]
    # Each passage carries its criterion's score: the mean of its two best.
    assert [round(h.score, 3) for h in leg] == [0.655, 0.655, 0.55, 0.55, 0.30]


def test_a_lone_passage_counts_its_missing_sibling_at_the_legs_cut_off():
    vector = [hit("wcag22", "1.1.1", 0.9), hit("wcag22", "Understanding 1.4.9", 0.8), hit("wcag22", "1.4.9", 0.8),
              hit("wcag22", "3.1.5", 0.2)]
    leg = criterion_leg(vector)
    # 1.1.1 alone: (0.9 + 0.2) / 2 = 0.55 < 1.4.9's 0.8.
    assert sections(leg)[:3] == ["Understanding 1.4.9", "1.4.9", "1.1.1"]
    assert round(leg[2].score, 3) == 0.55


def test_only_wcag_passages_are_grouped_and_at_most_two_per_criterion():
    vector = [hit("eaa", "Article 19(1)", 0.9), hit("wcag22", "Understanding 1.4.3 Benefits", 0.8),
              hit("wcag22", "Understanding 1.4.3", 0.7), hit("wcag22", "1.4.3", 0.6), hit("docs", "Context levels", 0.5)]
    assert sections(criterion_leg(vector)) == ["Understanding 1.4.3 Benefits", "Understanding 1.4.3"]
    assert criterion_leg([]) == []


def test_it_applies_only_when_the_fused_list_leads_with_wcag():
    assert criterion_leg_applies([hit("wcag22", "1.4.3", 1), hit("eaa", "Article 2(1)", 0.5)])
    assert not criterion_leg_applies([hit("eaa", "Article 2(1)", 1), hit("wcag22", "1.4.3", 0.5)])
    assert not criterion_leg_applies([])


class _Legs:
    """A backend that returns fixed legs, to see what the service makes of them."""

    name = "fixed"

    def __init__(self, bm25: list[LegHit], vector: list[LegHit]) -> None:
        self._legs = {"bm25": bm25, "vector": vector}

    def legs(self, query: str, vector: QueryVector | None, k: int, sources: list[str] | None,
             want: Iterable[str]) -> dict[str, list[LegHit]]:
        return {name: hits for name, hits in self._legs.items() if name in want}

    def get_section(self, source: str, section: str) -> Chunk | None:
        return None


class _Embedder:
    model_id = "fixed"
    dimension = 2

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), 2), dtype=np.float32)

    def embed_query(self, text: str) -> QueryVector:
        return QueryVector(self.model_id, np.ones(2, dtype=np.float32))


def _service(bm25: list[LegHit], vector: list[LegHit]) -> SearchService:
    return SearchService(_Legs(bm25, vector), _Embedder(), max_excerpts=5)  # type: ignore[arg-type]


def test_the_service_moves_the_criterion_that_matches_as_a_whole_up(monkeypatch):
    ex13, ex7, sc7, sc13 = (hit("wcag22", s, 0) for s in (
        "Understanding 2.4.13 Examples", "Understanding 2.4.7 Examples", "2.4.7", "2.4.13"))
    # Two legs nearly tied between the examples of 2.4.13 and of 2.4.7; 2.4.7 matches better as a whole.
    bm25 = [sc13, ex7, ex13, sc7]
    vector = [LegHit(ex13.chunk, 0.70), LegHit(ex7.chunk, 0.66), LegHit(sc7.chunk, 0.65), LegHit(sc13.chunk, 0.40)]
    result = _service(bm25, vector).search("our focus ring was removed", k=4)
    # 2.4.7 now leads; its second passage follows the first of each other criterion (search/diversity.py).
    assert [p.section for p in result.passages] == ["Understanding 2.4.7 Examples", "Understanding 2.4.13 Examples", "2.4.7", "2.4.13"]
    assert CRITERION_LEG in result.debug.record()["legs"]
    # Without the leg the same two legs put 2.4.13 first.
    monkeypatch.setattr("groundchat.search.criterion_leg.criterion_leg_applies", lambda fused: False)
    without = _service(bm25, vector).search("our focus ring was removed", k=4)
    assert [p.section for p in without.passages][:2] == ["Understanding 2.4.13 Examples", "Understanding 2.4.7 Examples"]
    monkeypatch.undo()
    # The vector leg alone keeps its own order: the leg belongs to hybrid.
    alone = _service(bm25, vector).search("our focus ring was removed", k=4, leg="vector")
    assert [p.section for p in alone.passages][0] == "Understanding 2.4.13 Examples"
    assert CRITERION_LEG not in alone.debug.record()["legs"]


def test_a_question_on_the_act_gets_no_criterion_leg():
    art, sc = hit("eaa", "Article 4(1)", 0), hit("wcag22", "1.4.3", 0)
    result = _service([art, sc], [LegHit(art.chunk, 0.8), LegHit(sc.chunk, 0.7)]).search("what must shops do", k=2)
    assert CRITERION_LEG not in result.debug.record()["legs"]
    assert [p.section for p in result.passages] == ["Article 4(1)", "1.4.3"]
