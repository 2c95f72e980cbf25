"""Does the passage a ref points to support the sentence that cites it?

A verified ref proves where a passage came from, not that it says what the sentence says. The
support score, in [0, 1], combines three signals between the sentence and the cited passage:

- the cosine similarity of their local embeddings, the best over the passage's own sentences (so a
  claim about the last line of a long excerpt is not diluted by the rest);
- the share of the sentence's key terms the passage contains;
- the figures: a figure the passage contradicts (5:1 where it says 4.5:1, 2025 where it says
  2022) makes the support nil; a figure the passage does not have at all weakens it.

score = (w · cosine + (1 − w) · overlap) × figure factor, and the verdict is `supported` at or
above the threshold, `weak` below. w, the factor for an absent figure and the threshold were
calibrated on tests/eval/citation_support_tune.jsonl only; docs/engineering/citation-support.md has the method
and the precision and recall of `weak` on the held-out report part.

The embedding model is the local one the search uses (never Bedrock: a check must not cost money
per sentence), loaded on first use. Where it cannot load (the Lambda layer ships without it), the
check is skipped and says so on the answer (`SupportCheck.state == "unchecked"`, with the reason),
in a metric and once in the log: a missing model never fails an answer, and never passes for a
check that found nothing weak.
"""
from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Sequence

import numpy as np

from groundchat.grounding.cited_sentences import cited_sentences, clean
from groundchat.grounding.figure_agreement import Agreement, agreement
from groundchat.grounding.key_terms import key_terms, term_overlap
from groundchat.observability import record_count
from groundchat.search.embedding_models import LocalModel, thresholds_in_use
from groundchat.search.embeddings import EmbeddingError

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject
    from groundchat.search.embeddings import Embedder, LocalOnnxEmbedder

log = logging.getLogger("groundchat.grounding")

Verdict = Literal["supported", "weak"]


@dataclass(frozen=True)
class SupportParams:
    cosine_weight: float
    absent_factor: float
    threshold: float


def support_params(model: LocalModel | None = None) -> SupportParams:
    """The parameters of `model` (else the configured local model's): they sit on its cosine scale, so
    they live with it in search/embedding_models.json. Calibrated on the tune part only, by F0.5 of
    `weak` (`groundchat eval support --tune` prints the search); for MiniLM w 0.45, absent figure
    0.5, threshold 0.39."""
    t = model.thresholds if model is not None and model.thresholds is not None else thresholds_in_use()
    return SupportParams(cosine_weight=t.support_cosine_weight, absent_factor=t.support_absent_factor,
                         threshold=t.support_threshold)

_FIGURE_FACTOR = {"none": 1.0, "matched": 1.0, "contradicted": 0.0}
_MAX_WINDOWS = 40  # a passage's own sentences embedded at most (an excerpt is at most ~1,200 characters)
_WINDOW_SPLIT = re.compile(r"(?<=[.;:!?])\s+|\n+")


@dataclass(frozen=True)
class CitedPassage:
    """What a ref points to: the excerpt a tool returned (its title helps the key terms)."""

    key: str
    title: str
    text: str


@dataclass(frozen=True)
class SupportFeatures:
    cosine: float
    overlap: float
    figures: Agreement


def support_score(features: SupportFeatures, params: SupportParams | None = None) -> float:
    params = params or support_params()
    blended = params.cosine_weight * max(0.0, features.cosine) + (1 - params.cosine_weight) * features.overlap
    factor = params.absent_factor if features.figures == "absent" else _FIGURE_FACTOR[features.figures]
    return round(min(1.0, max(0.0, blended * factor)), 3)


def verdict_of(score: float, params: SupportParams | None = None) -> Verdict:
    params = params or support_params()
    return "supported" if score >= params.threshold else "weak"


class SupportScorer:
    """Features for many (sentence, passage) pairs with at most two embedding calls: the windows of
    the distinct passages not embedded before (a passage cited again, in this answer or a later one,
    is taken from a small cache), and every sentence text in one batch."""

    def __init__(self, embedder: Embedder | None = None) -> None:
        self._embedder = embedder

    @property
    def embedder(self) -> Embedder:
        return self._embedder if self._embedder is not None else local_embedder()

    def features(self, pairs: Sequence[tuple[Sequence[str], CitedPassage]]) -> list[list[SupportFeatures]]:
        """For each pair, the features of each of the sentence's texts."""
        if not pairs:
            return []
        embedder = self.embedder
        passages = {p.key: p for _, p in pairs}
        windows = {key: passage_windows(p) for key, p in passages.items()}
        window_vectors = _cached_embed(embedder, [w for ws in windows.values() for w in ws])
        texts = list(dict.fromkeys(t for sentence_texts, _ in pairs for t in sentence_texts))
        text_vectors = dict(zip(texts, embedder.embed(texts)))
        matrices = {key: np.stack([window_vectors[w] for w in ws]) for key, ws in windows.items()}
        terms = {key: key_terms(f"{p.title} {p.text}") for key, p in passages.items()}
        return [[SupportFeatures(float((matrices[passage.key] @ text_vectors[text]).max()),
                                 term_overlap(key_terms(text), terms[passage.key]), agreement(text, passage.text))
                 for text in sentence_texts]
                for sentence_texts, passage in pairs]


