"""What each chunk contributes to the keyword leg and to the embedding, apart from the text it cites.

The chunk's own text (what is cited, and what its id hashes) stays as the converters wrote it; the
search sees a derived form of it:

- keyword fields: a heading (e.g. criterion number and handle plus its guideline, an article's
  title plus its chapter, "<term> definition") weighted above the body, and the body without the
  header line the heading already carries, so those words are not counted twice;
- embedding text: what a passage is about first, without boilerplate that every passage of its kind
  shares ("Success Criterion … (Level AA), under Guideline …", "Article 3(n)"), which otherwise pulls
  all passages of a kind together in the vector space; a definition reads as one.

`INDEX_TEXT_VERSION` is recorded in the index: change it whenever either derivation changes, and
the next ingest rebuilds every vector instead of reusing those stored under an unchanged chunk id.
"""
from __future__ import annotations

import re

from groundchat.corpus.chunk import QUESTIONS, Chunk
from groundchat.corpus.eaa_plain import plain_note
from groundchat.corpus.wcag_failure_notes import FAILURE_NOTES

# 4: plain notes on the EAA's articles and annexes; 5: fuller notes on Annex I Sections I and IV;
# 6: plain notes on the EAA's recitals; 7: and on each paragraph of its articles; 8: how people
# describe each WCAG criterion's failures; 9: the situations people bring to each part of the EAA;
# 10: an annex passage without its point labels; 11: an annex passage's notes and its points'; 12: a
# fuller note on Annex I Section III point (c); 13: Recital 18 in the words of how it was decided
INDEX_TEXT_VERSION = "13"

_UNDER_GUIDELINE = re.compile(r", under (Guideline .+)$")
_CHAPTER = re.compile(r" \(Chapter ([^)]*)\)")
_ARTICLE_REF = re.compile(r"^Article \d+\(\d+\) ")
# An annex passage's point labels ("points (e) to (g)" in its title, "(e) " before a point): a
# reference, which the exact path serves, not a word. As words they match questions by accident:
# "(e)" is the "e" of "e-commerce" and "e-books" to the keyword leg.
_POINT_SPAN = re.compile(r", (opening|points? )[^:]*$")
_POINT_LABEL = re.compile(r"^\([a-z]{1,4}\)\s*", re.MULTILINE)


def kind(chunk: Chunk) -> str:
    """`success-criterion`, `guideline`, `principle`, `term` (WCAG glossary), `understanding`
    (Understanding WCAG, informative), `recital`, `article`,
    `definition` (an EAA Article 3 definition), `annex`, `doc`, or `question` (corpus/question_bank.py)."""
    if chunk.source == "wcag22":
        return chunk.meta.get("kind", "success-criterion")
    if chunk.source == "eaa":
        if chunk.section.startswith("Recital"):
            return "recital"
        if chunk.section.startswith("Annex"):
            return "annex"
        if "term" in chunk.meta:
            return "definition"
        return "article"
    if chunk.source == QUESTIONS:
        return "question"
    return "doc"


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
    for an article, annex section or recital (corpus/eaa_plain.py), and how people describe a
    criterion's failures (corpus/wcag_failure_notes.py) for its normative text and its Understanding
    chunks alike."""
    k = kind(chunk)
    if chunk.source == "eaa":
        # A definition's own heading ("<term> definition") already says what it is about.
        return plain_note(chunk.section, chunk.meta.get("points", "").split()) if k != "definition" else None
    if k == "success-criterion":
        return FAILURE_NOTES.get(chunk.section)
    if k == "understanding":
        return FAILURE_NOTES.get(chunk.meta.get("criterion", ""))
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


__all__ = ["INDEX_TEXT_VERSION", "embedding_text", "keyword_fields", "kind"]
