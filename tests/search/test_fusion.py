from groundchat.corpus.chunk import make_chunk
from groundchat.search.fusion import rrf
from groundchat.search.types import LegHit


def _hit(name: str) -> LegHit:
    return LegHit(make_chunk(source="docs", section=name, title=name, text=name, url="u"), 0.0)


def test_reciprocal_rank_fusion_with_k_60():
    a, b, c = _hit("a"), _hit("b"), _hit("c")
    fused = rrf({"bm25": [a, b], "vector": [b, c]})
    assert [h.chunk.section for h in fused] == ["b", "a", "c"]
    assert fused[0].score == 1 / 62 + 1 / 61
    assert fused[1].score == 1 / 61
    assert fused[2].score == 1 / 62


def test_weights_scale_each_leg():
    a, b = _hit("a"), _hit("b")
    fused = rrf({"bm25": [a], "vector": [b]}, weights={"bm25": 0.5, "vector": 1.0})
    assert [h.chunk.section for h in fused] == ["b", "a"]
    assert fused[1].score == 0.5 / 61
