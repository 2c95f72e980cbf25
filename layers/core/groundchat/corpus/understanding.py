"""Understanding WCAG 2.2 (a W3C Working Group Note): the plain-language companion of each success
criterion, which is what users' questions sound like ("why does low contrast matter?").

Each criterion's document becomes up to three chunks, linked to its criterion by the file name (the
criterion's id in the Recommendation): its "In brief" with the start of its intent, its benefits, and
its examples. Every chunk says in its title and first line that it is Understanding WCAG and
informative, so an answer never presents it as the criterion's normative text. The techniques and
resources lists are not indexed: they name technique ids, not what a page must do.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from bs4 import BeautifulSoup, Tag

from groundchat.corpus.chunk import UNDERSTANDING_LABEL, Chunk, make_chunk
from groundchat.corpus.text import collapse

UNDERSTANDING_URL = "https://www.w3.org/WAI/WCAG22/Understanding/"
# Published beside the Recommendation, from the same tag.
UPDATED_AT = "2024-12-12T00:00:00Z"
# Enough of a section for both legs to know what it is about; the embedding reads the head only.
MAX_SECTION_CHARS = 1500
_PARTS = (("benefits", "Benefits"), ("examples", "Examples"))


@dataclass(frozen=True)
class CriterionRef:
    """What a criterion's Understanding chunks say of it (from the Recommendation)."""

    id: str  # the criterion's id in the Recommendation, and its Understanding file's name
    num: str
    handle: str
    level: str
    guideline: str  # e.g. "1.4 Distinguishable"


def understanding_root(guidelines_root: Path) -> Path:
    """The folder beside `guidelines/` in the W3C source (and in the official archive)."""
    return guidelines_root.parent / "understanding"


def source_files(root: Path) -> list[Path]:
    """The criteria's documents: one folder per WCAG version (20, 21, 22)."""
    if not root.is_dir():
        return []
    return sorted(p for version in ("20", "21", "22") for p in (root / version).glob("*.html") if p.is_file())


def convert(root: Path, criteria: Iterable[CriterionRef]) -> list[Chunk]:
    by_id = {c.id: c for c in criteria}
    chunks: list[Chunk] = []
    for path in source_files(root):
        criterion = by_id.get(path.stem)
        if criterion is None:  # a guideline's or an obsolete criterion's document
            continue
        chunks.extend(_chunks(path, criterion))
    return chunks


def _chunks(path: Path, c: CriterionRef) -> list[Chunk]:
    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    num, handle = c.num, c.handle
    level = f"Level {c.level}, " if c.level else ""
    header = f"{UNDERSTANDING_LABEL} on {num} {handle} ({level}under Guideline {c.guideline})"
    url = f"{UNDERSTANDING_URL}{path.stem}.html"
    meta = {"kind": "understanding", "criterion": num, "handle": handle, "level": c.level}
    out: list[Chunk] = []
    brief = _brief(soup.find("section", id="brief"))
    intent = _text(soup.find("section", id="intent"))
    if brief or intent:
        body = "\n".join(part for part in (brief, _cut(intent)) if part)
        out.append(make_chunk(source="wcag22", section=f"Understanding {num}", title=f"Understanding {num} {handle} (informative)",
                              text=f"{header}\n{body}", url=url, updated_at=UPDATED_AT, meta=meta))
    for section_id, label in _PARTS:
        text = _text(soup.find("section", id=section_id))
        if text:
            out.append(make_chunk(source="wcag22", section=f"Understanding {num} {label}",
                                  title=f"Understanding {num} {handle}: {label.lower()} (informative)",
                                  text=f"{header}: {label.lower()}\n{_cut(text)}", url=f"{url}#{section_id}",
                                  updated_at=UPDATED_AT, meta=meta))
    return out


def _brief(section: Tag | None) -> str:
    """"Goal: …", "What to do: …", "Why it's important: …", one per line."""
    if section is None:
        return ""
    pairs = zip(section.find_all("dt"), section.find_all("dd"))
    return "\n".join(f"{collapse(dt.get_text(' '))}: {collapse(dd.get_text(' '))}" for dt, dd in pairs)


def _text(section: Tag | None) -> str:
    if section is None:
        return ""
    heading = section.find(["h2", "h3"])
    if heading is not None:
        heading.extract()  # the chunk's header already says which part this is
    return collapse(section.get_text(" "))


def _cut(text: str) -> str:
    if len(text) <= MAX_SECTION_CHARS:
        return text
    return text[:MAX_SECTION_CHARS].rsplit(" ", 1)[0] + " …"
