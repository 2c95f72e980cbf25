"""A prior on the kind of passage, applied to a ranked list (fused or a single leg) before the rerank.

Two kinds of passage share the words of the passages that answer most questions without being the
answer:

- a WCAG glossary term ("target", "captions", "large scale") repeats the words of the criteria that
  use it, and is short, so both legs rank it high; but a question about what a page must do is
  answered by a success criterion. A term is the answer when the question asks what something
  means ("what is …", "define …", "meaning of …").
- an EAA recital explains why the directive says what it says, in the words of the article it
  explains; the article (or annex) is the rule. A recital is the answer when the question asks why.

Such passages have their score scaled by `DEMOTE` unless the question asks for them; they move down
a few places, they are never removed. One factor for both, not tuned per kind.
"""
from __future__ import annotations

import re

from groundchat.corpus.index_text import kind
from groundchat.search.types import LegHit

DEMOTE = 0.8

_ASKS_MEANING = re.compile(
    r"\b(what (is|are) (an? |the )?|what counts as|defin\w*|meaning|mean by|means|who (is|counts)|what does .+ mean)",
    re.IGNORECASE,
)
_ASKS_WHY = re.compile(r"\b(why|reasons?|purpose|aims?|rationale)\b", re.IGNORECASE)


def demoted_kinds(query: str) -> set[str]:
    out = set()
    if not _ASKS_MEANING.search(query):
        out.add("term")
    if not _ASKS_WHY.search(query):
        out.add("recital")
    return out


def apply_prior(query: str, hits: list[LegHit], factor: float = DEMOTE) -> list[LegHit]:
    """Stable: hits of equal scaled score keep their order. Scores stay higher-is-better."""
    demote = demoted_kinds(query)
    if not demote or factor == 1.0:
        return hits
    scaled = [LegHit(h.chunk, h.score * factor if kind(h.chunk) in demote else h.score) for h in hits]
    # A leg's raw score may be negative (never for RRF or cosine on these legs, but be safe): scaling
    # a negative score by < 1 would raise it, so demote those by dividing instead.
    for i, h in enumerate(hits):
        if h.score < 0 and kind(h.chunk) in demote:
            scaled[i] = LegHit(h.chunk, h.score / factor)
    return sorted(scaled, key=lambda h: -h.score)


__all__ = ["DEMOTE", "apply_prior", "demoted_kinds"]
