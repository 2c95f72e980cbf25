"""`groundchat eval ranker`: rebuild search/ranker.json, the learned ranking step, from the read sets.

The search runs each question of the read sets (tests/eval/README.md: tune, validate, second tune,
third, fourth) with the ranking step off and records its fused candidates with their features
(search/rank_features.py). Each candidate is labelled 2 when it is the one right paragraph, 1 when
it is of a right section (the article, for a paragraph question), else 0. LightGBM's LambdaRank
learns the order; five folds split by question give every question a score from a model that never
saw it, and on those the confidence threshold is chosen (the margin under which the first passage is
that best tells a wrong first passage, by F0.5 of "weak" against a miss at rank 1: saying "weak"
of a right answer costs the reader more than missing a wrong one). Then one model learns from
all of them and is written as data: its trees, the features, the sha256 of each set it learned
from, the threshold and the cross-validated figures. The never-read sets are never read here.
"""
from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from groundchat.search.learned_rank import DEPTH, MODEL_FILE, Ranking, flatten
from groundchat.search.rank_features import FEATURES, Evidence, feature_rows
from groundchat.search.service import SearchService
from groundchat.search.types import LegHit
from groundchat_cli.retrieval_eval import Question, load_questions
from groundchat_cli.gold_match import matches_gold

EVAL = Path(__file__).resolve().parents[2] / "tests" / "eval"
READ_SETS = ("tune", "validate", "second_tune", "third", "fourth")
PARAMS = {"objective": "lambdarank", "metric": "ndcg", "ndcg_eval_at": [1, 5], "learning_rate": 0.05,
          "num_leaves": 7, "min_data_in_leaf": 50, "feature_fraction": 0.9, "bagging_fraction": 0.9,
          "bagging_freq": 1, "lambdarank_truncation_level": 10, "verbose": -1, "seed": 7, "num_threads": 2}
ROUNDS = 100
FOLDS = 5


class _Recorder:
    """Stands in for the ranking step: keeps what the search would have ranked, changes nothing."""
    threshold = 0.0

    def __init__(self) -> None:
        self.last: tuple[list[LegHit], Evidence, int] | None = None

    def rank(self, query: str, fused: list[LegHit], evidence: Evidence, keep_first: int = 0) -> Ranking:
        self.last = (fused[keep_first: keep_first + DEPTH], evidence, keep_first)
        return Ranking(fused, 0.0, False)


def label(hit: LegHit, question: Question) -> int:
    if hit.chunk.source != question.source:
        return 0
    if question.gold_paragraph:
        return 2 if hit.chunk.section in question.gold_paragraph else int(matches_gold(hit.chunk.section, question.gold))
    return int(matches_gold(hit.chunk.section, question.gold))


def collect(service: SearchService, questions: list[Question]) -> list[dict[str, Any]]:
    """One group per question: its candidates' features and labels, and whether the exact path led."""
    recorder = _Recorder()
    previous, service.ranker = service.ranker, recorder
    groups = []
    try:
        for question in questions:
            recorder.last = None
            service.search(question.q)
            if recorder.last is None:
                continue
            pool, evidence, keep_first = recorder.last
            groups.append({"rows": feature_rows(question.q, pool, evidence), "labels": [label(h, question) for h in pool],
                           "led": keep_first > 0})
    finally:
        service.ranker = previous
    return groups


def _train(groups: list[dict[str, Any]], rounds: int = ROUNDS):
    import lightgbm as lgb  # a tool dependency ([test] extra): the layer reads the trees without it

    used = [g for g in groups if g["rows"]]
    data = lgb.Dataset(np.array([r for g in used for r in g["rows"]]), label=[y for g in used for y in g["labels"]],
                       group=[len(g["rows"]) for g in used], feature_name=list(FEATURES), free_raw_data=False)
    return lgb.train(PARAMS, data, num_boost_round=rounds)


def _figures(ranks: list[int]) -> dict[str, float]:
    n = len(ranks) or 1
    return {"n": len(ranks), "hit@1": round(sum(r == 1 for r in ranks) / n, 3),
            "hit@5": round(sum(0 < r <= 5 for r in ranks) / n, 3), "mrr": round(sum(1 / r for r in ranks if r) / n, 3)}


