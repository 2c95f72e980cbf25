"""The first five excerpts come from five articles or criteria; after them, at most two passages of one
article or criterion keep their place."""
from __future__ import annotations

from groundchat.corpus.chunk import make_chunk
from groundchat.search.diversity import group_of, spread
from groundchat_cli.gold_match import matches_gold
from groundchat.search.types import LegHit


def hit(source: str, section: str, score: float) -> LegHit:
    return LegHit(make_chunk(source=source, section=section, title=section, text=f"text of {section}", url="u"), score)


def test_groups_are_articles_and_criteria_with_their_understanding():
    assert group_of("eaa", "Article 19(2)") == group_of("eaa", "Article 19(3)") == "eaa Article 19"
    assert group_of("eaa", "Article 3(22)") == "eaa Article 3"
    assert group_of("wcag22", "Understanding 1.4.3 Benefits") == group_of("wcag22", "1.4.3") == "wcag22 1.4.3"
    assert group_of("eaa", "Annex I Section IV") == "eaa Annex I Section IV"
    assert group_of("eaa", "Recital 12") != group_of("eaa", "Recital 13")


def test_the_first_five_are_five_groups_then_a_second_passage_keeps_its_place_and_a_third_moves_behind():
    hits = [hit("eaa", "Article 19(1)", 9), hit("eaa", "Article 19(2)", 8), hit("eaa", "Article 19(3)", 7),
            hit("eaa", "Article 23(1)", 6), hit("wcag22", "1.4.3", 5), hit("wcag22", "Understanding 1.4.3 Benefits", 4.5),
            hit("eaa", "Recital 12", 4), hit("eaa", "Annex I Section IV", 3), hit("eaa", "Article 19(4)", 2),
            hit("eaa", "Recital 13", 1)]
    out = [h.chunk.section for h in spread(hits)]
    assert out == ["Article 19(1)", "Article 23(1)", "1.4.3", "Recital 12", "Annex I Section IV",
                   "Article 19(2)", "Understanding 1.4.3 Benefits", "Recital 13", "Article 19(3)", "Article 19(4)"]
    assert sorted(out) == sorted(h.chunk.section for h in hits)


def test_the_passages_a_question_names_lead_as_they_are_and_count_towards_their_group():
    hits = [hit("eaa", "Article 4(3)", 9), hit("eaa", "Article 4(4)", 8), hit("eaa", "Article 4(5)", 7),
            hit("eaa", "Article 2(1)", 6), hit("eaa", "Recital 12", 5)]
    out = [h.chunk.section for h in spread(hits, named=2)]
    assert out == ["Article 4(3)", "Article 4(4)", "Article 2(1)", "Recital 12", "Article 4(5)"]


def test_fewer_groups_than_five_keep_their_second_passages_in_order():
    hits = [hit("eaa", "Article 19(1)", 5), hit("eaa", "Article 19(2)", 4), hit("eaa", "Article 23(1)", 3),
            hit("eaa", "Article 19(3)", 2)]
    out = [h.chunk.section for h in spread(hits)]
    assert out == ["Article 19(1)", "Article 23(1)", "Article 19(2)", "Article 19(3)"]


def test_the_order_is_kept_when_no_group_crowds():
    hits = [hit("eaa", "Article 2(1)", 3), hit("eaa", "Article 23(1)", 2), hit("eaa", "Article 2(2)", 1)]
    assert spread(hits) == hits


def test_an_annex_is_answered_by_any_of_its_sections_and_an_article_by_its_paragraphs():
    assert matches_gold("Annex II Section IV", ["Annex II"])
    assert matches_gold("Article 2(1)", ["Article 2"])
    assert not matches_gold("Annex III", ["Annex II"])
    assert not matches_gold("Article 20(1)", ["Article 2"])
