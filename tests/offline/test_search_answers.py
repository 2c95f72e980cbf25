"""An answer from the document search: one sentence from the best passage, cited; another passage
only when it is of another criterion or article, near the best one's score and says something new;
a passage under the floor is neither quoted nor cited (offline/search_answers.py, bench/offline_citations.py)."""
from __future__ import annotations

import asyncio
import re

from groundchat.offline.search_answers import SEARCH_FLOOR, cited_passages
from groundchat.offline.templates import compose

CITED = re.compile(r"\[([0-9a-f]{8})\]")


def _passage(ref: str, section: str, score: float, text: str, source: str = "wcag22") -> dict:
    return {"ref": ref, "source": source, "section": section, "title": f"{section} Invented title", "text": text,
            "score": score}


LEAD = _passage("aaaaaaa1", "1.4.3", 3.0, "Faint grey text is hard to read for people with weak eyesight.")
SIBLING = _passage("aaaaaaa2", "Understanding 1.4.3", 2.999, "Readers with weak eyesight struggle with faint grey letters.")
TIE = _passage("bbbbbbb1", "1.4.11", 2.995, "Icons and control borders need to stand out from what is around them.")
LOW = _passage("ccccccc1", "2.4.13", 2.0, "A focus outline has to be thick enough to see.")


def _answer(question: str, *excerpts: dict) -> str:
    return compose(question, [("search_docs", {"outcome": "hit", "excerpts": list(excerpts)}, False)])


def test_the_answer_leads_with_one_sentence_of_the_best_passage_and_cites_it():
    text = _answer("why does faint text matter?", LEAD, LOW)
    first = text.splitlines()[0]
    assert first == ('1.4.3 Invented title (WCAG 2.2) says: "Faint grey text is hard to read for people with weak '
                     'eyesight." [aaaaaaa1]')


def test_a_passage_under_the_floor_is_neither_quoted_nor_cited():
    assert LOW["score"] < SEARCH_FLOOR.relative * LEAD["score"]
    text = _answer("why does faint text matter?", LEAD, LOW)
    assert CITED.findall(text) == ["aaaaaaa1"]
    assert "focus outline" not in text and "2.4.13" not in text


def test_another_criterion_near_the_best_score_is_added_but_not_the_same_criterions_sibling():
    text = _answer("what does faint text need?", LEAD, SIBLING, TIE, LOW)
    assert CITED.findall(text) == ["aaaaaaa1", "bbbbbbb1"]
    assert "- 1.4.11 Invented title (WCAG 2.2): \"Icons and control borders" in text


def test_a_passage_that_says_nothing_new_is_left_out_and_an_unscored_one_is_never_more_than_the_lead():
    echo = {**TIE, "text": LEAD["text"]}  # another criterion's passage, word for word the same sentence
    assert [p["ref"] for p in cited_passages([LEAD, echo], question="faint text")] == ["aaaaaaa1"]
    unscored = [{k: v for k, v in p.items() if k != "score"} for p in (LEAD, TIE)]
    assert CITED.findall(_answer("why does faint text matter?", *unscored)) == ["aaaaaaa1"]


def test_the_sentence_quoted_is_the_one_that_shares_most_words_with_the_question():
    passage = _passage("ddddddd1", "1.2.2", 1.0, "Success Criterion 1.2.2 Captions (Prerecorded) (Level A)\n"
                                                  "Videos come with a soundtrack. Recorded videos need captions for "
                                                  "deaf viewers. Live ones are another matter.")
    assert '"Recorded videos need captions for deaf viewers." [ddddddd1]' in _answer("do recorded videos need captions?",
                                                                                     passage)


def test_the_contrast_question_cites_contrast_minimum_and_not_focus_appearance(real_search):
    """The example of issue 34: four excerpts used to be quoted, the fourth about focus appearance."""
    from groundchat.auth.callers import Caller
    from groundchat.search.diversity import group_of
    from groundchat.tools.base import ToolContext
    from groundchat.tools.docs_tools import SearchDocsInput, search_docs

    question = "Why does low color contrast matter?"
    ctx = ToolContext(caller=Caller(id="u"), docs=real_search)
    value = asyncio.run(search_docs.handler(ctx, SearchDocsInput(query=question)))
    served = {e["ref"]: e for e in value["excerpts"]}
    text = compose(question, [("search_docs", value, False)])
    cited = [served[r] for r in CITED.findall(text)]
    assert cited and group_of(cited[0]["source"], cited[0]["section"]) == "wcag22 1.4.3"
    assert all(group_of(p["source"], p["section"]) in {"wcag22 1.4.3", "wcag22 1.4.6"} for p in cited)
    low = [e for e in value["excerpts"] if e["score"] < SEARCH_FLOOR.relative * value["excerpts"][0]["score"]]
    assert any(e["section"].endswith("2.4.13") for e in low)  # focus appearance is served, under the floor
    assert not {e["ref"] for e in low} & set(CITED.findall(text))
    assert "focus" not in text.lower()


