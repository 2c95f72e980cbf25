"""Which parts' questions in the bank share the telling words of a new question.

The question leg (search/question_leg.py) measures a question's likeness to the bank's questions by
their vectors. Vectors blur the word that decides a question: "am I a *consumer* if I bought the
tablet for my business?", "what is a *PSAP*?", "a *CE* sticker on our kiosks". So the leg also
reads the bank's words: each part scores the BM25 of its best-matching question against the new
question's topic words, scaled so the best part scores 1, and that adds `WORDS_WEIGHT` to the part's
likeness.

The words are read from the bank the package ships (corpus/questions/*.json), in an SQLite FTS5 table
held in memory with the keyword leg's tokenizer, not from the index: both backends match the same
words, and OpenSearch needs no field for them. The passages' keyword statistics never see a
question (corpus/index_text.py). A part the vectors did not bring near is not added: an index built
from an older bank only lacks a boost, it never gets a part it does not hold.

Decided on the tune, validation, second tune, third and fourth sets (docs/engineering/retrieval-eval.md).
"""
from __future__ import annotations

import logging
import sqlite3
import threading
from functools import lru_cache
from typing import Mapping

from groundchat.corpus.question_bank import bank_dir, read_bank, source_files
from groundchat.search.query_text import fts_match, terms

log = logging.getLogger(__name__)

WORDS_WEIGHT = 0.8
# Matching questions read per search: enough for the parts near the top (a part has 2 to 8).
MATCH_ROWS = 200


class QuestionWords:
    """BM25 of the bank's questions, by part. Safe to share between threads."""

    def __init__(self, bank: Mapping[str, Mapping[str, list[str]]]) -> None:
        """`bank` is {source: {part: [question, …]}}, as corpus/question_bank.py reads it."""
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = sqlite3.connect(":memory:", check_same_thread=False)
        try:
            self._db.execute("CREATE VIRTUAL TABLE questions USING fts5(part UNINDEXED, text, "
                             "tokenize='porter unicode61')")
        except sqlite3.OperationalError as exc:  # an SQLite built without FTS5: the leg goes on by vectors
            log.warning("question words unavailable: %s", exc)
            self._db = None
            return
        self._db.executemany("INSERT INTO questions VALUES (?, ?)", [
            (part, question) for parts in bank.values() for part, questions in parts.items() for question in questions])

    def scores(self, query: str) -> dict[str, float]:
        """{part: its best question's BM25 / the best part's}; empty when no topic word matches."""
        words = terms(query)
        if self._db is None or not words:
            return {}
        try:
            with self._lock:
                rows = self._db.execute("SELECT part, bm25(questions) FROM questions WHERE questions MATCH ? "
                                        "ORDER BY bm25(questions) LIMIT ?", (fts_match(words), MATCH_ROWS)).fetchall()
        except sqlite3.Error as exc:  # a boost lost, never a search: the leg goes on by vectors
            log.warning("question words not matched: %s", exc)
            return {}
        best: dict[str, float] = {}
        for part, rank in rows:
            best[part] = max(best.get(part, 0.0), -rank)  # bm25() is lower-is-better
        top = max(best.values(), default=0.0)
        return {part: score / top for part, score in best.items()} if top > 0 else {}


@lru_cache(maxsize=1)
def bank_words() -> QuestionWords:
    """The words of the bank this package ships, read once per process. A bank that cannot be read
    (the ingest refuses it too) leaves the leg its vectors: the search still serves."""
    try:
        bank = {path.stem: read_bank(path) for path in source_files(bank_dir())}
    except (OSError, ValueError) as exc:
        log.warning("question words unavailable: %s", exc)
        bank = {}
    return QuestionWords(bank)


__all__ = ["MATCH_ROWS", "QuestionWords", "WORDS_WEIGHT", "bank_words"]
