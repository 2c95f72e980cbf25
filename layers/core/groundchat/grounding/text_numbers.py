"""Is every figure in the answer's words one a tool returned in this answer?

The same rules as a view's numbers (`view_numbers`): a figure is grounded if it equals a returned
number, or one rounded to the places shown, or (with %) a returned fraction as a percentage; a cost
is checked against the number in its `cost_text`. A figure that appears in a returned excerpt
("4.5:1" in WCAG) is grounded by it, and so is one the question itself gave ("the top 5 rules").
Numbers that name things are not figures: criterion numbers (1.4.3), article, annex and recital
numbers, years, list ordinals, run ids and refs.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Iterable

from groundchat.grounding.refs import CITATION
from groundchat.grounding.result_walk import result_nodes
from groundchat.grounding.tool_grounding import Grounding
from groundchat.grounding.view_numbers import Shown, is_grounded, returned_numbers

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject

# The view's rule for a number inside text (digits glued to letters, dots, dashes or slashes are names).
_FIGURE = re.compile(r"(?<![\w.\-/])\$?(\d+(?:,\d{3})*(?:\.\d+)?)(%?)(?![\w\-/]|\.\d)")
# A number right after one of these words is a name, not a figure.
_NAMING = re.compile(
    r"(?:article|art\.|annex|recital|section|chapter|paragraph|point|criterion|criteria|sc|level|wcag|"
    r"guideline|principle|version|round|step|item|no\.|number|#)\s*$", re.IGNORECASE)
_YEAR = re.compile(r"^(?:19|20)\d\d$")
_ORDINAL = re.compile(r"(?:^|\n)\s*$")  # a number that opens a line ("1. …", "2) …")


@dataclass(frozen=True)
class Figure:
    text: str
    value: Decimal
    percent: bool
    start: int


def figures(text: str) -> list[Figure]:
    """The figures in an answer's words, identifiers left out."""
    plain = CITATION.sub(lambda m: " " * len(m.group(0)), text)  # refs are names, whatever their digits
    out = []
    for m in _FIGURE.finditer(plain):
        digits = m.group(1).replace(",", "")
        before = plain[: m.start()]
        after = plain[m.end(): m.end() + 2]
        if _NAMING.search(before) or _YEAR.match(digits):
            continue
        if _ORDINAL.search(before) and after[:1] in (".", ")") and not m.group(2):
            continue
        out.append(Figure(m.group(0).strip(), Decimal(digits), m.group(2) == "%", m.start()))
    return out


PASSAGE_SCORE = "score"
# Whose numbers the words may quote: every tool's but a verdict's on what the model sent.
_QUOTABLE = (Grounding.FIGURES, Grounding.TEXT)


def grounding_pool(question: str, tool_results: Iterable[JsonObject]) -> set[Decimal]:
    """Every number the tools returned (values, numeric strings, numbers inside returned text such as
    excerpts), and those the question gave."""
    results = list(tool_results)
    pool = set(returned_numbers(results))
    for key, value in result_nodes(results, _QUOTABLE):
        # A passage's search score orders the excerpts; it is no figure of the passage, and its six
        # places would round to almost any number an answer writes.
        if isinstance(value, bool) or value is None or key == PASSAGE_SCORE:
            continue
        if isinstance(value, (int, Decimal)):
            pool.add(Decimal(value))
        elif isinstance(value, float):
            pool.add(Decimal(repr(value)))
        elif isinstance(value, str):
            pool.update(Decimal(m.group(1).replace(",", "")) for m in _FIGURE.finditer(value))
    pool.update(Decimal(m.group(1).replace(",", "")) for m in _FIGURE.finditer(question))
    return pool


def unverified_numbers(answer_text: str, question: str, tool_results: Iterable[JsonObject]) -> list[JsonObject]:
    """Each figure in the answer that no tool of this answer returned, once, in order of appearance."""
    pool = grounding_pool(question, tool_results)
    seen: set[str] = set()
    out = []
    for figure in figures(answer_text):
        shown = Shown("text", figure.text, figure.value, figure.percent)
        if figure.text in seen or is_grounded(shown, pool):
            continue
        seen.add(figure.text)
        out.append({"text": figure.text, "status": "unverified",
                    "why": "no tool returned this figure in this answer"})
    return out
