"""Do the figures of a sentence agree with the figures of the passage it cites?

Each figure is read with its kind: a ratio ("4.5:1", "4.5 to 1"), a percentage, money, a year, or
else the word that follows it ("20 seconds", "five years", "10 persons"). A figure of the sentence
is `matched` when the passage has the same value (a passage value rounded to the places the
sentence shows counts); `contradicted` when it has not, but the passage has a figure of the same
kind (the sentence says 5:1 where the passage says 4.5:1); `absent` when the passage has no figure
of that kind at all.

Unlike `text_numbers` (which asks whether a tool returned a figure), years count here: a deadline
moved from 2022 to 2025 is exactly what a citation must not get wrong. Numbers written as words
("three times", "five years") are figures too, because the legal texts write most of theirs so.
Names stay out: criterion numbers (1.4.3), article, annex and point numbers, list markers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

Agreement = Literal["none", "matched", "absent", "contradicted"]

_WORD_NUMBERS = {
    "two": 2, "twice": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "hundred": 100,
}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_WORD_NUMBERS) + r")\b", re.IGNORECASE)
# Digits glued to letters, dashes, dots or slashes name things ("round-1", "1.4.3", "2019/882").
_FIGURE = re.compile(r"(?<![\w.\-/])(\$|€|eur\s*)?(\d+(?:,\d{3})*(?:\.\d+)?)(\s*%|\s*:\s*1\b|\s+to\s+1\b)?(?![\w\-/]|\.\d)",
                     re.IGNORECASE)
# A number right after one of these words is a name, not a figure.
_NAMING = re.compile(
    r"(?:article|articles|art\.|annex|recital|section|chapter|paragraph|paragraphs|point|points|criterion|"
    r"criteria|sc|level|wcag|guideline|principle|version|round|step|item|no\.|number|#)\s*$",
    re.IGNORECASE)
_ENUMERATOR = re.compile(r"\(\s*(?:\d{1,2}|[a-z]|[ivx]{1,4})\s*\)")  # "(1)", "(b)", "(iv)"
_LIST_MARKER = re.compile(r"(?m)^\s*(?:[-*•]|\d{1,2}[.)])\s+")
_UNIT_WORD = re.compile(r"\s*(?:-\s*)?([a-z]+)", re.IGNORECASE)
# Words between a number and what it counts: "24 by 24 CSS pixels", "31 of 48 graded runs".
_NOT_A_UNIT = frozenset({"by", "x", "of", "to", "css", "the", "a", "an", "more", "than", "or", "and",
                         "per", "at", "least", "most", "graded", "in", "million"})
_YEAR = re.compile(r"^(?:19|20)\d\d$")
_TYPED = frozenset({"ratio", "percent", "money", "year", "day"})
_MONTHS = frozenset("january february march april may june july august september october november december".split())


@dataclass(frozen=True)
class Figure:
    value: Decimal
    places: int  # decimal places as written
    kind: str
    spelled: bool = False  # written as a word ("five years", "twice")


def figures(text: str) -> list[Figure]:
    """The figures in a text with their kinds, names and enumerators left out."""
    plain = _LIST_MARKER.sub(" ", _ENUMERATOR.sub(" ", text))
    spelled: set[int] = set()
    parts, last = [], 0
    for m in _NUMBER_WORD.finditer(plain):  # words become digits; where they stood is remembered
        parts.append(plain[last:m.start()])
        spelled.add(sum(len(p) for p in parts))
        parts.append(str(_WORD_NUMBERS[m.group(1).lower()]))
        last = m.end()
    plain = "".join(parts) + plain[last:]
    out = []
    for m in _FIGURE.finditer(plain):
        if _NAMING.search(plain[: m.start()]):
            continue
        digits = m.group(2).replace(",", "")
        places = len(digits.split(".")[1]) if "." in digits else 0
        out.append(Figure(Decimal(digits), places, _kind(m, digits, plain[m.end():]), m.start(2) in spelled))
    return out


def _kind(m: re.Match[str], digits: str, after: str) -> str:
    suffix = (m.group(3) or "").strip().lower()
    if suffix.endswith("1"):
        return "ratio"
    if suffix == "%" or re.match(r"\s*percent\b", after, re.IGNORECASE):
        return "percent"
    if m.group(1) or re.match(r"\s*(?:eur|euro|euros|usd|dollars?)\b", after, re.IGNORECASE):
        return "money"
    if _YEAR.match(digits):
        return "year"
    rest = after
    for _ in range(4):  # the first word that says what is counted
        word = _UNIT_WORD.match(rest)
        if word is None:
            return ""
        token = word.group(1).lower()
        rest = rest[word.end():]
        if token in _MONTHS:
            return "day"
        if token not in _NOT_A_UNIT:
            return token[:-1] if token.endswith("s") and len(token) > 3 else token
    return ""


def _same(shown: Figure, candidate: Figure) -> bool:
    """The same value (a passage value rounded to the places the sentence shows counts: "3.52" for
    3.5167) of a compatible kind: ratios, percentages, money, years and days must agree on their
    kind, so "EUR 10 million" is not vouched for by "10 persons". Not rounded for ratios: 5:1 is not
    4.5:1 rounded, it is another threshold."""
    if shown.kind in _TYPED or candidate.kind in _TYPED:
        if shown.kind != candidate.kind:
            return False
    if shown.value == candidate.value:
        return True
    if candidate.places <= shown.places or shown.kind == "ratio":
        return False
    step = Decimal(1).scaleb(-shown.places)
    return candidate.value.quantize(step, rounding=ROUND_HALF_UP) == shown.value


def agreement(sentence: str, passage: str) -> Agreement:
    """The worst case over the sentence's figures: one contradicted figure makes the sentence
    contradicted, one absent figure (and none contradicted) makes it absent. A number written as a
    word can agree or contradict, but is never absent: "twice" and "two steps" are ways of
    speaking more often than claims."""
    said = figures(sentence)
    if not said:
        return "none"
    found = figures(passage)
    kinds = {f.kind for f in found if f.kind}
    worst: Agreement = "none"
    for figure in said:
        if any(_same(figure, f) for f in found):
            worst = "matched" if worst == "none" else worst
        elif figure.kind and figure.kind in kinds:
            return "contradicted"
        elif not figure.spelled:
            worst = "absent"
    return worst
