"""The EAA converter (Official Journal PDF) checked against the reference conversion."""
from __future__ import annotations

import difflib
import json
import re

import pytest

from groundchat.corpus import eaa
from groundchat.corpus.annex_points import first_point_names
from groundchat.corpus.chunk import whole_section
from groundchat.corpus.index_text import kind, plain_note
from groundchat.corpus.notes import ARTICLES, PARAGRAPHS, POINTS, RECITALS, SITUATIONS, load
from groundchat.corpus.text import comparable

PDF = "eaa/CELEX_32019L0882_EN_TXT.pdf"


def _nospace(text: str) -> str:
    return "".join(comparable(text).split())


@pytest.fixture(scope="module")
def parsed(shared_corpus):
    return eaa.parse(shared_corpus / PDF)


@pytest.fixture(scope="module")
def reference(shared_corpus):
    ref = shared_corpus / "reference"
    return (json.loads((ref / "eaa-2019-882-en.json").read_text()),
            json.loads((ref / "eaa-2019-882-en-annexes.json").read_text()))


def test_every_recital_present_and_equal(parsed, reference):
    main, _ = reference
    assert [n for n, _ in parsed.recitals] == list(range(1, 105))
    for (num, text), r in zip(parsed.recitals, main["recitals"]):
        if num == 104:
            # The reference's recital 104 runs on into the enacting formula that follows it.
            assert _nospace(r["text"]) == _nospace(text) + "HAVEADOPTEDTHISDIRECTIVE:"
            continue
        assert _nospace(text) == _nospace(r["text"]), f"recital {num}"


def test_every_article_present_with_title_and_paragraphs(parsed, reference):
    main, _ = reference
    ref_articles = {a["num"]: a for c in main["chapters"] for a in c["articles"]}
    assert [a.num for a in parsed.articles] == list(range(1, 36))
    for art in parsed.articles:
        r = ref_articles[art.num]
        if art.num <= 33:  # 34 and 35 have no title in the PDF; the reference adds them from elsewhere
            assert art.title == r["title"], art.num
        assert [p.num for p in art.paragraphs] == [p["num"] for p in r["paragraphs"]], art.num
        for p, rp in zip(art.paragraphs, r["paragraphs"]):
            if (art.num, p.num) == (20, 1):
                # The reference lost this paragraph's last sentence (it starts with "Article 21").
                assert _nospace(p.text).startswith(_nospace(rp["text"]))
                assert p.text.endswith("second and third subparagraphs of this paragraph.")
                continue
            assert _nospace(p.text) == _nospace(rp["text"]), f"Article {art.num}({p.num})"


def test_article_3_definitions_split_and_equal(parsed, reference):
    main, _ = reference
    ref_defs = next(a for c in main["chapters"] for a in c["articles"] if a["num"] == 3)["definitions"]
    art3 = parsed.articles[2]
    assert len(art3.definitions) == 44
    for d, r in zip(art3.definitions, ref_defs):
        assert (d.num, d.term) == (r["num"], r["term"])
        assert _nospace(d.text) == _nospace(r["text"]), d.num


def test_every_annex_section_present(parsed, reference):
    _, annexes = reference
    mine = {(p.annex, p.section): p for p in parsed.annexes}
    expected = []
    for a in annexes["annexes"]:
        for s in a.get("sections") or [{"section": None, "title": a["title"], "markdown": a["markdown"]}]:
            expected.append((a["annex"], s["section"]))
            part = mine[(a["annex"], s["section"])]
            assert part.title.lower() == s["title"].lower()
            # The reference is Markdown with table captions; the words must still match closely.
            ours = re.findall(r"[a-z0-9]+", part.text.lower())
            theirs = re.findall(r"[a-z0-9]+", re.sub(r"^#+ .*$", "", s["markdown"], flags=re.M).lower())
            assert difflib.SequenceMatcher(None, ours, theirs, autojunk=False).ratio() > 0.9, (a["annex"], s["section"])
    assert sorted(mine, key=str) == sorted(expected, key=str)
    assert len(parsed.annexes) == 7 + 4 + 4


def test_page_headers_and_footnotes_removed(shared_corpus):
    chunks = eaa.convert(shared_corpus / PDF)
    for c in chunks:
        # Every page header carries the issue and page ("L 151/70"); none may reach a chunk.
        assert "L 151/" not in c.text, c.section
    sections = {c.section: c for c in chunks}
    assert "Recital 41" in sections and "Article 4(3)" in sections and "Article 3(22)" in sections
    # A long annex section is cited by its points, a short one whole (corpus/annex_points.py).
    assert "Annex I Section IV, point (g)(i)" in sections and "Annex VI, opening" in sections
    assert "Annex I Section V" in sections  # no points to split at
    assert "Annex I Section IV" not in sections
    e_commerce = sections["Annex I Section IV, point (g)(i)"]
    assert e_commerce.title == ("Annex I Section IV: Additional accessibility requirements related to specific "
                                "services, points (g)(i) to (g)(ii)")
    lines = e_commerce.text.split("\n")
    assert lines[1].startswith("(g) E-") and lines[2].startswith("(i) ") and lines[3].startswith("(ii) ")
    assert e_commerce.url.endswith("#anx_I")
    consumer = sections["Article 3(22)"]
    assert consumer.title == "Article 3(22) Definition of ‘consumer’"
    assert consumer.url.endswith("#art_3") and consumer.updated_at == "2019-06-07T00:00:00Z"
    assert "(27)" in sections["Article 3(3)"].text  # the footnote mark stays, its footnote does not


