"""Our notes as data (corpus/notes/*.jsonl): what the files hold, how they are read, and the check of
each note against the text it was written for."""
from __future__ import annotations

import hashlib
import json
import re

import pytest

from groundchat.corpus import eaa, wcag
from groundchat.corpus.chunk import make_chunk
from groundchat.corpus.notes import (ARTICLES, FAILURES, KINDS, PARAGRAPHS, POINTS, RECITALS, SITUATIONS,
                                     NotesFileError, check_notes, data_files, load, text_sha256)

# What the Python dicts held when the notes became data: 451 notes, and a digest of every
# (kind, section, note) triple, sorted, so a note changed by a byte fails here.
COUNTS = {FAILURES: 87, ARTICLES: 50, SITUATIONS: 49, PARAGRAPHS: 125, RECITALS: 104, POINTS: 36}
DIGEST = "5f180c55630b8bc378134a23234e3d5d53e30f7afabc7f2f207fb56fbc495887"
SPOT = {
    (FAILURES, "2.1.2"): "focus stuck inside a modal, chat widget, embedded video player, map or iframe and Tab or "
                         "Escape won't move out; keyboard users must reload the page or close the browser to escape",
    (ARTICLES, "Article 3"): "what the words in the Act mean: definitions",
    (PARAGRAPHS, "Article 7(6)"): "the manufacturer's name or brand and a single contact address go on the product, "
                                  "or if impossible (no room) on the packaging or an enclosed document, in a language "
                                  "users and authorities understand",
    (RECITALS, "Recital 18"): "how it was decided which products and services the Act covers: a review during the "
                              "impact assessment picked those that matter to disabled people and where countries "
                              "have or will likely adopt clashing national rules",
    (POINTS, "Annex I Section IV, point (g)"): "online shops, webshops and marketplaces: information on how "
                                               "accessible the products sold are, login, identity checks, security, "
                                               "checkout and payment usable by everyone",
}


def _digest(notes) -> str:
    digest = hashlib.sha256()
    for k in sorted(KINDS):
        for entry in sorted(notes.entries(k), key=lambda e: e.section):
            digest.update(f"{k}\x1f{entry.section}\x1f{entry.note}\x1e".encode())
    return digest.hexdigest()


def test_the_files_hold_every_note_the_dicts_held_byte_for_byte():
    notes = load()
    assert {k: len(notes.entries(k)) for k in KINDS} == COUNTS and sum(COUNTS.values()) == 451
    assert _digest(notes) == DIGEST
    for (k, section), text in SPOT.items():
        assert notes.get(k, section) == text
    assert notes.get(SITUATIONS, "Article 3") is None and notes.get(FAILURES, "9.9.9") is None
    # The first line of a file is its first note, in the order the dicts had.
    assert [e.section for e in notes.entries(FAILURES)][:3] == ["1.1.1", "1.2.1", "1.2.2"]
    assert notes.entries(FAILURES)[0].where == "wcag_failures.jsonl:1"


def test_every_line_is_one_note_with_its_source_and_a_16_hex_text_hash():
    for path in data_files():
        lines = path.read_text(encoding="utf-8").splitlines()
        assert lines and all(line for line in lines), path.name
        for line in lines:
            entry = json.loads(line)
            assert set(entry) == {"source", "section", "note", "text_sha256"}, (path.name, line)
            assert entry["source"] == ("wcag22" if path.stem == FAILURES else "eaa")
            assert re.fullmatch(r"[0-9a-f]{16}", entry["text_sha256"]), (path.name, entry["section"])


def _folder(tmp_path, **lines_by_kind):
    tmp_path.mkdir(parents=True, exist_ok=True)
    for k in KINDS:
        (tmp_path / f"{k}.jsonl").write_text("".join(line + "\n" for line in lines_by_kind.get(k, [])))
    return tmp_path


def _line(source, section, note, sha):
    return json.dumps({"source": source, "section": section, "note": note, "text_sha256": sha})


def test_a_line_that_is_not_a_note_or_a_second_note_for_a_section_is_named_by_file_and_line(tmp_path):
    good = _line("wcag22", "1.1.1", "n", "0" * 16)
    with pytest.raises(NotesFileError, match=r"^wcag_failures\.jsonl:2: not a note \(KeyError"):
        load(_folder(tmp_path / "a", wcag_failures=[good, '{"section": "1.2.1"}']))
    with pytest.raises(NotesFileError, match=r"^wcag_failures\.jsonl:2: a second note for 1\.1\.1$"):
        load(_folder(tmp_path / "b", wcag_failures=[good, good]))
    with pytest.raises(NotesFileError, match=r"^eaa_recitals\.jsonl:1: source 'wcag22', not 'eaa'$"):
        load(_folder(tmp_path / "c", eaa_recitals=[_line("wcag22", "Recital 1", "n", "0" * 16)]))


def _criterion(num: str, text: str):
    return make_chunk(source="wcag22", section=num, title=f"{num} H", text=text, url="u",
                      meta={"kind": "success-criterion", "handle": "H"})


