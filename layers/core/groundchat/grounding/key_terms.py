"""The key terms of a sentence, and how many of them its cited passage contains.

Terms are content words cut to their first six letters, a stem crude enough to meet "captions",
"captioned" and "captioning" in one place without a stemming library, and British spellings are
read as the American ones the W3C texts use. Figures are left to `figure_agreement`.
"""
from __future__ import annotations

import re

from groundchat.search.query_text import STOPWORDS

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")  # hyphenated words count as two
# Words every sentence about a rule has: they say nothing about which rule.
_GENERIC = frozenset(
    "must shall may might need needs needed has have had been being not no nor only also any all each every "
    "more most less than least such like other others one ones some very just still even both either way ways "
    "make makes made get gets got give gives given keep keeps use used uses using under about then thus "
    "there here those its it's their they them than whether while without within".split()
)
_SPELLING = {"colour": "color", "colours": "colors", "centre": "center", "centred": "centered",
             "behaviour": "behavior", "labelled": "labeled", "organisation": "organization",
             "recognise": "recognize", "summarising": "summarizing", "licence": "license"}
_STEM = 6


def key_terms(text: str) -> set[str]:
    out: set[str] = set()
    for word in _WORD.findall(text.lower()):
        word = _SPELLING[word] if word in _SPELLING else word
        if len(word) < 3 or word in STOPWORDS or word in _GENERIC:
            continue
        out.add(word[:_STEM])
    return out


def term_overlap(sentence_terms: set[str], passage_terms: set[str]) -> float:
    """The share of the sentence's key terms the passage contains (0 when it has none)."""
    if not sentence_terms:
        return 0.0
    return len(sentence_terms & passage_terms) / len(sentence_terms)
