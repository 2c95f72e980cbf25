"""At most two passages of one article or criterion keep their place at the top of the excerpts."""
from __future__ import annotations

from groundchat.corpus.chunk import make_chunk
from groundchat.search.diversity import group_of, spread
from groundchat.search.retrieval_eval import matches_gold
from groundchat.search.types import LegHit


def hit(source: str, section: str, score: float) -> LegHit:
    return LegHit(make_chunk(source=source, section=section, title=section, text=f"text of {section}", url="u"), score)


def test_groups_are_articles_and_criteria_with_their_understanding():
    assert group_of("eaa", "Article 19(2)") == group_of("eaa", "Article 19(3)") == "eaa Article 19"
    assert group_of("eaa", "Article 3(22)") == "eaa Article 3"
    assert group_of("wcag22", "Understanding 1.4.3 Benefits") == group_of("wcag22", "1.4.3") == "wcag22 1.4.3"
    assert group_of("eaa", "Annex I Section IV") == "eaa Annex I Section IV"
    assert group_of("eaa", "Recital 12") != group_of("eaa", "Recital 13")


def test_a_third_paragraph_of_one_article_moves_behind_other_articles_and_nothing_is_dropped():
    hits = [hit("eaa", "Article 19(1)", 5), hit("eaa", "Article 19(2)", 4), hit("eaa", "Article 19(3)", 3),
            hit("eaa", "Article 23(1)", 2), hit("wcag22", "1.4.3", 1.5), hit("eaa", "Article 19(4)", 1)]
    out = [h.chunk.section for h in spread(hits)]
    assert out == ["Article 19(1)", "Article 19(2)", "Article 23(1)", "1.4.3", "Article 19(3)", "Article 19(4)"]


def test_the_order_is_kept_when_no_group_crowds():
    hits = [hit("eaa", "Article 2(1)", 3), hit("eaa", "Article 23(1)", 2), hit("eaa", "Article 2(2)", 1)]
    assert spread(hits) == hits


def test_an_annex_is_answered_by_any_of_its_sections_and_an_article_by_its_paragraphs():
    assert matches_gold("Annex II Section IV", ["Annex II"])
    assert matches_gold("Article 2(1)", ["Article 2"])
    assert not matches_gold("Annex III", ["Annex II"])
    assert not matches_gold("Article 20(1)", ["Article 2"])