def test_an_orphan_a_changed_text_and_a_missing_note_are_each_reported_by_file_and_line(tmp_path):
    kept, changed = _criterion("1.1.1", "Success Criterion 1.1.1 H\nkept"), _criterion("1.2.1", "Success Criterion 1.2.1 H\nold")
    notes = load(_folder(tmp_path, wcag_failures=[
        _line("wcag22", "1.1.1", "kept note", text_sha256([kept])),
        _line("wcag22", "1.2.1", "stale note", text_sha256([changed])),
        _line("wcag22", "9.9.9", "orphan note", "0" * 16),
    ]))
    # Whitespace is not a change: the hash is of the text with its whitespace collapsed.
    spaced = _criterion("1.1.1", "Success Criterion  1.1.1 H\n kept ")
    assert [(p.what, p.section) for p in check_notes([spaced, changed], notes).problems] == [("orphan", "9.9.9")]
    now = _criterion("1.2.1", "Success Criterion 1.2.1 H\nnew words")
    new = _criterion("1.3.1", "Success Criterion 1.3.1 H")
    report = check_notes([kept, now, new], notes)
    assert [(p.what, p.where, p.section) for p in report.problems] == [
        ("changed", "wcag_failures.jsonl:2", "1.2.1"),
        ("orphan", "wcag_failures.jsonl:3", "9.9.9"),
        ("missing", "wcag_failures.jsonl", "1.3.1"),
    ]
    assert report.lines() == [
        f"wcag_failures.jsonl:2: note for 1.2.1 was written for another text (text_sha256 {text_sha256([changed])}, "
        f"the text now {text_sha256([now])})",
        "wcag_failures.jsonl:3: note for 9.9.9, which the converted text no longer has",
        f"wcag_failures.jsonl: no note for 1.3.1 (every success criterion has one; its text_sha256: {text_sha256([new])})",
    ]
    assert [(n.section, n.note) for n in report.unusable()] == [("1.2.1", "stale note"), ("9.9.9", "orphan note")]
    # The Act's notes are checked only against the Act's chunks: none here, so none reported.
    assert {p.kind for p in report.problems} == {FAILURES}


def _annex(section: str, points: str):
    return make_chunk(source="eaa", section=section, title=section, text=f"{section}\ntext of {points}", url="u",
                      meta={"points": points})


def test_a_point_note_covers_its_sub_points_and_a_passage_of_points_without_one_is_missing(tmp_path):
    section = "Annex I Section I"
    opening, two_a, two_b, three = (_annex(f"{section}, opening", "opening"), _annex(f"{section}, point 2(a)", "2(a)"),
                                    _annex(f"{section}, point 2(b)", "2(b) 2(c)"), _annex(f"{section}, point 3", "3"))
    notes = load(_folder(tmp_path, eaa_points=[
        _line("eaa", f"{section}, point 2", "point two", text_sha256([two_a, two_b])),
        _line("eaa", f"{section}, point 4", "point four", "0" * 16),
    ]))
    report = check_notes([opening, two_a, two_b, three], notes)
    # The whole section and its own kinds' notes are missing too (this folder has none); the points':
    points = [(p.what, p.where, p.section) for p in report.problems if p.kind == POINTS]
    assert points == [("orphan", "eaa_points.jsonl:2", f"{section}, point 4"),
                      ("missing", "eaa_points.jsonl", f"{section}, point 3")]
    assert [(p.kind, p.what, p.section) for p in report.problems if p.kind != POINTS] == [
        (ARTICLES, "missing", section), (SITUATIONS, "missing", section)]


@pytest.fixture(scope="module")
def real_chunks(shared_corpus):
    return wcag.convert(shared_corpus / "wcag22" / "guidelines") + eaa.convert(shared_corpus / "eaa" / "CELEX_32019L0882_EN_TXT.pdf")


def test_every_note_matches_the_real_texts_and_every_section_that_needs_one_has_one(real_chunks):
    assert check_notes(real_chunks).lines() == []


def _line_of(kind: str, section: str) -> int:
    lines = (data_files()[KINDS.index(kind)]).read_text(encoding="utf-8").splitlines()
    [number] = [n for n, line in enumerate(lines, start=1) if json.loads(line)["section"] == section]
    return number


def test_a_changed_passage_is_reported_as_changed_for_every_note_written_for_it(real_chunks):
    def edited(section: str):
        return [c.model_copy(update={"text": c.text + " One more sentence."}) if c.section == section else c
                for c in real_chunks]

    report = check_notes(edited("1.4.3"))
    assert [(p.what, p.where) for p in report.problems] == [("changed", f"wcag_failures.jsonl:{_line_of(FAILURES, '1.4.3')}")]
    # A paragraph's notes, and its article's, which were written for all the article's paragraphs.
    report = check_notes(edited("Article 7(6)"))
    assert [(p.what, p.where) for p in report.problems] == [
        ("changed", f"eaa_articles.jsonl:{_line_of(ARTICLES, 'Article 7')}"),
        ("changed", f"eaa_situations.jsonl:{_line_of(SITUATIONS, 'Article 7')}"),
        ("changed", f"eaa_paragraphs.jsonl:{_line_of(PARAGRAPHS, 'Article 7(6)')}"),
    ]
    # A point's note, and its section's.
    report = check_notes(edited("Annex I Section IV, point (g)(iii)"))
    assert [(p.kind, p.section) for p in report.problems] == [
        (ARTICLES, "Annex I Section IV"), (SITUATIONS, "Annex I Section IV"), (POINTS, "Annex I Section IV, point (g)")]
