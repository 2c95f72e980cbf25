"""The exact path: a question that names a criterion, article, annex section, recital or axe rule
gets that passage first, whatever the legs rank."""
from __future__ import annotations

import pytest

from groundchat.corpus.chunk import make_chunk
from groundchat.search.exact_refs import axe_rule_criteria, exact_chunks, named_sections

SECTIONS = {
    ("wcag22", "2.4.7"), ("wcag22", "1.4.3"), ("wcag22", "1.1.1"), ("eaa", "Article 31(1)"), ("eaa", "Article 3(23)"),
    ("eaa", "Annex I Section IV, opening"), ("eaa", "Annex I Section IV, point (a)"), ("eaa", "Annex III"),
    ("eaa", "Recital 41"), ("eaa", "Annex VI, point 1"),
}


def lookup(source, section):
    if (source, section) not in SECTIONS:
        return None
    return make_chunk(source=source, section=section, title=section, text=f"text of {section}", url="https://x/")


@pytest.mark.parametrize(("query", "expected"), [
    ("What does 2.4.7 ask for?", ["2.4.7"]),
    ("is SC 1.4.3 stricter than 2.4.7", ["1.4.3", "2.4.7"]),
    ("By when must Article 31 be transposed?", ["Article 31(1)"]),
    ("What is a microenterprise under Art. 3(23)?", ["Article 3(23)"]),
    # A long section is indexed by its points: its first passage stands for it.
    ("What does annex i, section iv say about e-commerce?", ["Annex I Section IV, opening"]),
    ("Annex VI please", ["Annex VI, point 1"]),
    ("Is Annex III about the built environment?", ["Annex III"]),
    ("What does recital 41 explain?", ["Recital 41"]),
    ("Which criterion is color-contrast about?", ["1.4.3"]),
    ("what does image-alt check", ["1.1.1"]),
])
def test_a_named_passage_is_found(query, expected):
    found = exact_chunks(query, lookup, None, axe_rule_criteria)
    assert [c.section for c in found] == expected


@pytest.mark.parametrize("query", [
    "Does WCAG 2.2 apply to apps?",            # a version, not a criterion
    "Contrast must be 4.5:1 for normal text",  # a ratio
    "What did the 2019 act change?",           # a year
    "Is a pop-up dialog ok on mobile?",        # hyphenated words that are no axe rule
    "Article 99 of the act",                   # no such article: nothing, not an error
])
def test_what_is_not_a_reference_finds_nothing(query):
    assert exact_chunks(query, lookup, None, axe_rule_criteria) == []


def test_a_source_filter_is_respected():
    assert exact_chunks("Article 31 and 2.4.7", lookup, ["wcag22"], axe_rule_criteria)[0].section == "2.4.7"
    assert [s for s, _ in named_sections("Article 31 and 2.4.7")] == ["eaa", "wcag22"]


def test_an_axe_rule_maps_to_every_criterion_its_tags_name():
    assert axe_rule_criteria("color-contrast") == ["1.4.3"]
    assert axe_rule_criteria("no-such-rule") == []
    assert axe_rule_criteria("region") == []  # a best practice names no criterion


def test_the_service_serves_the_named_passage_first_and_says_so(tmp_path):
    from groundchat.search.embedded import EmbeddedIndex
    from groundchat.search.service import SearchService
    from tests.corpus_support import WordHashEmbedder
    from tests.search.test_embedded import _build

    embedder = WordHashEmbedder()
    _build(tmp_path / "index.sqlite", embedder)
    service = SearchService(EmbeddedIndex(tmp_path / "index.sqlite"), embedder, max_excerpts=3)
    # The words point at pointer targets; the number names contrast. The number wins.
    result = service.search("pointer targets CSS pixels, or is 1.4.3 the one?")
    assert result.passages[0].section == "1.4.3"
    assert result.debug.record()["exact"] == ["1.4.3"]
    assert "2.5.8" in [p.section for p in result.passages]
    assert service.search("pointer targets CSS pixels", leg="bm25").debug.record().get("exact") is None
