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
# The frame of a question about the corpus rather than its topic: "which criterion …", "what does the
# directive say about …". Nearly every passage of a source contains these words, so in an OR query
# they only add noise from passages that share the frame and nothing else.
QUESTION_FRAME = frozenset(
    "which what how criterion criteria requirement requirements rule rules wcag guideline guidelines "
    "directive act law accessibility must need needs should have has say says about under there any all "
    "also more such like".split()
)


# The keyword leg's columns and their weights, on both backends: the heading (corpus/index_text.py),
# the section as it is (`1.4.3`, `Article 4`), the body. SQLite's bm25() takes them as column
# weights; OpenSearch's keyword field holds each value that many times (search/opensearch.py).
KEYWORD_WEIGHTS = {"heading": 3, "section": 2, "body": 1}


def terms(query: str) -> list[str]:
    """The query's topic words; the question frame is dropped unless it is all the query has."""
    words = _words(query, STOPWORDS | QUESTION_FRAME)
    return words or _words(query, STOPWORDS)


def fts_match(words: list[str]) -> str:
    """An SQLite FTS5 query for any of the words: each quoted, so FTS5 syntax in a question is text,
    and joined by OR, so one rare word can match."""
    return " OR ".join('"' + w.replace('"', "") + '"' for w in words)


def _words(query: str, drop: frozenset[str]) -> list[str]:
    seen: list[str] = []
    for term in _TERM.findall(query.lower()):
        if term in drop or term in seen:
            continue
        seen.append(term)
    return seen
