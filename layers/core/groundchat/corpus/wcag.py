"""WCAG 2.2 from the W3C source: index.html with its respec data-includes resolved.

One chunk per success criterion (normative text and notes), per guideline, per principle and per
glossary term. `wcag.json` in the same folder is stale (no glossary, old 2.5.8), so it is not used.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bs4 import BeautifulSoup, Tag
from bs4.element import NavigableString

from groundchat.corpus import understanding
from groundchat.corpus.chunk import Chunk, make_chunk
from groundchat.corpus.text import collapse

# Part of the ingest's source hash: bump it whenever this converter writes different chunks from the
# same files, so the next ingest converts the source again instead of keeping the old chunks.
CONVERTER_VERSION = "2"  # 2: Understanding WCAG 2.2 chunks beside the Recommendation's
TR_URL = "https://www.w3.org/TR/WCAG22/"
# The Recommendation's date (respec-config.js publishDate of the WCAG22-20241212 tag).
UPDATED_AT = "2024-12-12T00:00:00Z"
_SKIP_CLASSES = {"conformance-level", "change"}


@dataclass
class Criterion:
    num: str
    id: str
    handle: str
    level: str
    text: str
    notes: list[str]
    guideline: str
    principle: str
    obsolete: bool = False


@dataclass
class Guideline:
    num: str
    id: str
    handle: str
    text: str
    criteria: list[str] = field(default_factory=list)


@dataclass
class Principle:
    num: str
    id: str
    handle: str
    text: str
    guidelines: list[str] = field(default_factory=list)


@dataclass
class Term:
    term: str
    id: str
    aliases: list[str]
    definition: str
    notes: list[str]


@dataclass
class Wcag:
    principles: list[Principle]
    guidelines: list[Guideline]
    criteria: list[Criterion]
    terms: list[Term]


def source_files(root: Path) -> list[Path]:
    """The files this converter reads (what the ingest hashes to decide whether to reconvert),
    Understanding WCAG's beside the Recommendation's when that folder is there."""
    files = [root / "index.html"]
    for sub in ("sc", "terms"):
        files.extend(sorted(p for p in (root / sub).rglob("*.html") if p.is_file()))
    return files + understanding.source_files(understanding.understanding_root(root))


def load_document(root: Path) -> BeautifulSoup:
    soup = BeautifulSoup((root / "index.html").read_text(encoding="utf-8"), "html.parser")
    for holder in soup.select("[data-include]"):
        # Only the criteria and terms are part of the corpus; the other includes (acknowledgements,
        # change logs) live outside the guidelines folder and are not indexed.
        include = _attribute(holder, "data-include")
        if not include.startswith(("sc/", "terms/")):
            continue
        included = BeautifulSoup((root / include).read_text(encoding="utf-8"), "html.parser")
        if holder.get("data-include-replace") == "true":
            holder.replace_with(included)
        else:
            holder.clear()
            holder.append(included)
    # Re-parse so the included fragments become ordinary parts of the tree.
    return BeautifulSoup(str(soup), "html.parser")


def parse(root: Path) -> Wcag:
    soup = load_document(root)
    principles: list[Principle] = []
    guidelines: list[Guideline] = []
    criteria: list[Criterion] = []
    for p_index, p_sec in enumerate(soup.select("section.principle"), start=1):
        principle = Principle(
            num=str(p_index), id=_attribute(p_sec, "id"), handle=collapse(_one(p_sec, "h2").get_text()),
            text=_first_paragraph(p_sec),
        )
        principles.append(principle)
        for g_index, g_sec in enumerate(p_sec.find_all("section", class_="guideline", recursive=False), start=1):
            guideline = Guideline(
                num=f"{principle.num}.{g_index}", id=_attribute(g_sec, "id"), handle=collapse(_one(g_sec, "h3").get_text()),
                text=_first_paragraph(g_sec),
            )
            guidelines.append(guideline)
            principle.guidelines.append(guideline.num)
            for s_index, s_sec in enumerate(g_sec.find_all("section", class_="sc", recursive=False), start=1):
                criterion = _criterion(s_sec, f"{guideline.num}.{s_index}", guideline.num, principle.num)
                criteria.append(criterion)
                guideline.criteria.append(criterion.num)
    terms = [_term(dt) for dt in soup.select("#terms > dt")]
    return Wcag(principles=principles, guidelines=guidelines, criteria=criteria, terms=terms)


def convert(root: Path) -> list[Chunk]:
    doc = parse(root)
    chunks: list[Chunk] = []
    for p in doc.principles:
        chunks.append(make_chunk(
            source="wcag22", section=f"Principle {p.num}", title=f"Principle {p.num} {p.handle}",
            text=f"Principle {p.num} {p.handle}: {p.text}\nGuidelines: {', '.join(p.guidelines)}",
            url=TR_URL + "#" + p.id, updated_at=UPDATED_AT, meta={"kind": "principle"},
        ))
    by_num = {c.num: c for c in doc.criteria}
    guideline_of = {g.num: g for g in doc.guidelines}
    for g in doc.guidelines:
        listed = "; ".join(f"{n} {by_num[n].handle}" for n in g.criteria)
        chunks.append(make_chunk(
            source="wcag22", section=f"Guideline {g.num}", title=f"Guideline {g.num} {g.handle}",
            text=f"Guideline {g.num} {g.handle}: {g.text}\nSuccess criteria: {listed}",
            url=TR_URL + "#" + g.id, updated_at=UPDATED_AT, meta={"kind": "guideline"},
        ))
    for c in doc.criteria:
        level = f" (Level {c.level})" if c.level else ""
        g = guideline_of[c.guideline]
        # The guideline's name gives the criterion its topic words (e.g. "Time-based Media").
        body = [f"Success Criterion {c.num} {c.handle}{level}, under Guideline {g.num} {g.handle}"]
        if c.text:
            body.append(c.text)
        body.extend(f"Note: {n}" for n in c.notes)
        chunks.append(make_chunk(
            source="wcag22", section=c.num, title=f"{c.num} {c.handle}",
            text="\n".join(body), url=TR_URL + "#" + c.id, updated_at=UPDATED_AT,
            meta={"kind": "success-criterion", "level": c.level, "handle": c.handle, "guideline": c.guideline},
        ))
    refs = [understanding.CriterionRef(id=c.id, num=c.num, handle=c.handle, level=c.level,
                                       guideline=f"{c.guideline} {guideline_of[c.guideline].handle}") for c in doc.criteria]
    chunks.extend(understanding.convert(understanding.understanding_root(root), refs))
    for t in doc.terms:
        body = [f"{t.term}: {t.definition}", *(f"Note: {n}" for n in t.notes)]
        chunks.append(make_chunk(
            source="wcag22", section=f"Glossary: {t.term}", title=f"Definition of {t.term}",
            text="\n".join(body), url=TR_URL + "#" + t.id, updated_at=UPDATED_AT, meta={"kind": "term"},
        ))
    return chunks


def _first_paragraph(section: Tag) -> str:
    para = section.find("p", recursive=False)
    return collapse(para.get_text()) if para else ""


def _label_nested_notes(container: Tag) -> None:
    # A note inside a list item or definition stays in the running text, so it keeps its label.
    for note in container.select(".note"):
        if note.parent is not container:
            note.insert(0, "Note: ")


def _criterion(sec: Tag, num: str, guideline: str, principle: str) -> Criterion:
    _label_nested_notes(sec)
    level_tag = sec.find("p", class_="conformance-level")
    handle = collapse(_one(sec, "h4").get_text())
    blocks: list[str] = []
    notes: list[str] = []
    for child in _element_children(sec):
        if child.name == "h4" or _classes(child) & _SKIP_CLASSES:
            continue
        if "note" in _classes(child):
            notes.append(_render(child))
        else:
            rendered = _render(child)
            if rendered:
                blocks.append(rendered)
    return Criterion(
        num=num, id=_attribute(sec, "id"), handle=handle, level=collapse(level_tag.get_text()) if level_tag else "",
        text="\n".join(blocks), notes=notes, guideline=guideline, principle=principle,
        obsolete="obsolete" in handle.lower(),
    )


def _term(dt: Tag) -> Term:
    dfn = _one(dt, "dfn")
    dd = dt.find_next_sibling("dd")
    if dd is None:
        raise ValueError(f"WCAG: the term {dfn.get_text()!r} has no definition (<dd>)")
    aliases = [a.strip() for a in _attribute(dfn, "data-lt", "").split("|") if a.strip()]
    blocks: list[str] = []
    notes: list[str] = []
    _label_nested_notes(dd)
    for child in _element_children(dd):
        if _classes(child) & _SKIP_CLASSES:
            continue
        (notes if "note" in _classes(child) else blocks).append(_render(child))
    return Term(
        term=collapse(dfn.get_text()), id=_attribute(dfn, "id"), aliases=aliases,
        definition="\n".join(b for b in blocks if b), notes=[n for n in notes if n],
    )


def _one(tag: Tag, name: str) -> Tag:
    """The first `name` element inside `tag`; the document's structure is what this converter
    reads, so a missing one says where instead of failing later on None."""
    found = tag.find(name)
    if found is None:
        raise ValueError(f"WCAG: no <{name}> inside <{tag.name} id={tag.get('id')!r}>")
    return found


def _attribute(tag: Tag, name: str, default: str | None = None) -> str:
    """A single-valued attribute's text (`id`, `data-include`); `default` where it may be absent."""
    value = tag.get(name)
    if isinstance(value, str):
        return value
    if value is None and default is not None:
        return default
    raise ValueError(f"WCAG: <{tag.name}> has no single {name!r} attribute ({value!r})")


