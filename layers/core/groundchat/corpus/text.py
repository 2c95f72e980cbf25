"""Whitespace and markup normalisation shared by the converters and their checks."""
from __future__ import annotations

import re

_SPACE = re.compile(r"\s+")
_BULLET = re.compile(r"(?:^|\s)[-\u2014\u2022]\s")


def collapse(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def comparable(text: str) -> str:
    """Text reduced to its words, for checking a conversion against an independent one.

    Bold markers and list bullets are presentation, not content; typographic quotes differ
    between extractions of the same text.
    """
    text = text.replace("**", "").replace("\u2018", "'").replace("\u2019", "'")
    text = text.replace("\u201c", '"').replace("\u201d", '"')
    text = _BULLET.sub(" ", " " + text)
    return collapse(text)
