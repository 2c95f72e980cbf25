"""The prior: glossary terms and recitals move below the rules unless the question asks for them,
and the text a question does not name moves below the one it names."""
from __future__ import annotations

from groundchat.corpus.chunk import make_chunk
from groundchat.search.prior import apply_prior, demoted_kinds, demoted_source
from groundchat.search.query_text import terms
from groundchat.search.types import LegHit

TERM = make_chunk(source="wcag22", section="Glossary: target", title="Definition of target",
                  text="target: the part of the screen a pointer can act on", url="u", meta={"kind": "term"})
RULE = make_chunk(source="wcag22", section="2.5.8", title="2.5.8 Target Size (Minimum)",
                  text="Success Criterion 2.5.8 Target Size (Minimum) (Level AA), under Guideline 2.5 Input Modalities\n"
                       "Pointer targets are no smaller than 24 by 24 CSS pixels",
                  url="u", meta={"kind": "success-criterion", "handle": "Target Size (Minimum)"})
RECITAL = make_chunk(source="eaa", section="Recital 8", title="Recital (8)", text="harmonisation of the market", url="u")


def test_a_term_ranks_below_a_criterion_unless_its_meaning_is_asked():
    hits = [LegHit(TERM, 0.0330), LegHit(RULE, 0.0320)]
    assert [h.chunk.section for h in apply_prior("how big must a target be", hits)] == ["2.5.8", "Glossary: target"]
    assert [h.chunk.section for h in apply_prior("what is a target?", hits)] == ["Glossary: target", "2.5.8"]


def test_recitals_are_demoted_unless_the_question_asks_why_or_what_a_country_may_do():
    assert "recital" in demoted_kinds("rules on market harmonisation")
    assert "recital" not in demoted_kinds("why harmonise the market?")
    assert "recital" not in demoted_kinds("Can a country use a relay service for deaf callers instead?")
    assert "recital" not in demoted_kinds("may the member states ask more in a tender?")
    assert "recital" not in demoted_kinds("how did they decide which products the act covers?")
    # A business's own choice is the articles' to settle.
    assert "recital" in demoted_kinds("can our shop skip the accessibility statement?")


def test_question_frame_words_are_dropped_but_never_everything():
    assert terms("Which criterion covers the contrast of text?") == ["covers", "contrast", "text"]
    assert terms("what does the directive say about accessibility") == ["directive", "say", "about", "accessibility"]


ARTICLE = make_chunk(source="eaa", section="Annex I Section IV", title="Annex I Section IV",
                     text="services: the website of an online shop", url="u")
DOC = make_chunk(source="docs", section="benchmark.md > Contexts", title="Contexts", text="context levels", url="u")


def test_a_question_naming_one_text_demotes_the_other_and_never_our_docs():
    assert demoted_source("is an image CAPTCHA on our shop ok under the EAA?") == "wcag22"
    assert demoted_source("what does the European Accessibility Act say about e-books") == "wcag22"
    assert demoted_source("which WCAG criterion covers captions?") == "eaa"
    # Both named, or neither: no text is demoted.
    assert demoted_source("does meeting WCAG AA satisfy the EAA?") is None
    assert demoted_source("is an image CAPTCHA ok?") is None
    hits = [LegHit(RULE, 0.0330), LegHit(DOC, 0.0325), LegHit(ARTICLE, 0.0300)]
    assert [h.chunk.source for h in apply_prior("our targets under the EAA", hits)] == ["docs", "eaa", "wcag22"]
    assert [h.chunk.source for h in apply_prior("our targets", hits)] == ["wcag22", "docs", "eaa"]
    # The scaled score is the fused score times the one factor.
    scored = {h.chunk.source: h.score for h in apply_prior("our targets under the EAA", hits)}
    assert scored == {"docs": 0.0325, "eaa": 0.0300, "wcag22": 0.0330 * 0.8}


ENHANCED = make_chunk(source="wcag22", section="2.5.5", title="2.5.5 Target Size (Enhanced)",
                      text="Success Criterion 2.5.5 Target Size (Enhanced) (Level AAA), under Guideline 2.5 Input Modalities\n"
                           "Pointer targets are no smaller than 44 by 44 CSS pixels at this level",
                      url="u", meta={"kind": "success-criterion", "handle": "Target Size (Enhanced)", "level": "AAA"})
MINIMUM = make_chunk(source="wcag22", section="Understanding 2.5.8", title="Understanding 2.5.8",
                     text="Understanding WCAG 2.2 (informative) on 2.5.8 Target Size (Minimum)\nsmall targets",
                     url="u", meta={"kind": "understanding", "criterion": "2.5.8", "level": "AA"})
KEYBOARD = make_chunk(source="wcag22", section="2.1.1", title="2.1.1 Keyboard", text="Keyboard (Level A)\nall by keyboard",
                      url="u", meta={"kind": "success-criterion", "level": "A"})


def _order(query: str, hits: list[LegHit]) -> list[str]:
    return [h.chunk.section for h in apply_prior(query, hits)]


def test_a_question_naming_a_conformance_level_is_about_that_levels_criteria():
    from groundchat.search.prior import demoted_levels

    hits = [LegHit(ENHANCED, 0.0330), LegHit(MINIMUM, 0.0320)]
    # AA does not require AAA: the AAA neighbour moves below the AA criterion's Understanding text.
    assert _order("the close X is 16 by 16 px, is that a fail at AA?", hits) == ["Understanding 2.5.8", "2.5.5"]
    assert _order("does a tiny close button fail WCAG double-A?", hits) == ["Understanding 2.5.8", "2.5.5"]
    # Naming AAA asks what AAA adds: A and AA criteria move below it, and so does the Act, since a
    # conformance level is WCAG's.
    hits = [LegHit(KEYBOARD, 0.0330), LegHit(ARTICLE, 0.0325), LegHit(ENHANCED, 0.0300)]
    assert _order("at AAA, how big must targets be?", hits) == ["2.5.5", "2.1.1", "Annex I Section IV"]
    assert _order("we go for triple A beyond what AA asks: targets?", hits)[0] == "2.5.5"
    # No level named: nothing moves; "AAA" never counts as "AA", nor a word that merely contains it.
    assert _order("how big must targets be?", hits) == ["2.1.1", "Annex I Section IV", "2.5.5"]
    assert demoted_levels("at AAA?") == {"A", "AA"} and demoted_levels("at aa?") == {"AAA"}
    assert demoted_levels("the AAAS and Baa Baa Black Sheep") == set()


def test_a_conformance_level_names_wcag():
    assert demoted_source("is a 16 px close button a fail at AA?") == "eaa"
    assert demoted_source("anything on long sentences at triple A?") == "eaa"
    assert demoted_source("does the EAA ask for WCAG AA?") is None  # both texts named
