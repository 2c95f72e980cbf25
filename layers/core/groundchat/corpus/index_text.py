"""What each chunk contributes to the keyword leg and to the embedding, apart from the text it cites.

The chunk's own text (what is cited, and what its id hashes) stays as the converters wrote it; the
search sees a derived form of it:

- keyword fields: a heading (e.g. criterion number and handle plus its guideline, an article's
  title plus its chapter, "<term> definition") weighted above the body, and the body without the
  header line the heading already carries, so those words are not counted twice;
- embedding text: what a passage is about first, without boilerplate that every passage of its kind
  shares ("Success Criterion … (Level AA), under Guideline …", "Article 3(n)"), which otherwise pulls
  all passages of a kind together in the vector space; a definition reads as one.

Both carry our notes on the passage (corpus/notes.py), composed here.

`INDEX_TEXT_VERSION` is recorded in the index, and follows from what the derivation reads: a change
to the notes, the vocabulary or this code makes the next ingest rebuild every vector instead of
reusing those stored under an unchanged chunk id.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

from groundchat.corpus.annex_points import OPENING, POINT_SEPARATOR
from groundchat.corpus.chunk import Chunk, kind, whole_section
from groundchat.corpus.notes import ARTICLES, FAILURES, PARAGRAPHS, POINTS, RECITALS, SITUATIONS, Notes, data_files, in_use

# The vocabulary is the question's half of the same tuning (search/vocabulary.py), counted so that the
# index names all the tuning it was built with; read as a file, not imported: the search sits above
# the corpus.
VOCABULARY_FILE = Path(__file__).resolve().parent.parent / "search" / "vocabulary.json"


def version_files() -> list[Path]:
    """What the derived text follows from: the notes files, the vocabulary file, and the derivation's
    code (this module, and corpus/chunk.py where a chunk's kind is decided)."""
    return [*data_files(), VOCABULARY_FILE, Path(__file__), Path(__file__).with_name("chunk.py")]


def contents_version(files: Sequence[Path] | None = None) -> str:
    """The first 12 hex digits of the SHA-256 over each file's name and bytes, in that order."""
    digest = hashlib.sha256()
    for path in version_files() if files is None else files:
        digest.update(path.name.encode("utf-8") + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


INDEX_TEXT_VERSION = contents_version()

_UNDER_GUIDELINE = re.compile(r", under (Guideline .+)$")
_CHAPTER = re.compile(r" \(Chapter ([^)]*)\)")
_ARTICLE_REF = re.compile(r"^Article \d+\(\d+\) ")
# An annex passage's point labels ("points (e) to (g)" in its title, "(e) " before a point): a
# reference, which the exact path serves, not a word. As words they match questions by accident:
# "(e)" is the "e" of "e-commerce" and "e-books" to the keyword leg.
_POINT_SPAN = re.compile(r", (opening|points? )[^:]*$")
_POINT_LABEL = re.compile(r"^\([a-z]{1,4}\)\s*", re.MULTILINE)


def _lines(chunk: Chunk) -> list[str]:
    return chunk.text.split("\n")


def _titled(chunk: Chunk) -> str:
    # The title leads so that a long text's truncated tail never loses what the passage is about.
    return chunk.text if chunk.text.startswith(chunk.title) else f"{chunk.title}\n{chunk.text}"


def keyword_heading(chunk: Chunk) -> str:
    heading = _own_heading(chunk)
    note = _note(chunk)
    return f"{heading}. {note}" if note else heading


def _note(chunk: Chunk) -> str | None:
    """Our everyday words for what a passage is about, for both legs and never cited: the Act's notes
    for an article, annex section or recital (`plain_note`), and how people describe a criterion's
    failures for its normative text and its Understanding chunks alike."""
    k = kind(chunk)
    if chunk.source == "eaa":
        # A definition's own heading ("<term> definition") already says what it is about.
        return plain_note(chunk.section, chunk.meta.get("points", "").split()) if k != "definition" else None
    if k == "success-criterion":
        return in_use().get(FAILURES, chunk.section)
    if k == "understanding":
        return in_use().get(FAILURES, chunk.meta.get("criterion", ""))
    return None


def plain_note(section: str, points: list[str] | None = None) -> str | None:
    """The note for an article, paragraph, definition, annex passage or recital; None for anything
    else: the article's or section's note, the situations people bring to it, then the paragraph's
    own note, the recital's or, for a passage of an annex section's points (`points`, as the
    converter labels them), its points' notes. A paragraph ("Article 7(3)") and a definition
    ("Article 3(21)") take their article's notes."""
    notes = in_use()
    whole = whole_section(section)
    own = [notes.get(PARAGRAPHS, section) or notes.get(RECITALS, section)]
    if points and OPENING not in points:
        own += point_notes(whole, points, notes)
    parts = [notes.get(ARTICLES, whole), notes.get(SITUATIONS, whole), *own]
    return "; ".join(note for note in parts if note) or None


def point_notes(section: str, points: list[str], notes: Notes | None = None) -> list[str]:
    """The notes of a passage's points, once each and in order. A point takes the note of the longest
    key it starts with ("(g)(iii)" takes "(g)"'s), except a parent's note when a sibling in the
    passage has its own: "2(e)" and "2(f)" packed together take "2(e)"'s, not also the broader "2"'s.
    A passage of points takes these instead of repeating its section's whole list on each passage."""
    notes = notes or in_use()
    matched = [(point, _longest_key(section, point, notes)) for point in points]
    with_own = [point for point, key in matched if key == point]
    found: list[str] = []
    for point, key in matched:
        if key is None or (key != point and any(own.startswith(key + "(") for own in with_own)):
            continue
        note = notes.get(POINTS, f"{section}{POINT_SEPARATOR}{key}")
        if note is not None and note not in found:
            found.append(note)
    return found


def _longest_key(section: str, point: str, notes: Notes) -> str | None:
    label = point
    while label:
        if notes.get(POINTS, f"{section}{POINT_SEPARATOR}{label}") is not None:
            return label
        label = label[: label.rfind("(")] if "(" in label else ""
    return None


def _own_heading(chunk: Chunk) -> str:
    k = kind(chunk)
    first = _lines(chunk)[0]
    if k == "success-criterion":
        m = _UNDER_GUIDELINE.search(first)
        return f"{chunk.title} {m.group(1)}" if m else chunk.title
    if k == "term":
        return f"{chunk.section.removeprefix('Glossary: ')} definition"
    if k == "understanding":
        return f"{chunk.meta['criterion']} {chunk.meta['handle']} understanding"
    if k == "definition":
        return f"{chunk.meta['term']} definition"
    if k == "article":
        m = _CHAPTER.search(first)
        return f"{chunk.title} {m.group(1)}" if m else chunk.title
    if k == "annex":
        return _POINT_SPAN.sub("", chunk.title)
    return chunk.title


def keyword_body(chunk: Chunk) -> str:
    k = kind(chunk)
    lines = _lines(chunk)
    if k == "annex":
        return _POINT_LABEL.sub("", "\n".join(lines[1:]))
    if k in ("success-criterion", "guideline", "principle", "article", "understanding") and len(lines) > 1:
        return "\n".join(lines[1:])  # the first line is the header the heading already carries
    if k == "definition":
        return _ARTICLE_REF.sub("", chunk.text)
    return chunk.text


def keyword_fields(chunk: Chunk) -> tuple[str, str] | None:
    """(heading, body) for the keyword leg; the section is indexed as it is. None for a question of
    the question bank: the keyword leg never reads one, and its words would change every passage's
    term statistics (BM25 weighs a word by how few texts have it)."""
    if kind(chunk) == "question":
        return None
    return keyword_heading(chunk), keyword_body(chunk)


def embedding_text(chunk: Chunk) -> str:
    k = kind(chunk)
    if k == "question":
        return chunk.text  # compared with a question as it is asked: nothing added
    if k == "term":
        return f"Definition of {chunk.text}"
    if k == "definition":
        return f"Definition of {chunk.meta['term']}: {_ARTICLE_REF.sub('', chunk.text)}"
    if k in ("success-criterion", "understanding"):
        # What the criterion is about, without the label every such passage shares.
        head, rest = chunk.meta.get("handle") or chunk.title, _lines(chunk)[1:]
    elif k == "annex":
        head, rest = _own_heading(chunk), [keyword_body(chunk)]
    else:
        head, newline, body = _titled(chunk).partition("\n")
        rest = [body] if newline else []
    note = _note(chunk)
    # The note after the head, before the body: a long body is read in windows, each led by the head.
    return "\n".join([head, *([note] if note else []), *rest])


__all__ = ["INDEX_TEXT_VERSION", "embedding_text", "keyword_fields", "kind", "plain_note", "point_notes"]
