"""Directive (EU) 2019/882 (the European Accessibility Act) from the Official Journal PDF.

Recitals, articles with their paragraphs, each of Article 3's definitions, and each annex section
(Annex I Sections I-VII, Annex II Sections I-IV, Annexes III-VI), a long one by its points. Page headers and the footnotes
under them are removed; footnote marks in the text are kept as "(27)".
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pypdf import PdfReader

from groundchat.corpus.annex_points import split_section
from groundchat.corpus.chunk import Chunk, make_chunk

# Part of the ingest's source hash: bump it whenever this converter writes different chunks from the
# same files, so the next ingest converts the source again instead of keeping the old chunks.
# 2: long annex sections as passages of their points; 3: each passage's points in its meta
CONVERTER_VERSION = "3"
HTML_URL = "https://eur-lex.europa.eu/legal-content/EN/TXT/HTML/?uri=CELEX:32019L0882"
# The Official Journal issue date (OJ L 151, 7.6.2019).
UPDATED_AT = "2019-06-07T00:00:00Z"
TITLE = "Directive (EU) 2019/882 (European Accessibility Act)"

# A page's running header sits at its foot in the extracted text; the footnotes come after it.
_RUNNING_HEADER = re.compile(r"^EN (L 151/\d+ Official Journal|7\.6\.2019 Official Journal)")
_FOOTNOTE_MARK = re.compile(r"\(\s+(\d+)\s+\)")
_SOFT_HYPHEN_BREAK = re.compile(r"\u00ad\s*$")
_ARTICLE = re.compile(r"^Article (\d+)$")
_CHAPTER = re.compile(r"^CHAPTER [IVX]+$")
_ANNEX = re.compile(r"^ANNEX ([IVX]+)$")
_ANNEX_II_SECTION = re.compile(r"^SECTION ([IVX]+):$")
_NUMBERED = re.compile(r"^(\d+)\.\s+(.*)$")
_PARENTHESISED = re.compile(r"^\((\d+)\)\s+(.*)$")
_POINT = re.compile(r"^(\([a-z]{1,4}\)|\([ivx]+\)|\u2014|\d+\.\d*\.?\s)")
# Marks a heading recovered from letter-spaced type (Annex I's section headings).
_SPACED_MARK = "\x00"
_ANNEX_II_TABLE_HEAD = {"REQUIREMENTS IN", "EXAMPLES", "ANNEX I"}
ROMAN = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI"]


@dataclass
class Paragraph:
    num: int | None
    text: str


@dataclass
class Definition:
    num: int
    term: str
    text: str


@dataclass
class Article:
    num: int
    title: str
    chapter: str
    paragraphs: list[Paragraph] = field(default_factory=list)
    definitions: list[Definition] = field(default_factory=list)


@dataclass
class AnnexPart:
    annex: str
    section: str | None
    title: str
    text: str


@dataclass
class Eaa:
    recitals: list[tuple[int, str]]
    articles: list[Article]
    annexes: list[AnnexPart]


def source_files(pdf: Path) -> list[Path]:
    return [pdf]


def parse(pdf: Path) -> Eaa:
    marked = _clean_lines(pdf)
    lines = [line.lstrip(_SPACED_MARK) for line in marked]
    recital_lines, rest = _split_at(lines, "HAVE ADOPTED THIS DIRECTIVE:")
    whereas = recital_lines.index("Whereas:")
    recitals = _numbered_blocks(recital_lines[whereas + 1:], _PARENTHESISED)
    annex_start = next(i for i, line in enumerate(rest) if line == "ANNEX I")
    articles = _articles(rest[:annex_start])
    annexes = _annexes(marked[len(marked) - len(rest) + annex_start:])
    return Eaa(recitals=[(n, _join(t)) for n, t in recitals], articles=articles, annexes=annexes)


def convert(pdf: Path) -> list[Chunk]:
    doc = parse(pdf)
    chunks: list[Chunk] = []
    for num, text in doc.recitals:
        chunks.append(_chunk(f"Recital {num}", f"Recital ({num})", text, f"rct_{num}"))
    for art in doc.articles:
        title = f"Article {art.num}" + (f" {art.title}" if art.title else "")
        head = f"{title} (Chapter {art.chapter})" if art.chapter else title
        numbered = [p for p in art.paragraphs if p.num is not None]
        if numbered and art.num != 3:
            # One chunk per numbered paragraph: a long article as one passage is found by neither
            # leg (its vector only sees the first 256 tokens) and would be cut by the excerpt ceiling.
            lead = " ".join(p.text for p in art.paragraphs if p.num is None)
            for p in numbered:
                text = f"{head}, paragraph {p.num}\n" + (f"{lead}\n" if lead and p is numbered[0] else "") + f"{p.num}. {p.text}"
                chunks.append(_chunk(f"Article {art.num}({p.num})", f"{title}, paragraph {p.num}", text,
                                     f"art_{art.num}", {"chapter": art.chapter, "article": str(art.num)}))
        else:
            body = [head, *(f"{p.num}. {p.text}" if p.num is not None else p.text for p in art.paragraphs)]
            if art.definitions:
                body = [head, art.paragraphs[0].text.split("(1)")[0].strip()] if art.paragraphs else [head]
            chunks.append(_chunk(f"Article {art.num}", title, "\n".join(body), f"art_{art.num}",
                                 {"chapter": art.chapter, "article": str(art.num)}))
        for d in art.definitions:
            chunks.append(_chunk(f"Article {art.num}({d.num})", f"Article {art.num}({d.num}) Definition of ‘{d.term}’",
                                 f"Article {art.num}({d.num}) {d.text}", f"art_{art.num}", {"term": d.term, "article": str(art.num)}))
    for part in doc.annexes:
        section = f"Annex {part.annex}" + (f" Section {part.section}" if part.section else "")
        # A long section is cited point by point (corpus/annex_points.py).
        for passage in split_section(section, part.title, part.text):
            meta = {"points": " ".join(passage.points)} if passage.points else None
            chunks.append(_chunk(passage.section, passage.title, passage.text, f"anx_{part.annex}", meta))
    return chunks


def _chunk(section: str, title: str, text: str, anchor: str, meta: dict[str, str] | None = None) -> Chunk:
    return make_chunk(source="eaa", section=section, title=title, text=text,
                      url=f"{HTML_URL}#{anchor}", updated_at=UPDATED_AT, meta=meta)


# -- page text -----------------------------------------------------------------------------------

def _clean_lines(pdf: Path) -> list[str]:
    reader = PdfReader(str(pdf))
    out: list[str] = []
    for page in reader.pages:
        raw = page.extract_text().splitlines()
        spaced = [i for i, line in enumerate(raw) if _letter_spaced(line)]
        layout = page.extract_text(extraction_mode="layout").splitlines() if spaced else []
        for i, line in enumerate(raw):
            if _RUNNING_HEADER.match(line.strip()):
                break  # the rest of the page is footnotes
            if i in spaced:
                line = _SPACED_MARK + _unspace(line, layout)
            line = _FOOTNOTE_MARK.sub(r"(\1)", line).rstrip()
            line = re.sub(r"\s+([,.;])", r"\1", line) if "Official Journal" in line else line
            if not line.strip():
                continue
            out.append(line.strip() if not _SOFT_HYPHEN_BREAK.search(line) else line.rstrip())
    return out


def _letter_spaced(line: str) -> bool:
    tokens = line.split()
    return len(tokens) >= 4 and all(len(t) == 1 for t in tokens)


def _unspace(line: str, layout: list[str]) -> str:
    """Letter-spaced headings lose their word gaps in plain extraction; the layout one keeps them."""
    letters = "".join(line.split())
    for candidate in layout:
        if "".join(candidate.split()) == letters:
            words = re.split(r"\s{2,}", candidate.strip())
            return " ".join("".join(w.split()) for w in words)
    return letters


def _split_at(lines: list[str], marker: str) -> tuple[list[str], list[str]]:
    i = lines.index(marker)
    return lines[:i], lines[i + 1:]


def _join(lines: list[str]) -> str:
    """Lines back into running text: hyphenated breaks joined, list points on their own lines."""
    text = ""
    for line in lines:
        if not text:
            text = line
        elif _SOFT_HYPHEN_BREAK.search(text):
            text = _SOFT_HYPHEN_BREAK.sub("", text).rstrip() + line
        elif text.endswith("-") and len(text) > 1 and text[-2].isalpha():
            text += line
        elif _POINT.match(line):
            text += "\n" + line
        else:
            text += " " + line
    return _SOFT_HYPHEN_BREAK.sub("", text).replace("\u00ad", "").strip()


def _numbered_blocks(lines: list[str], pattern: re.Pattern[str], first: int = 1) -> list[tuple[int, list[str]]]:
    """Split lines at markers numbered first, first+1, ... (a marker out of sequence is text)."""
    blocks: list[tuple[int, list[str]]] = []
    expected = first
    for line in lines:
        m = pattern.match(line)
        if m and int(m.group(1)) == expected:
            blocks.append((expected, [m.group(2)]))
            expected += 1
        elif blocks:
            blocks[-1][1].append(line)
    return blocks


# -- articles ------------------------------------------------------------------------------------

def _articles(lines: list[str]) -> list[Article]:
    articles: list[Article] = []
    chapter = ""
    body: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _ARTICLE.match(line)
        if _CHAPTER.match(line):
            _finish(articles, body)
            body = []
            chapter = f"{line.split()[1]} {lines[i + 1]}"
            i += 2
            continue
        if m and int(m.group(1)) == len(articles) + 1:
            _finish(articles, body)
            body = []
            title = ""
            following = lines[i + 1] if i + 1 < len(lines) else ""
            if _is_title(following):
                title = following
                i += 1
                # A long title wraps onto a short lower-case line before the first paragraph.
                while i + 1 < len(lines) and lines[i + 1][:1].islower() and len(lines[i + 1]) < 60 \
                        and not lines[i + 1].endswith("."):
                    title += " " + lines[i + 1]
                    i += 1
            articles.append(Article(num=int(m.group(1)), title=title, chapter=chapter))
            i += 1
            continue
        if line.startswith("Done at "):
            break  # the signatures follow the last article
        body.append(line)
        i += 1
    _finish(articles, body)
    return articles


def _is_title(line: str) -> bool:
    # Articles 34 and 35 have no title: their first line is already the provision.
    return (bool(line) and len(line) < 110 and line[0].isupper() and not line.startswith("This Directive")
            and not line.endswith((".", ":", ";", ",")))


def _finish(articles: list[Article], body: list[str]) -> None:
    if not articles or not body:
        return
    art = articles[-1]
    blocks = _numbered_blocks(body, _NUMBERED)
    lead = body[: body.index(_first_line_of(body, blocks))] if blocks else body
    if lead:
        art.paragraphs.append(Paragraph(num=None, text=_join(lead)))
    art.paragraphs.extend(Paragraph(num=n, text=_join(t)) for n, t in blocks)
    if art.num == 3:
        art.definitions = _definitions(body)


def _first_line_of(body: list[str], blocks: list[tuple[int, list[str]]]) -> str:
    first = blocks[0][1][0]
    return next(line for line in body if line.endswith(first) and _NUMBERED.match(line))


def _definitions(body: list[str]) -> list[Definition]:
    out = []
    for num, lines in _numbered_blocks(body, _PARENTHESISED):
        text = re.sub(r"(;|\.)(\s+and)?$", "", _join(lines)).strip()
        term = re.match(r"[‘'](.+?)[’']", text)
        out.append(Definition(num=num, term=term.group(1) if term else "", text=text))
    return out


# -- annexes -------------------------------------------------------------------------------------

def _annexes(lines: list[str]) -> list[AnnexPart]:
    parts: list[AnnexPart] = []
    annex = ""
    annex_title = ""
    section: str | None = None
    title = ""
    body: list[str] = []
    expected_annex = 0

    def flush() -> None:
        if annex and body:
            parts.append(AnnexPart(annex=annex, section=section, title=title or annex_title, text=_join(body)))

    i = 0
    while i < len(lines):
        line = lines[i]
        m = _ANNEX.match(line)
        if m and m.group(1) == ROMAN[expected_annex]:
            flush()
            body = []
            annex, section, expected_annex = m.group(1), None, expected_annex + 1
            i, annex_title = _upper_block(lines, i + 1, stop=lambda s: bool(_ANNEX_II_SECTION.match(s)))
            title = ""
            continue
        if annex == "I" and line.startswith(_SPACED_MARK + "Section "):
            flush()
            body = []
            section = line.split()[1]
            j = i + 1
            heading = []
            while j < len(lines) and lines[j].startswith(_SPACED_MARK):
                heading.append(lines[j].lstrip(_SPACED_MARK))
                j += 1
            title, i = " ".join(heading), j
            continue
        sm = _ANNEX_II_SECTION.match(line)
        if annex == "II" and sm:
            flush()
            body = []
            section = sm.group(1)
            i, title = _upper_block(lines, i + 1, stop=lambda s: s == "REQUIREMENTS IN")
            continue
        if annex == "II" and (line in _ANNEX_II_TABLE_HEAD or re.match(r"^SECTION [IVX]+ OF$", line)):
            i += 1
            continue
        body.append(line)
        i += 1
    flush()
    return parts


def _upper_block(lines: list[str], i: int, stop=lambda s: False) -> tuple[int, str]:
    block = []
    while i < len(lines) and _upper(lines[i]) and not stop(lines[i]):
        block.append(lines[i])
        i += 1
    return i, " ".join(block)


def _upper(line: str) -> bool:
    # Headings are set in capitals; a point reference such as "(b)" inside one stays lower case.
    bare = re.sub(r"\([a-z]\)", "", line)
    return bare.upper() == bare and any(c.isalpha() for c in bare)
