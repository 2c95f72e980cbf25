"""The text each chunk contributes to the keyword leg and the embedding, beside the text it cites."""
from __future__ import annotations

from groundchat.corpus.chunk import make_chunk
from groundchat.corpus.index_text import embedding_text, keyword_fields, kind, plain_note, point_notes
from groundchat.corpus.notes import ARTICLES, FAILURES, PARAGRAPHS, POINTS, RECITALS, SITUATIONS, load


def note(kind: str, section: str) -> str:
    found = load().get(kind, section)
    assert found is not None, (kind, section)
    return found

CRITERION = make_chunk(
    source="wcag22", section="2.5.8", title="2.5.8 Target Size (Minimum)",
    text="Success Criterion 2.5.8 Target Size (Minimum) (Level AA), under Guideline 2.5 Input Modalities\n"
         "Pointer targets are no smaller than 24 by 24 CSS pixels\nNote: a note",
    url="u", meta={"kind": "success-criterion", "handle": "Target Size (Minimum)", "level": "AA"})
DEFINITION = make_chunk(source="eaa", section="Article 3(23)", title="Article 3(23) Definition of ‘microenterprise’",
                        text="Article 3(23) ‘microenterprise’ means a firm with under ten staff",
                        url="u", meta={"term": "microenterprise", "article": "3"})
PARAGRAPH = make_chunk(source="eaa", section="Article 9(4)", title="Article 9 Obligations of importers, paragraph 4",
                       text="Article 9 Obligations of importers (Chapter III Obligations of economic operators dealing "
                            "with products), paragraph 4\n4. Importers shall indicate their name.",
                       url="u", meta={"article": "9"})


def test_criterion_heading_carries_number_handle_and_guideline_and_the_body_is_not_repeated():
    heading, body = keyword_fields(CRITERION)
    assert heading.startswith("2.5.8 Target Size (Minimum) Guideline 2.5 Input Modalities. ")
    assert body.startswith("Pointer targets are") and "Note: a note" in body
    assert embedding_text(CRITERION).splitlines()[0] == "Target Size (Minimum)"


def test_a_definition_reads_as_one():
    assert kind(DEFINITION) == "definition"
    assert keyword_fields(DEFINITION) == ("microenterprise definition",
                                          "‘microenterprise’ means a firm with under ten staff")
    assert embedding_text(DEFINITION).startswith("Definition of microenterprise: ‘microenterprise’ means")


def test_an_article_paragraph_heading_has_its_chapter():
    heading, body = keyword_fields(PARAGRAPH)
    assert heading.startswith("Article 9 Obligations of importers, paragraph 4 "
                              "III Obligations of economic operators dealing with products. ")
    assert body == "4. Importers shall indicate their name."


def test_an_eaa_article_carries_its_everyday_note_in_both_legs_but_not_in_what_is_cited():
    heading, _ = keyword_fields(PARAGRAPH)
    article_note = note(ARTICLES, "Article 9")
    assert "outside the EU" in article_note
    # A paragraph carries its article's note, the situations people bring to it, then its own note.
    composed = plain_note(PARAGRAPH.section)
    assert composed == f"{article_note}; {note(SITUATIONS, 'Article 9')}; {note(PARAGRAPHS, PARAGRAPH.section)}"
    assert heading.endswith(composed)
    lines = embedding_text(PARAGRAPH).splitlines()
    assert lines[0] == PARAGRAPH.title and lines[1] == composed  # after the title, before the body
    assert article_note not in PARAGRAPH.text
    assert plain_note("Annex I Section IV") is not None


def test_a_recital_has_its_own_note_and_definitions_and_wcag_get_none():
    assert [e.section for e in load().entries(RECITALS)] == [f"Recital {n}" for n in range(1, 105)]
    assert plain_note("Recital 12") == note(RECITALS, "Recital 12") and "UN" in plain_note("Recital 12")
    assert plain_note("Recital 105") is None and plain_note("1.4.3") is None
    assert keyword_fields(DEFINITION)[0] == "microenterprise definition"


def test_the_cited_text_and_ref_are_untouched():
    before = CRITERION.model_dump()
    keyword_fields(CRITERION), embedding_text(CRITERION)
    assert CRITERION.model_dump() == before


