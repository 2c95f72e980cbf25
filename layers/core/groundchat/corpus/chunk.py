"""The unit the index stores and the chat cites: one passage of one source."""
from __future__ import annotations

import hashlib
import re
from typing import Literal

from pydantic import BaseModel, Field

Source = Literal["wcag22", "eaa", "docs", "questions"]
# What a search reads and an answer cites.
SOURCES: tuple[str, ...] = ("wcag22", "eaa", "docs")
# The questions each part of a text answers (corpus/question_bank.py): indexed beside the texts to
# find their passages, never returned by a search or cited.
QUESTIONS = "questions"


class Chunk(BaseModel):
    id: str
    ref: str
    source: Source
    section: str
    title: str
    text: str
    url: str
    # ISO-8601 UTC with a trailing Z, or None where the source does not say.
    updated_at: str | None = None
    # Facts a tool may want without parsing the text (e.g. a criterion's level).
    meta: dict[str, str] = Field(default_factory=dict)


def chunk_id(source: str, section: str, text: str) -> str:
    # The id depends only on what is cited, so a re-ingest of unchanged text keeps every ref.
    digest = hashlib.sha256()
    for part in (source, section, text):
        digest.update(part.encode("utf-8"))
        digest.update(b"\x1f")
    return digest.hexdigest()


def make_chunk(
    *,
    source: str,
    section: str,
    title: str,
    text: str,
    url: str,
    updated_at: str | None = None,
    meta: dict[str, str] | None = None,
) -> Chunk:
    cid = chunk_id(source, section, text)
    return Chunk(
        id=cid,
        ref=cid[:8],
        source=source,  # type: ignore[arg-type]
        section=section,
        title=title,
        text=text,
        url=url,
        updated_at=updated_at,
        meta=meta or {},
    )


_PARAGRAPH = re.compile(r"\(\d+\)$")


# How an Understanding WCAG passage opens, so no answer takes it for the criterion's normative text.
UNDERSTANDING_LABEL = "Understanding WCAG 2.2 (informative)"


def whole_section(section: str) -> str:
    """The section a passage belongs to as a whole: an article for its paragraph or definition
    ("Article 19(2)" -> "Article 19"), a criterion for its Understanding chunks
    ("Understanding 1.4.3 Benefits" -> "1.4.3"), an annex section for its points ("Annex I Section I,
    point 2(e)" -> "Annex I Section I"); any other section is itself."""
    if section.startswith("Understanding "):
        return section.removeprefix("Understanding ").split(" ", 1)[0]
    if section.startswith("Annex "):
        return section.split(", ", 1)[0]  # "Annex I Section I, point 2(e)" (corpus/annex_points.py)
    return _PARAGRAPH.sub("", section)


def kind(chunk: Chunk) -> str:
    """`success-criterion`, `guideline`, `principle`, `term` (WCAG glossary), `understanding`
    (Understanding WCAG, informative), `recital`, `article`,
    `definition` (an EAA Article 3 definition), `annex`, `doc`, or `question` (corpus/question_bank.py).
    What the index derives from a chunk (corpus/index_text.py) and which notes it should have
    (corpus/notes.py) both follow from it."""
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
