"""The WCAG converter checked against the independent conversion in ../shared/corpus/reference."""
from __future__ import annotations

import json

import pytest

from groundchat.corpus import wcag
from groundchat.corpus.text import collapse, comparable


def _nospace(text: str) -> str:
    # The reference puts spaces around some inline elements (e.g. `4 h +4 w`): all whitespace goes.
    return "".join(comparable(text).split())


@pytest.fixture(scope="module")
def parsed(shared_corpus):
    return wcag.parse(shared_corpus / "wcag22" / "guidelines")


@pytest.fixture(scope="module")
def reference(shared_corpus):
    ref = shared_corpus / "reference"
    return (json.loads((ref / "wcag22-success-criteria.json").read_text()),
            json.loads((ref / "wcag22-glossary.json").read_text()))


def test_every_criterion_present_with_handle_level_and_anchor(parsed, reference):
    criteria, _ = reference
    mine = {c.num: c for c in parsed.criteria}
    assert len(parsed.criteria) == 87
    assert sorted(mine) == sorted(r["num"] for r in criteria["success_criteria"])
    for r in criteria["success_criteria"]:
        c = mine[r["num"]]
        assert (c.handle, c.level, c.id, c.obsolete) == (r["handle"], r["level"], r["id"], r["obsolete"]), r["num"]


def test_normative_text_and_notes_equal_after_whitespace_normalisation(parsed, reference):
    criteria, _ = reference
    mine = {c.num: c for c in parsed.criteria}
    for r in criteria["success_criteria"]:
        c = mine[r["num"]]
        assert collapse(comparable(c.text)) == collapse(comparable(r["text"])), r["num"]
        assert [collapse(comparable(n)) for n in c.notes] == [collapse(comparable(n)) for n in r["notes"]], r["num"]


def test_2_5_8_has_its_five_exceptions(parsed):
    target = next(c for c in parsed.criteria if c.num == "2.5.8")
    assert target.level == "AA"
    assert [line.split(":**")[0].lstrip("- *") for line in target.text.splitlines()[1:]] == [
        "Spacing", "Equivalent", "Inline", "User Agent Control", "Essential"]


def test_every_glossary_term_present_with_equal_definition(parsed, reference):
    _, glossary = reference
    mine = {t.term: t for t in parsed.terms}
    assert len(parsed.terms) == 101
    assert set(mine) == {t["term"] for t in glossary["terms"]}
    for r in glossary["terms"]:
        t = mine[r["term"]]
        assert t.id == r["id"]
        assert _nospace(t.definition) == _nospace(r["definition"]), r["term"]
        assert [_nospace(n) for n in t.notes] == [_nospace(n) for n in r["notes"]], r["term"]


def test_principles_and_guidelines(parsed, reference):
    criteria, _ = reference
    assert [p.handle for p in parsed.principles] == ["Perceivable", "Operable", "Understandable", "Robust"]
    ref_guidelines = [(g["num"], g["handle"]) for p in criteria["principles"] for g in p["guidelines"]]
    assert [(g.num, g.handle) for g in parsed.guidelines] == ref_guidelines
    assert len(parsed.guidelines) == 13


def test_chunks_carry_source_section_anchor_and_date(shared_corpus):
    chunks = wcag.convert(shared_corpus / "wcag22" / "guidelines")
    by_section = {c.section: c for c in chunks}
    normative = [c for c in chunks if c.meta.get("kind") != "understanding"]
    assert len(normative) == 4 + 13 + 87 + 101
    c = by_section["1.4.3"]
    assert (c.source, c.title, c.url) == ("wcag22", "1.4.3 Contrast (Minimum)", "https://www.w3.org/TR/WCAG22/#contrast-minimum")
    assert c.ref == c.id[:8] and len(c.id) == 64
    assert c.updated_at == "2024-12-12T00:00:00Z"
    assert c.meta["level"] == "AA"
    assert by_section["Guideline 1.4"].url.endswith("#distinguishable")
    assert by_section["Glossary: target"].url == "https://www.w3.org/TR/WCAG22/#dfn-targets"
