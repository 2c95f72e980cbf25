"""The support score measured on labelled sentence–passage pairs (tests/eval/citation_support_*.jsonl).

Each pair is `{"id", "sentence", "label"}` with either `source` and `section` (a chunk of the
ingested corpus, read from the index at run time: no corpus text is kept with the pairs) or an
inline `passage` `{"source", "title", "text"}` shaped like one of the project's docs excerpts.
Labels: `supported`, or one of the three ways a citation fails to support a sentence
(`on_topic_not_supporting`, `unrelated`, `contradicts_figure`). "Weak" is the positive class: its
precision is how often a `weak` mark is deserved, its recall how many undeserved citations get one.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from groundchat.grounding.cited_sentences import cited_sentences
from groundchat.grounding.citation_support import (
    CitedPassage,
    SupportFeatures,
    SupportParams,
    SupportScorer,
    best_score,
    verdict_of,
)

LABELS = ("supported", "on_topic_not_supporting", "unrelated", "contradicts_figure")


class PairsError(ValueError):
    """A labelled file that cannot be read, or a pair whose passage is not in the index."""


@dataclass(frozen=True)
class LabelledPair:
    id: str
    sentence: str
    label: str
    source: str
    section: str | None
    inline: dict[str, Any] | None

    @property
    def should_be_weak(self) -> bool:
        return self.label != "supported"


def load_pairs(path: Path) -> list[LabelledPair]:
    out = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            pair = LabelledPair(str(row["id"]), row["sentence"], row["label"], row.get("source") or row["passage"]["source"],
                                row.get("section"), row.get("passage"))
        except (ValueError, KeyError, TypeError) as exc:
            raise PairsError(f"{path}:{number}: not a labelled pair ({type(exc).__name__}: {exc})") from None
        if pair.label not in LABELS or (pair.section is None) == (pair.inline is None):
            raise PairsError(f"{path}:{number}: needs a label in {LABELS} and either a section or a passage")
        out.append(pair)
    return out


def resolve_passages(pairs: Sequence[LabelledPair], get_section: Callable[[str, str], Any],
                     max_chars: int) -> list[CitedPassage]:
    """Each pair's passage as search_docs would return it: the chunk's text cut to the excerpt size."""
    out = []
    for pair in pairs:
        if pair.inline is not None:
            out.append(CitedPassage(f"inline:{pair.inline['title']}", pair.inline["title"], pair.inline["text"]))
            continue
        chunk = get_section(pair.source, pair.section)
        if chunk is None:
            raise PairsError(f"{pair.id}: {pair.source} {pair.section} is not in the index")
        text = chunk.text if len(chunk.text) <= max_chars else chunk.text[:max_chars].rstrip() + " …"
        out.append(CitedPassage(f"{pair.source}:{pair.section}", f"{chunk.title} {chunk.section}", text))
    return out


def pair_features(pairs: Sequence[LabelledPair], passages: Sequence[CitedPassage],
                  scorer: SupportScorer) -> list[list[SupportFeatures]]:
    """Features of each pair, the sentence read exactly as an answer citing the passage would be."""
    texts = [cited_sentences(f"{p.sentence} [{_fake_ref(passage.key)}]")[0].texts for p, passage in zip(pairs, passages)]
    return scorer.features(list(zip(texts, passages)))


def _fake_ref(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:8]


def weak_metrics(pairs: Sequence[LabelledPair], features: Sequence[Sequence[SupportFeatures]],
                 params: SupportParams) -> dict[str, Any]:
    flagged = [verdict_of(best_score(f, params), params) == "weak" for f in features]
    truth = [p.should_be_weak for p in pairs]
    hits = sum(1 for f, t in zip(flagged, truth) if f and t)
    precision = hits / sum(flagged) if any(flagged) else 0.0
    recall = hits / sum(truth) if any(truth) else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    by_label = {label: {"n": sum(1 for p in pairs if p.label == label),
                        "weak": sum(1 for p, f in zip(pairs, flagged) if p.label == label and f)} for label in LABELS}
    return {"pairs": len(pairs), "should_be_weak": sum(truth), "flagged_weak": sum(flagged),
            "precision": round(precision, 3), "recall": round(recall, 3), "f1": round(f1, 3), "by_label": by_label}


# How much recall weighs against precision in the calibration's F-beta.
BETA = 0.5


def tune(pairs: Sequence[LabelledPair], features: Sequence[Sequence[SupportFeatures]],
         beta: float = BETA) -> tuple[SupportParams, dict[str, Any]]:
    """The grid search run on the tune part. Each (cosine weight, absent-figure factor) is judged by
    the F-beta of `weak` (beta 0.5: precision counts twice as much as recall, since a false `weak`
    mark on a sound citation costs the reader's trust in every mark) averaged over the thresholds
    within ±0.02 of the one it picks, so the choice sits on a plateau rather than on a spike one pair
    wide; ties go to the higher precision, then to the milder figure penalty."""
    import numpy as np

    truth = np.array([p.should_be_weak for p in pairs])
    thresholds = np.round(np.arange(0.20, 0.8001, 0.01), 2)
    best: tuple[tuple[float, float], SupportParams] | None = None
    for w in _steps(0.0, 1.0, 0.05):
        for absent in sorted(_steps(0.2, 1.0, 0.05), reverse=True):  # on a tie, the milder penalty
            params = SupportParams(w, absent, 0.0)
            scores = np.array([best_score(f, params) for f in features])
            flagged = scores[None, :] < thresholds[:, None]  # one row per threshold
            hits = (flagged & truth).sum(axis=1)
            precision = np.divide(hits, flagged.sum(axis=1), out=np.zeros(len(thresholds)), where=flagged.sum(axis=1) > 0)
            recall = hits / max(1, truth.sum())
            b2 = beta * beta
            f_beta = np.divide((1 + b2) * precision * recall, b2 * precision + recall, out=np.zeros(len(thresholds)),
                               where=b2 * precision + recall > 0)
            smooth = np.convolve(f_beta, np.ones(5) / 5, mode="same")
            for i in range(2, len(thresholds) - 2):
                key = (round(float(smooth[i]), 6), round(float(precision[i]), 6))
                if best is None or key > best[0]:
                    best = (key, SupportParams(w, absent, float(thresholds[i])))
    assert best is not None
    return best[1], weak_metrics(pairs, features, best[1])


def _steps(start: float, stop: float, step: float) -> Iterable[float]:
    n = round((stop - start) / step)
    return (round(start + i * step, 4) for i in range(n + 1))


def misjudged(pairs: Sequence[LabelledPair], features: Sequence[Sequence[SupportFeatures]],
              params: SupportParams) -> list[dict[str, Any]]:
    """The pairs the verdict gets wrong, with their signals: the failure cases."""
    out = []
    for pair, candidates in zip(pairs, features):
        score = best_score(candidates, params)
        if (verdict_of(score, params) == "weak") != pair.should_be_weak:
            top = max(candidates, key=lambda f: best_score([f], params))
            out.append({"id": pair.id, "label": pair.label, "score": score, "cosine": round(top.cosine, 3),
                        "overlap": round(top.overlap, 3), "figures": top.figures, "sentence": pair.sentence,
                        "passage": f"{pair.source} {pair.section}" if pair.section else f"inline {pair.inline['title']}"})
    return out
