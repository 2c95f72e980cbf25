"""The learned ranking step: LightGBM's trees read as data without LightGBM, the order they give,
the passages a question names kept first, and the search's word that its best match is weak."""
from __future__ import annotations

import numpy as np
import pytest

from groundchat.corpus.chunk import make_chunk
from groundchat.search.learned_rank import LearnedRanker, RankerFileError, flatten
from groundchat.search.rank_features import FEATURES, Evidence, feature_rows, kind_of
from groundchat.search.service import SearchService
from groundchat.search.types import LegHit
from tests.search.test_graph_leg import _Backend, _Embedder, _legs


def _hit(section: str, score: float, source: str = "eaa", **meta) -> LegHit:
    return LegHit(make_chunk(source=source, section=section, title=section, text=f"text of {section}",
                             url="https://example.org", meta=meta or None), score)


def _model(trees, threshold=0.5, enabled=True) -> dict:
    return {"features": list(FEATURES), "trees": trees, "threshold": threshold, "enabled": enabled}


# Prefers a candidate the question bank matched (bank_own > 0.5), then an earlier fused rank.
BANK, RANK = FEATURES.index("bank_own"), FEATURES.index("fused_rank")
TREE = flatten({"split_feature": BANK, "threshold": 0.5, "decision_type": "<=",
                "left_child": {"split_feature": RANK, "threshold": 1.5, "decision_type": "<=",
                               "left_child": {"leaf_value": 0.3}, "right_child": {"leaf_value": 0.0}},
                "right_child": {"leaf_value": 1.0}})


def test_a_dumped_tree_is_walked_as_lightgbm_would():
    ranker = LearnedRanker(_model([TREE, flatten({"leaf_value": 0.25})]))
    rows = np.zeros((3, len(FEATURES)))
    rows[:, RANK] = [1, 2, 3]
    rows[2, BANK] = 0.9
    assert list(ranker.scores(rows)) == pytest.approx([0.55, 0.25, 1.25])


def test_the_walk_matches_lightgbm_on_a_model_it_trained():
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(3)
    x = rng.normal(size=(400, len(FEATURES)))
    y = (x[:, 0] + x[:, 5] > 0).astype(int) + (x[:, 3] > 1).astype(int)
    booster = lgb.train({"objective": "lambdarank", "num_leaves": 7, "min_data_in_leaf": 5, "verbose": -1},
                        lgb.Dataset(x, label=y, group=[20] * 20), num_boost_round=20)
    ranker = LearnedRanker(_model([flatten(t["tree_structure"]) for t in booster.dump_model()["tree_info"]]))
    assert np.allclose(ranker.scores(x), booster.predict(x))


def test_a_model_of_other_features_is_refused():
    with pytest.raises(RankerFileError, match="other features"):
        LearnedRanker({"features": ["fused_rank"], "trees": [], "threshold": 0})
    with pytest.raises(RankerFileError, match="unsupported split"):
        flatten({"split_feature": 0, "threshold": 1, "decision_type": "==", "left_child": {}, "right_child": {}})


def test_the_features_say_what_kind_of_passage_each_candidate_is_and_where_each_leg_put_it():
    paragraph, article, definition = _hit("Article 4(5)", 0.9), _hit("Article 4", 0.8), _hit("Article 3(23)", 0.7)
    criterion = _hit("1.4.3", 0.6, source="wcag22", kind="success-criterion", level="AA")
    assert [kind_of(h) for h in (paragraph, article, definition, criterion)] == [
        "eaa_paragraph", "eaa_article", "eaa_definition", "wcag_criterion"]
    evidence = Evidence(legs={"bm25": [article, paragraph], "vector": [paragraph]}, parts={"Article 4(5)": 0.8},
                        named_source="eaa")
    rows = feature_rows("are small shops exempt", [paragraph, article, definition, criterion], evidence)
    f = {name: [row[i] for row in rows] for i, name in enumerate(FEATURES)}
    assert f["fused_rank"] == [1, 2, 3, 4] and f["bm25_rank"][:3] == [2, 1, 60] and f["vector_rank"][0] == 1
    assert f["legs_found"] == [2, 1, 0, 0] and f["bank_own"] == [0.8, 0, 0, 0] and f["bank_part"][1] == 0
    assert f["same_article"][:2] == [1, 1] and f["level"][3] == 2 and f["named_source"] == [1, 1, 1, -1]


def test_the_step_reorders_under_the_named_passages_and_says_when_its_best_match_is_weak():
    named, first, banked = _hit("Article 31", 3.0), _hit("Article 2(1)", 1.0), _hit("Article 4(5)", 0.9)
    ranker = LearnedRanker(_model([TREE], threshold=0.5))
    evidence = Evidence(legs={}, parts={"Article 4(5)": 0.9})
    ranked = ranker.rank("q", [first, banked], evidence)
    assert [h.chunk.section for h in ranked.hits] == ["Article 4(5)", "Article 2(1)"]
    assert ranked.confidence == pytest.approx(0.7) and ranked.weak is False
    # Without the bank's word the two are near: the first passage is weak.
    close = ranker.rank("q", [first, banked], Evidence(legs={}))
    assert close.confidence == pytest.approx(0.3) and close.weak is True
    # A passage the question names by number keeps its lead, and is never weak.
    led = ranker.rank("q", [named, first, banked], evidence, keep_first=1)
    assert [h.chunk.section for h in led.hits] == ["Article 31", "Article 4(5)", "Article 2(1)"] and led.weak is False


class _Weak:
    threshold = 9.0

    def rank(self, query, fused, evidence, keep_first=0):
        from groundchat.search.learned_rank import Ranking

        self.evidence = evidence
        return Ranking(list(reversed(fused)), 0.1, True)


def test_the_search_runs_the_step_on_hybrid_searches_only_and_reports_it():
    ranker = _Weak()
    service = SearchService(_Backend(*_legs()), _Embedder(), ranker=ranker)
    plain = SearchService(_Backend(*_legs()), _Embedder(), ranker=None).search("who counts as the maker?", k=8)
    result = service.search("who counts as the maker?", k=8)
    assert result.best_match == "weak" and result.debug.record()["ranker"] == {"confidence": 0.1, "threshold": 9.0, "best_match": "weak"}
    assert {p.section for p in result.passages} == {p.section for p in plain.passages}
    assert plain.best_match is None and "ranker" not in plain.debug.record()
    assert "bm25" in ranker.evidence.legs
    assert service.search("maker", leg="bm25").best_match is None


def test_the_packaged_step_runs_only_when_switched_on_and_for_the_model_it_learned_with(monkeypatch):
    from groundchat.search import service as service_module

    model = {**_model([TREE]), "embedding_model": _Embedder().model_id}
    monkeypatch.setattr(service_module, "packaged_ranker", lambda: LearnedRanker(model))
    assert SearchService(_Backend(*_legs()), _Embedder()).ranker is not None
    monkeypatch.setattr(service_module, "packaged_ranker", lambda: LearnedRanker({**model, "embedding_model": "other"}))
    assert SearchService(_Backend(*_legs()), _Embedder()).ranker is None
    monkeypatch.setattr(service_module, "packaged_ranker", lambda: LearnedRanker({**model, "enabled": False}))
    assert SearchService(_Backend(*_legs()), _Embedder()).ranker is None