def _element_children(tag: Tag) -> list[Tag]:
    return [c for c in tag.children if isinstance(c, Tag)]


def _classes(tag: Tag) -> set[str]:
    return set(tag.get("class") or [])


def _render(tag: Tag, depth: int = 0) -> str:
    """Block markup as plain text with light Markdown (bullets, bold terms): readable in a chat."""
    indent = "  " * depth
    if tag.name == "dl":
        lines: list[str] = []
        for dt in tag.find_all("dt", recursive=False):
            dd = dt.find_next_sibling("dd")
            lines.append(f"{indent}- **{collapse(dt.get_text())}:** {collapse(dd.get_text()) if dd else ''}")
        return "\n".join(lines)
    if tag.name in ("ul", "ol"):
        lines = []
        for n, li in enumerate(tag.find_all("li", recursive=False), start=1):
            lines.append(_render_item(li, depth, f"{n}." if tag.name == "ol" else "-"))
        return "\n".join(lines)
    if tag.name in ("div", "aside", "section") and _element_children(tag):
        parts = [_render(c, depth) for c in _element_children(tag)]
        loose = "".join(str(c) for c in tag.children if isinstance(c, NavigableString)).strip()
        if loose:
            return collapse(tag.get_text())
        return "\n".join(p for p in parts if p)
    return indent + collapse(tag.get_text()) if collapse(tag.get_text()) else ""


def _render_item(li: Tag, depth: int, marker: str) -> str:
    indent = "  " * depth
    nested = [c for c in _element_children(li) if c.name in ("ul", "ol", "dl")]
    if not nested:
        return f"{indent}{marker} {collapse(li.get_text())}"
    head = collapse("".join(c.get_text() if isinstance(c, Tag) else str(c) for c in li.children if c not in nested))
    lines = [f"{indent}{marker} {head}"] if head else []
    lines.extend(_render(n, depth + 1) for n in nested)
    return "\n".join(lines)
