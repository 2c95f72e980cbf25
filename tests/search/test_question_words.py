"""The bank's words: each part scores its best question's BM25 against the new question, the best
part 1; safe with FTS5 syntax, across threads, and absent (not failing) without FTS5."""
from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor

import pytest

from groundchat.search import question_words
from groundchat.search.question_words import QuestionWords, bank_words

BANK = {
    "eaa": {
        "Article 3(22)": ["am I a consumer if I bought the laptop for my own business?",
                          "who counts as a consumer under the act?"],
        "Article 3(23)": ["we have eight staff, are we a microenterprise?"],
        "Article 31": ["by when did countries have to turn the act into national law?"],
    },
    "wcag22": {"2.4.7": ["I can't see where the keyboard focus is on our page"]},
}


def test_the_part_whose_questions_share_the_telling_words_scores_one():
    scores = QuestionWords(BANK).scores("does buying a laptop for my business still make me a consumer?")
    assert scores["Article 3(22)"] == 1.0
    assert set(scores) == {"Article 3(22)"}  # no other part's questions share a topic word
    scores = QuestionWords(BANK).scores("the keyboard focus on our business page is invisible")
    assert max(scores, key=scores.get) == "2.4.7"
    assert 0 < scores["Article 3(22)"] < 1  # "business" alone, a word two parts share less tellingly


def test_a_part_scores_its_best_question_not_the_sum_of_them():
    words = QuestionWords(BANK)
    # Both of Article 3(22)'s questions contain "consumer"; Article 3(23)'s one question has "microenterprise".
    scores = words.scores("consumer microenterprise")
    assert set(scores) == {"Article 3(22)", "Article 3(23)"}
    assert max(scores.values()) == 1.0 and all(0 < s <= 1 for s in scores.values())


@pytest.mark.parametrize("query", ['"consumer', "consumer AND NOT", "NEAR(consumer laptop)", "consumer*", "^col:x",
                                   "what is it?", "", "   "])
def test_fts_syntax_and_questions_without_topic_words_are_text_not_errors(query):
    scores = QuestionWords(BANK).scores(query)
    assert isinstance(scores, dict)
    if "consumer" in query:
        assert scores.get("Article 3(22)") == 1.0


def test_many_threads_share_one_table_and_get_the_same_answer():
    words = QuestionWords(BANK)
    queries = ["am I a consumer", "eight staff micro", "focus keyboard", "national law deadline"] * 25
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(words.scores, queries))
    assert results == [words.scores(q) for q in queries]


def test_without_fts5_the_words_are_absent_and_the_leg_goes_on(monkeypatch, caplog):
    real_connect = sqlite3.connect

    class NoFts5:
        def __init__(self, *args, **kwargs):
            self._conn = real_connect(*args, **kwargs)

        def execute(self, sql, *params):
            if "fts5" in sql:
                raise sqlite3.OperationalError("no such module: fts5")
            return self._conn.execute(sql, *params)

    monkeypatch.setattr(question_words.sqlite3, "connect", NoFts5)
    words = QuestionWords(BANK)
    assert words.scores("am I a consumer") == {}
    assert "no such module: fts5" in caplog.text


def test_the_package_bank_is_read_once_and_names_the_parts_the_index_holds():
    words = bank_words()
    assert bank_words() is words
    scores = words.scores("I'm a self-employed electrician and bought a laptop for invoicing: am I a consumer?")
    assert max(scores, key=scores.get) == "Article 3(22)"
    scores = words.scores("the focus outline vanished when I press tab")
    assert scores["2.4.7"] == 1.0


def test_a_failing_match_loses_the_boost_not_the_search(caplog):
    words = QuestionWords(BANK)

    class Broken:
        def execute(self, *args):
            raise sqlite3.DatabaseError("database disk image is malformed")

    words._db = Broken()  # type: ignore[assignment]
    assert words.scores("am I a consumer") == {}
    assert "database disk image is malformed" in caplog.text


def test_a_bank_that_cannot_be_read_leaves_the_words_empty_and_says_why(monkeypatch, tmp_path, caplog):
    (tmp_path / "eaa.json").write_text('{"Article 4": "not a list"}', encoding="utf-8")
    monkeypatch.setattr(question_words, "bank_dir", lambda: tmp_path)
    bank_words.cache_clear()
    try:
        words = bank_words()
        assert words.scores("am I a consumer") == {}
        assert "eaa.json" in caplog.text
    finally:
        bank_words.cache_clear()
