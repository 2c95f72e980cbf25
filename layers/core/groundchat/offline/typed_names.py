"""The data's names as users type them: "cedr-mini", "checkuot-flow", "guidlines", "aria-hiden-focus".

Before a question is routed, a word that is neither an English word nor one of the names' own
spellings is written as the name it mistypes, when it is within one edit per five letters of that
name (or of one of its parts: "chekout" for the `checkout` of `checkout-flow`) and of no other. A
hyphenated word is compared whole first ("dune-cod" is `dune-code`, though "cod" is a word), then
part by part. Names come from the data (models, contexts, tasks, labels, rules, outcomes), so nothing
here lists them.

English words are never changed: "reader" is one edit from "header", "cider" from "cedar" and
"model" from "modal", and each means what it says. The dictionary is pyspellchecker's English word
list; the distance is rapidfuzz's Levenshtein.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

from rapidfuzz.distance import Levenshtein

# One edit is allowed per this many letters of the name: "cedar" (5) takes one, "dune" (4) none.
LETTERS_PER_EDIT = 5
# Words shorter than this are left as typed: too many names and words lie one edit from them.
SHORTEST = 4

_TOKEN = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")


@lru_cache(maxsize=1)
def _english():
    from spellchecker import SpellChecker

    return SpellChecker(language="en", distance=1)


def is_english(word: str) -> bool:
    return word in _english()


@lru_cache(maxsize=32)
def _spellings(names: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """Each way a name is written (whole, and each part long enough to be told apart) to the names
    it may stand for."""
    out: dict[str, set[str]] = {}
    for name in names:
        out.setdefault(name, set()).add(name)
        for part in name.split("-"):
            if len(part) >= SHORTEST and not part.isdigit():
                out.setdefault(part, set()).add(name)
    return {spelling: frozenset(owners) for spelling, owners in out.items()}


def _meant(word: str, spellings: dict[str, frozenset[str]]) -> str | None:
    """The one spelling `word` mistypes, or None: a word already spelled right, an English word, a
    short one, or one that is as near two names as it is to one."""
    if word in spellings or len(word) < SHORTEST or ("-" not in word and is_english(word)):
        return None
    near = {s for s in spellings if len(s) >= LETTERS_PER_EDIT
            and Levenshtein.distance(word, s, score_cutoff=len(s) // LETTERS_PER_EDIT) <= len(s) // LETTERS_PER_EDIT}
    owners = {name for s in near for name in spellings[s]}
    if not near:
        return None
    if len(near) == 1:
        return next(iter(near))
    # Two spellings of one name ("guidelines" the part and "guidelines" the context) are one name;
    # two names are never chosen between.
    return min(near, key=len) if len(owners) == 1 else None


def corrected(question: str, names: Iterable[str]) -> str:
    """The question as typed, with every mistyped name written as the data writes it."""
    spellings = _spellings(tuple(sorted({n.lower() for n in names if n})))
    if not spellings:
        return question
    pieces: list[str] = []
    last = 0
    for m in _TOKEN.finditer(question):
        word = m.group(0).lower()
        fixed = _meant(word, spellings)
        if fixed is None and "-" in word:
            parts = [_meant(part, spellings) for part in word.split("-")]
            if any(parts):
                fixed = "-".join(p or part for p, part in zip(parts, word.split("-")))
        pieces.append(question[last:m.start()])
        pieces.append(fixed if fixed is not None else m.group(0))
        last = m.end()
    pieces.append(question[last:])
    return "".join(pieces)


__all__ = ["LETTERS_PER_EDIT", "corrected", "is_english"]
