"""The question bank: its shape, its questions' independence from the evaluation sets and from the
texts' wording, and that every part it names is a part of the index."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from groundchat.corpus.chunk import QUESTIONS, SOURCES, whole_section
from groundchat.corpus.index_text import embedding_text, keyword_fields, kind
from groundchat.corpus.question_bank import bank_dir, convert, read_bank
from groundchat.search.question_leg import parts_of

EVAL = Path(__file__).resolve().parent.parent / "eval"
ROMAN = ["I", "II", "III", "IV", "V", "VI", "VII"]


def _bank(name: str) -> dict[str, list[str]]:
    return read_bank(bank_dir() / f"{name}.json")


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def test_the_act_has_questions_for_every_article_annex_section_and_recital():
    parts = set(_bank("eaa"))
    articles = {f"Article {n}" for n in range(1, 36) if n != 3}  # Article 3 is asked by its definitions
    annexes = {f"Annex I Section {r}" for r in ROMAN} | {f"Annex {r}" for r in ROMAN[1:6]}
    recitals = {f"Recital {n}" for n in range(1, 105)}
    assert articles | annexes | recitals <= parts
    definitions = {p for p in parts if re.fullmatch(r"Article 3\(\d+\)", p)}
    assert len(definitions) >= 15
    # The duties are asked paragraph by paragraph too ("Article 4(5)": the microenterprise
    # exemption, not Article 4 as a whole).
    paragraphs = {p for p in parts if re.fullmatch(r"Article (?!3\()\d+\(\d+\)", p)}
    assert {"Article 4(5)", "Article 7(2)", "Article 9(2)", "Article 10(2)", "Article 13(2)", "Article 14(3)"} <= paragraphs
    assert parts == articles | annexes | recitals | definitions | paragraphs


def test_wcag_has_questions_for_every_success_criterion():
    parts = _bank("wcag22")
    assert len(parts) == 87 and all(re.fullmatch(r"[1-4]\.\d{1,2}\.\d{1,2}", p) for p in parts)
    assert {"1.1.1", "2.4.7", "2.5.8", "3.3.8", "4.1.1", "4.1.3"} <= set(parts)
    assert all(len(questions) >= 3 for questions in parts.values())


def test_every_question_is_a_chunk_of_the_questions_source_naming_its_part_and_its_source():
    chunks = convert(bank_dir())
    eaa, wcag = _bank("eaa"), _bank("wcag22")
    assert len(chunks) == sum(map(len, eaa.values())) + sum(map(len, wcag.values()))
    assert len({c.id for c in chunks}) == len(chunks)
    assert QUESTIONS not in SOURCES  # never searched as a text, never cited
    micro = [c for c in chunks if c.section == "Article 3(23)"]
    assert [c.text for c in micro] == eaa["Article 3(23)"]
    assert {c.meta["answers"] for c in micro} == {"eaa"} and {c.source for c in micro} == {QUESTIONS}
    focus = [c for c in chunks if c.section == "2.4.7"]
    assert {c.meta["answers"] for c in focus} == {"wcag22"} and len(focus) == len(wcag["2.4.7"])


def test_a_question_is_embedded_as_asked_and_never_read_by_the_keyword_leg():
    chunk = next(c for c in convert(bank_dir()) if c.section == "Article 31")
    assert kind(chunk) == "question"
    assert embedding_text(chunk) == chunk.text
    assert keyword_fields(chunk) is None


def test_a_bank_of_the_wrong_shape_is_refused_with_its_path(tmp_path):
    bad = tmp_path / "eaa.json"
    bad.write_text(json.dumps({"Article 4": "one question, not a list"}), encoding="utf-8")
    with pytest.raises(ValueError, match=str(bad)):
        read_bank(bad)
    bad.write_text(json.dumps({"Article 4": ["fine", "  "]}), encoding="utf-8")
    with pytest.raises(ValueError, match="non-empty"):
        convert(tmp_path)


def test_no_question_is_in_an_evaluation_set():
    asked = {" ".join(_words(c.text)) for c in convert(bank_dir())}
    evaluated = set()
    for path in EVAL.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                evaluated.add(" ".join(_words(str(row.get("q", row.get("sentence", ""))))))
    assert not asked & evaluated


def test_no_question_repeats_six_words_of_the_texts(real_index):
    from groundchat.search.embedded import EmbeddedIndex

    index = EmbeddedIndex(real_index["path"])
    six = set()
    for chunk, _ in index.stored():
        if chunk.source in ("eaa", "wcag22"):
            words = _words(chunk.text)
            six.update(tuple(words[i:i + 6]) for i in range(len(words) - 5))
    copied = [c.text for c in convert(bank_dir())
              if any(tuple(_words(c.text)[i:i + 6]) in six for i in range(len(_words(c.text)) - 5))]
    assert copied == []


def test_every_part_the_bank_names_is_a_part_of_the_index(real_index):
    from groundchat.search.embedded import EmbeddedIndex

    index = EmbeddedIndex(real_index["path"])
    indexed = set()
    for chunk, _ in index.stored():
        if chunk.source in ("eaa", "wcag22"):
            indexed |= parts_of(chunk.section)
    questions = [c for c, _ in index.stored(QUESTIONS)]
    assert len(questions) == len(convert(bank_dir()))  # the ingest indexed every one
    assert {c.section for c in questions} - indexed == set()
    assert whole_section("Article 4(5)") == "Article 4"


def test_the_ingest_reads_the_bank_the_package_ships_and_never_fetches_it(tmp_path):
    from groundchat.search.ingest import manifest

    [spec] = [s for s in manifest(tmp_path / "no-corpus", tmp_path / "no-docs") if s.name == QUESTIONS]
    assert spec.path == bank_dir() and spec.official_url is None
    assert [p.name for p in spec.files(spec.path)] == ["eaa.json", "wcag22.json"]
