"""A prior on the kind of passage, applied to a ranked list (fused or a single leg) before the rerank.

Two kinds of passage share the words of the passages that answer most questions without being the
answer:

- a WCAG glossary term ("target", "captions", "large scale") repeats the words of the criteria that
  use it, and is short, so both legs rank it high; but a question about what a page must do is
  answered by a success criterion. A term is the answer when the question asks what something
  means ("what is …", "define …", "meaning of …").
- an EAA recital explains why the directive says what it says, in the words of the article it
  explains; the article (or annex) is the rule. A recital is the answer when the question asks why,
  or what a country or its authorities may or must do: the recitals say where the Member States keep
  their own choice (a relay service for 112, an accessibility agency, a tender that asks for more),
  which the articles leave unsaid.

Such passages have their score scaled by `DEMOTE` unless the question asks for them; they move down
a few places, they are never removed. One factor for both, not tuned per kind.

A question that names one of the two texts ("under the EAA", "does the Act…", "which WCAG
criterion…") and not the other is about that text: WCAG and the Act share the words of a
situation (captions, screen readers, time-outs, CAPTCHAs), and without this "is the image
CAPTCHA on our shop OK under the EAA?" led with WCAG's criteria. The other text's passages take the
same factor; our own docs are never demoted, since the benchmark speaks of both. (Such a question is
also searched in the text it names alone, whose first passages lead: search/named_source_first.py.)

A question that names a conformance level is about the criteria of that level: "is a 16 px close
button a fail at AA?" asks about 2.5.8 Target Size (Minimum), not 2.5.5 Target Size (Enhanced), and
"at AAA, are there exceptions to keyboard access?" about 2.1.3, not 2.1.1. Neighbouring criteria
differ mostly by level and share their words, so the level is often all that tells them apart.
Naming AA (and not AAA) demotes the AAA criteria, which AA does not require; naming AAA demotes the
A and AA criteria, since a question that reaches for AAA asks what AAA adds. Each criterion's
normative text and its Understanding chunks carry its level.
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
_ASKS_WHY = re.compile(r"\b(why|reasons?|purpose|aims?|rationale)\b|\bhow (?:did|do|does) (?:they|the eu|the act|lawmakers) "
                       r"(?:decide|choose|pick)\b", re.IGNORECASE)
_ASKS_WHAT_A_STATE_MAY = re.compile(
    r"\b(?:can|may|could|must|does) (?:a |an |our |the |each |every )?(?:country|countries|member states?|governments?|"
    r"ministr\w*|states?|regulators?)\b", re.IGNORECASE)
# How a question names a conformance level. "AA" is never found inside "AAA" (no word boundary
# between two letters).
_LEVEL_WORDS = {"AAA": r"AAA|triple[- ]?A", "AA": r"AA|double[- ]?A"}
_NAMES_LEVEL = {level: re.compile(rf"\b({words})\b", re.IGNORECASE) for level, words in _LEVEL_WORDS.items()}
_NAMES_SOURCE = {
    "eaa": re.compile(
        r"\b(EAA|(European )?Accessibility Act|the act|this act|(the|this|accessibility) directive|2019/882"
        r"|EU (accessibility )?(law|rules?|legislation))\b", re.IGNORECASE),
    # A conformance level is WCAG's: "is that a fail at AA?" names WCAG.
    "wcag22": re.compile(rf"\b(WCAG|W3C|success criteri(on|a)|{'|'.join(_LEVEL_WORDS.values())})\b", re.IGNORECASE),
}
_OTHER_SOURCE = {"eaa": "wcag22", "wcag22": "eaa"}


def demoted_kinds(query: str) -> set[str]:
    out: set[str] = set()
    if not _ASKS_MEANING.search(query):
        out.add("term")
    if not (_ASKS_WHY.search(query) or _ASKS_WHAT_A_STATE_MAY.search(query)):
        out.add("recital")
    return out


def named_source(query: str) -> str | None:
    """The text a question names, when it names one and only one of the two."""
    named = [source for source, pattern in _NAMES_SOURCE.items() if pattern.search(query)]
    return named[0] if len(named) == 1 else None


def demoted_source(query: str) -> str | None:
    """The text a question is not about, when it names the other one and only that one."""
    named = named_source(query)
    return _OTHER_SOURCE[named] if named else None


def demoted_levels(query: str) -> set[str]:
    """The WCAG conformance levels a question is not about, when it names AA or AAA."""
    if _NAMES_LEVEL["AAA"].search(query):
        return {"A", "AA"}
    if _NAMES_LEVEL["AA"].search(query):
        return {"AAA"}
    return set()


def apply_prior(query: str, hits: list[LegHit], factor: float = DEMOTE) -> list[LegHit]:
    """Stable: hits of equal scaled score keep their order. Scores stay higher-is-better."""
    demote, other_source, levels = demoted_kinds(query), demoted_source(query), demoted_levels(query)
    if not (demote or other_source or levels) or factor == 1.0:
        return hits

    def demoted(hit: LegHit) -> bool:
        return (kind(hit.chunk) in demote or hit.chunk.source == other_source
                or (hit.chunk.source == "wcag22" and hit.chunk.meta.get("level") in levels))

    # A leg's raw score may be negative (never for RRF or cosine on these legs, but be safe): scaling
    # a negative score by < 1 would raise it, so demote those by dividing instead.
    scaled = [LegHit(h.chunk, (h.score * factor if h.score >= 0 else h.score / factor) if demoted(h) else h.score)
              for h in hits]
    return sorted(scaled, key=lambda h: -h.score)


__all__ = ["DEMOTE", "apply_prior", "demoted_kinds", "demoted_levels", "demoted_source", "named_source"]