_CACHE_SIZE = 4096  # passage windows (~1.5 KB each): the passages people cite most stay embedded
_CACHE: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()  # (model id, window) -> its vector
_CACHE_LOCK = threading.Lock()


def _cached_embed(embedder: Embedder, windows: list[str]) -> dict[str, np.ndarray]:
    model = getattr(embedder, "model_id", type(embedder).__name__)
    with _CACHE_LOCK:
        found = {w: _CACHE[(model, w)] for w in windows if (model, w) in _CACHE}
    missing = [w for w in dict.fromkeys(windows) if w not in found]
    if missing:
        fresh = dict(zip(missing, embedder.embed(missing)))
        with _CACHE_LOCK:
            for w, vector in fresh.items():
                _CACHE[(model, w)] = vector
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
        found.update(fresh)
    with _CACHE_LOCK:
        for w in found:
            if (model, w) in _CACHE:
                _CACHE.move_to_end((model, w))
    return found


def clear_window_cache() -> None:
    """For measuring the cost of passages never cited before."""
    with _CACHE_LOCK:
        _CACHE.clear()


def best_score(candidates: Sequence[SupportFeatures], params: SupportParams | None = None) -> float:
    """A sentence is as supported as its best reading (the clause before the ref, or the whole)."""
    return max(support_score(f, params) for f in candidates)


def passage_windows(passage: CitedPassage) -> list[str]:
    """The passage's heading with its first line, then each of its sentences of some length. Not the
    passage whole: on the tune part it moved F1 by less than 0.01, and one 256-token text costs the
    model about as much as all of the passage's sentences together."""
    pieces = [clean(p) for p in _WINDOW_SPLIT.split(passage.text)]
    first = pieces[0] if pieces else ""
    windows = [f"{passage.title}. {first}" if passage.title else first]
    windows += [p for p in pieces if len(p.split()) >= 4]
    return list(dict.fromkeys(w for w in windows if w))[:_MAX_WINDOWS]


SupportState = Literal["checked", "unchecked", "nothing-to-check"]
UNCHECKED_NOTE = "the citation-support model could not run here, so no citation was checked"


@dataclass(frozen=True)
class SupportCheck:
    """What the check found, and whether it ran at all: an empty `entries` means "all supported"
    only when `state` is "checked"."""

    state: SupportState
    entries: list[JsonObject]
    note: str | None = None


def check_support(answer_text: str, passages: dict[str, JsonObject],
                  scorer: SupportScorer | None = None) -> SupportCheck:
    """`{"ref", "sentence", "score", "verdict"}` for each sentence that cites a ref a tool returned
    in this answer (an unverified ref has no passage: it is reported as unverified instead)."""
    cited = [c for c in cited_sentences(answer_text) if isinstance(passages.get(c.ref), dict)]
    if not cited:
        return SupportCheck("nothing-to-check", [])
    pairs = [(c.texts, _cited_passage(c.ref, passages[c.ref])) for c in cited]
    scorer = scorer or SupportScorer()
    try:
        features = scorer.features(pairs)
    except (EmbeddingError, ImportError, OSError) as exc:
        _warn_once(exc)
        record_count("SupportUnchecked")
        return SupportCheck("unchecked", [], UNCHECKED_NOTE)
    # The parameters of the model that embedded (a stand-in embedder in a test: the configured one's).
    params = support_params(getattr(scorer.embedder, "model", None))
    out = []
    for c, candidates in zip(cited, features):
        score = best_score(candidates, params)
        out.append({"ref": c.ref, "sentence": c.sentence, "score": score, "verdict": verdict_of(score, params)})
    return SupportCheck("checked", out)


def _cited_passage(ref: str, passage: JsonObject) -> CitedPassage:
    title = " ".join(str(passage.get(k) or "") for k in ("title", "section") if passage.get(k))
    return CitedPassage(key=ref, title=title, text=str(passage.get("text") or passage.get("title") or ""))


# -- the local model, shared by every answer of this process --------------------------------------

_WARNED = False


def local_embedder() -> LocalOnnxEmbedder:
    from groundchat.search.embeddings import shared_local_embedder

    return shared_local_embedder()


def _warn_once(exc: BaseException) -> None:
    global _WARNED
    if not _WARNED:
        _WARNED = True
        log.warning("citation support not checked: the local embedding model is unavailable (%s)", exc)
