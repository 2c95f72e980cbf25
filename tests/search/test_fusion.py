import pytest

from groundchat.corpus.chunk import make_chunk
from groundchat.search.fusion import fuse
from groundchat.search.types import LegHit


def _hit(name: str, score: float = 0.0) -> LegHit:
    return LegHit(make_chunk(source="docs", section=name, title=name, text=name, url="u"), score)


def _order(fused: list[LegHit]) -> list[str]:
    return [h.chunk.section for h in fused]


def test_with_no_share_for_scores_it_is_reciprocal_rank_fusion_with_k_60():
    a, b, c = _hit("a"), _hit("b"), _hit("c")
    fused = fuse({"bm25": [a, b], "vector": [b, c]}, score_share=0.0)
    assert _order(fused) == ["b", "a", "c"]
    # (k + 1) / (k + rank): 1 for a first place, so each score is reciprocal rank's times 61.
    assert fused[0].score == pytest.approx(61 / 62 + 61 / 61)
    assert fused[1].score == pytest.approx(1.0)
    assert fused[2].score == pytest.approx(61 / 62)


def test_weights_scale_each_leg():
    a, b = _hit("a", 3.0), _hit("b", 0.9)
    fused = fuse({"bm25": [a], "vector": [b]}, weights={"bm25": 0.5, "vector": 1.0})
    assert _order(fused) == ["b", "a"]
    assert fused[1].score == pytest.approx(0.5)  # alone in its leg: its best score and first place


def test_a_passage_one_leg_finds_far_ahead_is_not_buried_by_passages_both_find_low():
    # BM25: one article matches the question's words far better than anything else, and the vector
    # leg does not have it. Every other passage is in both lists: x near the top of the vector leg
    # and the bottom of BM25's, y the other way round.
    article = _hit("Article 25")
    x = [_hit(f"x{i}") for i in range(1, 5)]
    y = [_hit(f"y{i}") for i in range(1, 5)]
    bm25 = [LegHit(article.chunk, 10.0), *[LegHit(h.chunk, 3.0 - i / 10) for i, h in enumerate(y)],
            *[LegHit(h.chunk, 2.0 - i / 10) for i, h in enumerate(x)]]
    vector = [*[LegHit(h.chunk, 0.50 - i / 100) for i, h in enumerate(x)],
              *[LegHit(h.chunk, 0.30 - i / 100) for i, h in enumerate(y)]]
    # Reciprocal rank alone: being in both lists anywhere outweighs being first by far in one.
    assert _order(fuse({"bm25": bm25, "vector": vector}, score_share=0.0))[-1] == "Article 25"
    # With the scores: above every passage both legs rank low; the vector leg's firsts stay ahead.
    assert _order(fuse({"bm25": bm25, "vector": vector})) == ["x1", "x2", "x3", "x4", "Article 25", "y1", "y2", "y3", "y4"]


def test_scores_are_compared_within_a_leg_only():
    # BM25 scores in the tens and cosines below 1 weigh the same once normalised: the two firsts tie,
    # and shifting or scaling one leg's scores (another backend's scoring) changes nothing.
    fused = fuse({"bm25": [_hit("a", 42.0), _hit("a2", 2.0)], "vector": [_hit("b", 0.8), _hit("b2", 0.1)]})
    assert fused[0].score == pytest.approx(fused[1].score)
    assert {h.chunk.section for h in fused[:2]} == {"a", "b"}
    shifted = fuse({"bm25": [_hit("a", 42.0), _hit("a2", 2.0)], "vector": [_hit("b", 1.8), _hit("b2", 1.1)]})
    assert [h.score for h in shifted] == pytest.approx([h.score for h in fused])


def test_a_leg_with_one_hit_or_equal_scores_counts_them_as_its_best():
    fused = fuse({"bm25": [_hit("a", 5.0), _hit("b", 5.0)]})
    assert [h.score for h in fused] == pytest.approx([0.7 + 0.3, 0.7 + 0.3 * 61 / 62])
    assert fuse({"bm25": []}) == []
