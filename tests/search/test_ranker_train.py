"""How the ranking step learns: labels from the gold, the threshold from out-of-fold margins, and a
model file that says which sets it learned from (the read sets, never a never-read one)."""
from __future__ import annotations

import hashlib
import json

import pytest

from groundchat.corpus.chunk import make_chunk
from groundchat.search.learned_rank import MODEL_FILE, LearnedRanker
from groundchat.search.types import LegHit
from groundchat_cli.ranker_train import EVAL, READ_SETS, choose_threshold, label
from groundchat_cli.retrieval_eval import Question


def _hit(section: str, source: str = "eaa") -> LegHit:
    return LegHit(make_chunk(source=source, section=section, title=section, text=section, url="https://example.org"), 1.0)


def test_the_right_paragraph_outranks_its_article_which_outranks_the_rest():
    q = Question(q="are tiny shops exempt", source="eaa", gold=["Article 4"], gold_paragraph=["Article 4(5)"])
    assert [label(_hit(s), q) for s in ("Article 4(5)", "Article 4(6)", "Article 14(4)")] == [2, 1, 0]
    assert label(_hit("4.1.2", source="wcag22"), q) == 0
    wcag = Question(q="focus outline", source="wcag22", gold=["2.4.7"])
    assert [label(_hit("2.4.7", source="wcag22"), wcag), label(_hit("2.4.11", source="wcag22"), wcag)] == [1, 0]


def test_the_threshold_is_the_margin_that_best_tells_a_wrong_first_passage():
    # Wrong first passages have small margins; one right answer is small too. Under 0.9 every wrong
    # one is caught but a right one is called weak; under 0.25, two of three and no right one:
    # precision weighs more (F0.5).
    margins = [(0.1, False), (0.2, False), (0.25, True), (0.3, False), (0.9, True), (1.2, True), (2.0, True)]
    best = choose_threshold(margins)
    assert best["threshold"] == 0.25 and best["precision"] == 1.0 and best["recall"] == 0.667
    assert choose_threshold([(1.0, True), (2.0, True)])["threshold"] == 0.0  # nothing to catch: never weak


def test_the_packaged_model_learned_from_the_read_sets_as_they_are_now():
    if not MODEL_FILE.exists():
        pytest.skip("no ranker packaged")
    model = json.loads(MODEL_FILE.read_text(encoding="utf-8"))
    assert sorted(model["trained_on"]) == sorted(f"users_words_{n}.jsonl" for n in READ_SETS)
    for name, digest in model["trained_on"].items():
        # A read set changed since: `groundchat eval ranker` rebuilds the model from it.
        assert hashlib.sha256((EVAL / name).read_bytes()).hexdigest() == digest, name
    ranker = LearnedRanker(model)
    assert ranker.trees and ranker.threshold >= 0