def test_every_article_and_annex_section_has_an_everyday_note_and_no_note_is_orphaned(shared_corpus):
    chunks = [c for c in eaa.convert(shared_corpus / PDF) if kind(c) in ("article", "annex")]
    missing = sorted({c.section for c in chunks if plain_note(c.section) is None})
    assert missing == []
    bases = {whole_section(c.section) for c in chunks}
    # A note for a section the converter never writes is a typo.
    assert {e.section for e in load().entries(ARTICLES)} - bases == set()


def test_every_article_paragraph_and_recital_has_its_own_note_and_no_note_is_orphaned(shared_corpus):
    notes = load()
    sections = {kind_: {e.section for e in notes.entries(kind_)} for kind_ in (ARTICLES, SITUATIONS, PARAGRAPHS, RECITALS)}
    chunks = eaa.convert(shared_corpus / PDF)
    # Article 3's opening line only introduces its definitions, which are found by their terms.
    paragraphs = {c.section for c in chunks if kind(c) == "article"} - {"Article 3"}
    recitals = {c.section for c in chunks if kind(c) == "recital"}
    assert sections[PARAGRAPHS] == paragraphs and sections[RECITALS] == recitals
    assert sections[SITUATIONS] == sections[ARTICLES] - {"Article 3"}  # every article but the definitions
    # A paragraph is searched by its article's note and its own, in that order.
    note = plain_note("Article 7(6)")
    assert note.startswith(notes.get(ARTICLES, "Article 7")) and note.endswith(notes.get(PARAGRAPHS, "Article 7(6)"))


def test_every_line_of_a_split_annex_section_is_in_its_passages_in_order(parsed, shared_corpus):
    chunks = eaa.convert(shared_corpus / PDF)
    for part in parsed.annexes:
        section = f"Annex {part.annex}" + (f" Section {part.section}" if part.section else "")
        passages = [c for c in chunks if whole_section(c.section) == section]
        # The section's lines are a subsequence of its passages' lines (which add the headings of the
        # points a passage sits under): nothing lost, nothing out of order.
        shown = iter(line for c in passages for line in c.text.split("\n")[1:])
        assert all(any(line == seen for seen in shown) for line in part.text.split("\n")), section
        # The exact path finds a split section by its first passage's name.
        assert passages[0].section == section or passages[0].section in first_point_names(section), section
        # Shown whole, within the excerpt ceiling (a point with no sub-points is never cut; the longest,
        # the self-service terminals' seven indents under two headings, is 1,155 characters).
        over = {c.section for c in passages if len(c.text) > 1200}
        assert over == set(), over


def test_a_passage_of_annex_points_is_searched_by_its_points_notes_and_every_point_note_is_used(shared_corpus):
    notes = load()
    point_notes = {e.section: e.note for e in notes.entries(POINTS)}
    chunks = {c.section: c for c in eaa.convert(shared_corpus / PDF)}
    # The converter records each passage's points; the e-commerce passages add the e-commerce note
    # to the section's, which names banking and e-books alike.
    shop = chunks["Annex I Section IV, point (g)(i)"]
    assert shop.meta["points"] == "(g)(i) (g)(ii)"
    section_notes = f"{notes.get(ARTICLES, 'Annex I Section IV')}; {notes.get(SITUATIONS, 'Annex I Section IV')}"
    shop_note = point_notes["Annex I Section IV, point (g)"]
    assert plain_note(shop.section, shop.meta["points"].split()) == f"{section_notes}; {shop_note}"
    banking = plain_note("Annex I Section IV, point (e)", chunks["Annex I Section IV, point (e)"].meta["points"].split())
    assert banking.endswith(point_notes["Annex I Section IV, point (e)"]) and shop_note not in banking
    # The opening has the section's notes only; a section kept whole records no points.
    opening = chunks["Annex I Section IV, opening"]
    assert plain_note(opening.section, opening.meta["points"].split()) == section_notes
    assert "points" not in chunks["Annex I Section V"].meta
    # Every point note names a point the converter writes (a key that matches nothing is a typo), and
    # every passage of points in the sections that have point notes gets one.
    written = {f"{whole_section(c.section)}, point {label}"
               for c in chunks.values() for label in c.meta.get("points", "").split() if label != "opening"}
    orphans = {key for key in point_notes if not any(w == key or w.startswith(key + "(") for w in written)}
    assert orphans == set()
    noted = {key.split(", point ")[0] for key in point_notes}
    without = sorted(c.section for c in chunks.values()
                     if whole_section(c.section) in noted and "opening" not in c.meta.get("points", "opening")
                     and not any(n in plain_note(c.section, c.meta["points"].split()) for n in point_notes.values()))
    assert without == []