def test_a_line_that_introduces_a_point_is_quoted_with_the_point_never_alone():
    point = _passage("ddddddd1", "Annex I Section IV, point (g)(iii)", 3.0,
                     "Annex I Section IV, point (g)(iii)\n(g) Shops on the web:\n"
                     "(iii) checkout steps that people can see, reach and understand.", source="eaa")
    point["title"] = "Annex I Section IV, point (g)(iii)"
    first = _answer("what must an online shop do?", point).splitlines()[0]
    assert first.endswith('says: "(g) Shops on the web: (iii) checkout steps that people can see, reach and '
                          'understand." [ddddddd1]')


def test_asked_why_the_passage_that_gives_reasons_leads_and_asked_what_the_normative_text_does():
    # The search ranks the criterion's text first; its Understanding document says why it matters.
    why = _answer("Why does low contrast matter?", LEAD, TIE, SIBLING, LOW)
    assert CITED.findall(why)[0] == "aaaaaaa2"
    assert why.splitlines()[0].startswith("Understanding 1.4.3 Invented title")
    what = _answer("What contrast does text need?", LEAD, TIE, SIBLING, LOW)
    assert CITED.findall(what)[0] == "aaaaaaa1"
    # An Act's reasons are its recitals.
    article = _passage("eeeeeee1", "Article 4(1)", 3.0, "Products shall comply with the requirements.", source="eaa")
    recital = _passage("eeeeeee2", "Recital 21", 2.5, "Divergent national rules hinder the internal market.", source="eaa")
    assert CITED.findall(_answer("why does the act exist?", article, recital))[0] == "eeeeeee2"
    assert CITED.findall(_answer("what does the act require?", article, recital))[0] == "eeeeeee1"


def test_asked_for_a_partys_duties_every_paragraph_of_the_article_returned_is_quoted_in_its_order():
    storage = _passage("fffffff4", "Article 10(4)", 3.0, "Distributors shall keep storage conditions safe.", source="eaa")
    care = _passage("fffffff1", "Article 10(1)", 2.2, "Distributors shall act with due care.", source="eaa")
    definition = _passage("fffffff9", "Article 3(20)", 2.1, "A distributor makes a product available.", source="eaa")
    duties = _answer("What are a distributor's obligations?", storage, definition, care)
    assert CITED.findall(duties) == ["fffffff1", "fffffff4"]
    # Asked something else, the best paragraph alone answers (the other is under the floor).
    assert CITED.findall(_answer("how should distributors store products?", storage, definition, care)) == ["fffffff4"]


def test_asked_why_a_rule_matters_the_answer_leads_with_its_criterions_understanding_document():
    why = {"ref": "9999aaaa", "source": "wcag22", "section": "Understanding 1.4.3",
           "title": "Understanding 1.4.3 Invented title (informative)",
           "text": "Understanding WCAG 2.2 (informative) on 1.4.3\nWhy it's important: some readers cannot see faint text."}
    result = {"rule_id": "color-contrast", "criteria": [
        {"number": "1.4.3", "handle": "Contrast (Minimum)", "level": "AA", "url": "u", "ref": "8888bbbb",
         "text": "Invented normative line for the test.", "why": why}]}
    asked_why = compose("Why does color-contrast matter?", [("explain_rule", result, False)])
    assert asked_why.splitlines()[0] == ('Why it matters, from Understanding 1.4.3 Invented title (informative) (WCAG 2.2): '
                                         '"Why it\'s important: some readers cannot see faint text." [9999aaaa]')
    asked_what = compose("What does color-contrast check?", [("explain_rule", result, False)])
    assert "9999aaaa" not in asked_what and asked_what.startswith("The axe rule color-contrast checks WCAG 2.2:")
