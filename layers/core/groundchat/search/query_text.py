"""Turning a question into keyword terms for the BM25 leg (shared by both backends)."""
from __future__ import annotations

import re

_TERM = re.compile(r"\w+(?:[.\-']\w+)*")
# Words that carry no topic; BM25 would weigh them low anyway, but they widen the OR query.
STOPWORDS = frozenset(
    "a an and are as at be by can could do does for from how i if in into is it its me my of on or "
    "our should so that the their them there these they this to us was we what when where which who "
    "why will with would you your".split()
)


def terms(query: str) -> list[str]:
    seen: list[str] = []
    for term in _TERM.findall(query.lower()):
        if term in STOPWORDS or term in seen:
            continue
        seen.append(term)
    return seen
