"""Everyday words to the words the texts use: users say "fines", "alt text" and "focus ring"; the
Directive says "penalties", WCAG says "text alternative" and "focus visible". A question gets the
texts' words added to what it already says (never replaced), for both legs.

The list is a lexicon of the two texts' vocabulary, not a list of questions: each entry maps a
common way of saying a thing to the term the texts use for it.
"""
from __future__ import annotations

import json
import re
from importlib import resources

# The table is data (search/vocabulary.json): each entry a pattern and the texts' terms it adds, with
# a `why` where the entry is not self-evident.
_TABLE = json.loads(resources.files("groundchat.search").joinpath("vocabulary.json").read_text(encoding="utf-8"))

# British spellings of words that the texts, and the benchmark's rule ids ("color-contrast"), spell
# the American way (WCAG is written in American English; the Directive uses both).
AMERICAN_SPELLINGS: dict[str, str] = _TABLE["american_spellings"]
_BRITISH = re.compile(r"\b(" + "|".join(AMERICAN_SPELLINGS) + ")", re.IGNORECASE)

_COMPILED = [(re.compile(entry["pattern"], re.IGNORECASE), entry["terms"]) for entry in _TABLE["entries"]]


def in_american_spelling(text: str) -> str:
    """The text with "colour" and "behaviour" spelled as the texts and the data's ids spell them."""
    return _BRITISH.sub(lambda m: AMERICAN_SPELLINGS[m.group(1).lower()], text)


def with_texts_words(query: str) -> str:
    """The question with the texts' terms for what it says appended (each once)."""
    added: list[str] = []
    for pattern, words in _COMPILED:
        if pattern.search(query) and words not in added:
            added.append(words)
    return f"{query} ({'; '.join(added)})" if added else query