def _first_right(labels: list[int], order: list[int], want: int) -> int:
    return next((i + 1 for i, j in enumerate(order) if labels[j] >= want), 0)


def cross_validate(groups: list[dict[str, Any]]) -> dict[str, Any]:
    """Out-of-fold ranks and margins: the fusion's order against the model's, and the threshold."""
    fold_of = [int(hashlib.sha256(str(i).encode()).hexdigest()[:8], 16) % FOLDS for i in range(len(groups))]
    fused: list[int] = []
    learned: list[int] = []
    margins: list[tuple[float, bool]] = []
    for fold in range(FOLDS):
        model = _train([g for g, f in zip(groups, fold_of) if f != fold])
        for g, f in zip(groups, fold_of):
            if f != fold or not g["rows"]:
                continue
            predicted = model.predict(np.array(g["rows"]))
            order = sorted(range(len(predicted)), key=lambda i: (-predicted[i], i))
            want = 2 if 2 in g["labels"] else 1
            fused.append(_first_right(g["labels"], list(range(len(order))), want))
            learned.append(_first_right(g["labels"], order, want))
            top = sorted(predicted, reverse=True)
            if not g["led"]:
                margins.append((float(top[0] - top[1]) if len(top) > 1 else float(top[0]), learned[-1] == 1))
    return {"fusion": _figures(fused), "learned": _figures(learned), "threshold": choose_threshold(margins)}


def choose_threshold(margins: list[tuple[float, bool]]) -> dict[str, float]:
    """The margin under which "weak" best finds a wrong first passage (F0.5), with its precision and recall."""
    misses = sum(not right for _, right in margins) or 1
    best = {"threshold": 0.0, "f0.5": 0.0, "precision": 0.0, "recall": 0.0}
    for candidate in sorted({m for m, _ in margins}):
        weak = [right for m, right in margins if m < candidate]
        caught = sum(not right for right in weak)
        if not weak or not caught:
            continue
        precision, recall = caught / len(weak), caught / misses
        f05 = 1.25 * precision * recall / (0.25 * precision + recall)
        if f05 > best["f0.5"]:
            best = {"threshold": round(candidate, 6), "f0.5": round(f05, 3), "precision": round(precision, 3),
                    "recall": round(recall, 3)}
    return best


def build(service: SearchService, sets: tuple[str, ...] = READ_SETS, enabled: bool = False) -> dict[str, Any]:
    files = [EVAL / f"users_words_{name}.jsonl" for name in sets]
    groups = [g for path in files for g in collect(service, load_questions(path))]
    cv = cross_validate(groups)
    model = _train(groups)
    trees = [flatten(t["tree_structure"]) for t in model.dump_model()["tree_info"]]
    return {"features": list(FEATURES), "trees": trees, "threshold": cv["threshold"]["threshold"],
            "enabled": enabled, "trained_on": {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in files},
            "embedding_model": service.embedder.model_id, "params": {**PARAMS, "rounds": ROUNDS},
            "cross_validated": cv}


def add_eval_ranker_command(kinds: argparse._SubParsersAction) -> None:
    p = kinds.add_parser("ranker", help="rebuild search/ranker.json (the learned ranking step) from the read sets")
    p.add_argument("--index", type=Path, default=None, help="an embedded index file (default: the configured index)")
    p.add_argument("--enable", action="store_true", help="switch the step on (only once it beats the fusion "
                   "on the never-read sets: docs/engineering/retrieval-eval.md)")
    p.add_argument("--out", type=Path, default=MODEL_FILE)
    p.set_defaults(func=cmd_eval_ranker)


def cmd_eval_ranker(args: argparse.Namespace) -> int:
    from groundchat.config import get_settings
    from groundchat.search import open_default_search

    service = open_default_search(get_settings())
    if args.index is not None:
        from groundchat.search.embedded import EmbeddedIndex

        service = SearchService(EmbeddedIndex(args.index), service.embedder, ranker=None)
    model = build(service, enabled=args.enable)
    args.out.write_text(json.dumps(model, separators=(",", ":")) + "\n", encoding="utf-8")
    cv = model["cross_validated"]
    print(f"{len(model['trees'])} trees; cross-validated on the read sets: fusion {cv['fusion']}, learned {cv['learned']}; "
          f"weak under margin {cv['threshold']}; written to {args.out}")
    return 0