def test_a_criterion_and_its_understanding_chunks_carry_how_people_describe_its_failures():
    import json

    from tests.corpus_support import require_corpus

    reference = json.loads((require_corpus() / "reference" / "wcag22-success-criteria.json").read_text())
    criteria = [c["num"] for c in (reference if isinstance(reference, list) else reference["success_criteria"])]
    assert [e.section for e in load().entries(FAILURES)] == criteria  # every criterion, in order, and nothing else
    failures = note(FAILURES, CRITERION.section)
    heading, body = keyword_fields(CRITERION)
    assert heading.endswith(failures) and failures not in body and failures not in CRITERION.text
    assert embedding_text(CRITERION).splitlines()[1] == failures  # after the handle, before the text
    understanding = make_chunk(source="wcag22", section=f"Understanding {CRITERION.section} Examples",
                               title="t", text="Understanding WCAG 2.2 (informative) on it\nan example", url="u",
                               meta={"kind": "understanding", "criterion": CRITERION.section, "handle": "h"})
    assert embedding_text(understanding).splitlines()[:2] == ["h", failures]
    # A glossary term or the Act's passages get none of these.
    assert failures not in keyword_fields(PARAGRAPH)[0]


def test_a_point_takes_its_own_note_or_else_its_parents_but_never_a_broader_one_beside_its_own():
    section = "Annex I Section I"
    own, parent = note(POINTS, f"{section}, point 2(e)"), note(POINTS, f"{section}, point 2")
    assert point_notes(section, ["2(e)", "2(f)"]) == [own]  # "2(f)" has no note; "2"'s is broader than "2(e)"'s
    assert point_notes(section, ["2(f)"]) == [parent]
    shop = note(POINTS, "Annex I Section IV, point (g)")
    assert point_notes("Annex I Section IV", ["(g)(i)", "(g)(ii)"]) == [shop]  # once, not once per point
    assert point_notes("Annex I Section IV", ["(e)", "(f)(i)"]) == [note(POINTS, "Annex I Section IV, point (e)"),
                                                                    note(POINTS, "Annex I Section IV, point (f)")]
    assert point_notes("Annex III", ["(a)"]) == []


def test_an_annex_passage_of_points_carries_its_points_notes_into_both_legs():
    passage = make_chunk(source="eaa", section="Annex I Section IV, point (g)(iii)",
                         title="Annex I Section IV: Additional requirements, point (g)(iii)",
                         text="Annex I Section IV: Additional requirements, point (g)(iii)\n(g) Shops:\n(iii) pay",
                         url="u", meta={"points": "(g)(iii)"})
    shop = note(POINTS, "Annex I Section IV, point (g)")
    heading, body = keyword_fields(passage)
    assert shop in heading and shop in embedding_text(passage) and shop not in passage.text
    assert note(POINTS, "Annex I Section IV, point (e)") not in heading  # another point's note is not


def test_the_index_text_version_follows_from_the_notes_the_vocabulary_and_the_derivation_code(tmp_path):
    import re
    import shutil

    from groundchat.corpus.index_text import INDEX_TEXT_VERSION, contents_version, version_files

    files = version_files()
    assert [f.name for f in files] == ["wcag_failures.jsonl", "eaa_articles.jsonl", "eaa_situations.jsonl",
                                       "eaa_paragraphs.jsonl", "eaa_recitals.jsonl", "eaa_points.jsonl",
                                       "vocabulary.json", "index_text.py", "chunk.py"]
    assert re.fullmatch(r"[0-9a-f]{12}", INDEX_TEXT_VERSION) and contents_version() == INDEX_TEXT_VERSION
    copies = []
    for n, f in enumerate(files):
        copies.append(tmp_path / str(n) / f.name)
        copies[-1].parent.mkdir()
        shutil.copyfile(f, copies[-1])
    assert contents_version(copies) == INDEX_TEXT_VERSION  # the bytes count, not where they are
    for copy in (copies[0], copies[6], copies[7]):  # a note, the vocabulary, the code
        original = copy.read_bytes()
        copy.write_bytes(original.replace(b"e", b"E", 1))
        assert contents_version(copies) != INDEX_TEXT_VERSION, copy.name
        copy.write_bytes(original)
