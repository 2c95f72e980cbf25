"""The ranking step learned from the labelled questions: LightGBM's LambdaRank trees, read as data.

The trainer (cli/groundchat_cli/ranker_train.py, `groundchat eval retrieval --train-ranker`) learns
on the read sets only and writes search/ranker.json: the trees (LightGBM's own dump, flattened to
arrays), the features they split on (search/rank_features.py), the sha256 of the sets they learned
from, and the confidence threshold chosen on those sets. The search walks the trees here with
numpy, so the layer never imports LightGBM.

The step reorders the fusion's first `DEPTH` candidates (the passages a question names by number
keep the lead the exact path gave them). Its confidence is the margin of its first passage over the
second: below the threshold, the search says that its best match is weak.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from groundchat.search.rank_features import FEATURES, Evidence, feature_rows
from groundchat.search.types import LegHit

MODEL_FILE = Path(__file__).with_name("ranker.json")
# Candidates the step reorders: the fusion's first 30 hold the right passage for nearly every
# question the sets ask (the rest only matter when a leg is off).
DEPTH = 30


class RankerFileError(ValueError):
    """search/ranker.json is not a model this code can read."""


@dataclass(frozen=True)
class Tree:
    # Internal nodes 0..n-1: split feature, threshold, children; a child < 0 is leaf ~child.
    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaves: np.ndarray


@dataclass(frozen=True)
class Ranking:
    hits: list[LegHit]
    confidence: float
    weak: bool


class LearnedRanker:
    def __init__(self, model: dict) -> None:
        if tuple(model.get("features", ())) != FEATURES:
            raise RankerFileError("the ranker was trained on other features than search/rank_features.py computes: "
                                  "rebuild it (groundchat eval retrieval --train-ranker)")
        self.trees = [_tree(t) for t in model["trees"]]
        self.threshold = float(model["threshold"])
        self.trained_on = model.get("trained_on", {})
        self.enabled = bool(model.get("enabled", False))
        # Its features include the vector leg's scores: they mean something only for this model.
        self.embedding_model = model.get("embedding_model")

    def scores(self, rows: Sequence[Sequence[float]]) -> np.ndarray:
        x = np.asarray(rows, dtype=np.float64)
        total = np.zeros(len(x))
        everyone = np.arange(len(x))
        for tree in self.trees:
            if len(tree.feature) == 0:
                total += tree.leaves[0]
                continue
            node = np.zeros(len(x), dtype=np.int64)
            inner = node >= 0
            while inner.any():
                at = node[inner]
                go_left = x[everyone[inner], tree.feature[at]] <= tree.threshold[at]
                node[inner] = np.where(go_left, tree.left[at], tree.right[at])
                inner = node >= 0
            total += tree.leaves[~node]
        return total

    def rank(self, query: str, fused: list[LegHit], evidence: Evidence, keep_first: int = 0) -> Ranking:
        """`fused` with its first `DEPTH` after the `keep_first` named passages in the model's order."""
        head, pool, tail = fused[:keep_first], fused[keep_first: keep_first + DEPTH], fused[keep_first + DEPTH:]
        if not pool:
            return Ranking(fused, 0.0, not head)
        predicted = self.scores(feature_rows(query, pool, evidence))
        order = sorted(range(len(pool)), key=lambda i: (-predicted[i], i))
        ordered = sorted(predicted, reverse=True)
        confidence = float(ordered[0] - ordered[1]) if len(ordered) > 1 else float(ordered[0])
        return Ranking(head + [pool[i] for i in order] + tail, confidence, confidence < self.threshold and not head)


def _tree(data: dict) -> Tree:
    return Tree(np.asarray(data["feature"], dtype=np.int64), np.asarray(data["threshold"], dtype=np.float64),
                np.asarray(data["left"], dtype=np.int64), np.asarray(data["right"], dtype=np.int64),
                np.asarray(data["leaves"], dtype=np.float64))


def flatten(structure: dict) -> dict:
    """One tree of LightGBM's `dump_model()` as arrays: internal nodes numbered in the order met,
    a child that is a leaf written as ~(its leaf's number). Every split is `<=` on a number: the
    features are never missing and none is categorical."""
    feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    leaves: list[float] = []

    def visit(node: dict) -> int:
        if "leaf_value" in node:
            leaves.append(float(node["leaf_value"]))
            return ~(len(leaves) - 1)
        if node.get("decision_type", "<=") != "<=":
            raise RankerFileError(f"unsupported split {node.get('decision_type')!r}")
        at = len(feature)
        feature.append(int(node["split_feature"]))
        threshold.append(float(node["threshold"]))
        left.append(0)
        right.append(0)
        left[at] = visit(node["left_child"])
        right[at] = visit(node["right_child"])
        return at

    visit(structure)
    return {"feature": feature, "threshold": threshold, "left": left, "right": right, "leaves": leaves}


@lru_cache(maxsize=1)
def packaged_ranker() -> LearnedRanker | None:
    """The ranker shipped in search/ranker.json, or None when there is none."""
    if not MODEL_FILE.exists():
        return None
    return LearnedRanker(json.loads(MODEL_FILE.read_text(encoding="utf-8")))
