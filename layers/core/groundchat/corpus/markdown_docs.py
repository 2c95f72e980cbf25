"""The project's own docs: every Markdown file split by heading, one chunk per section.

A file's date is the `updated:` line of its front matter when it has one (strict UTC, refused with
its file and line otherwise: `corpus/dates.py`), else the time of its last commit, else none.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from markdown_it import MarkdownIt

from groundchat.corpus.chunk import Chunk, make_chunk
from groundchat.corpus.dates import parse_utc, utc_from_timestamp

# Part of the ingest's source hash: bump it whenever this converter writes different chunks from the
# same files, so the next ingest converts the source again instead of keeping the old chunks.
CONVERTER_VERSION = "2"  # 2: front matter's `updated:` date, not indexed as text
_PARSER = MarkdownIt("commonmark")


# The site's own pages (its home, the guide, the architecture) and how the system is built and
# measured: for the people who run and change it, not a source the chat cites.
NOT_INDEXED = ("engineering", "guide", "architecture", "index.md")


def source_files(docs_dir: Path) -> list[Path]:
    if not docs_dir.is_dir():
        return []
    return sorted(p for p in docs_dir.rglob("*.md")
                  if p.is_file() and p.relative_to(docs_dir).parts[0] not in NOT_INDEXED)


def convert(docs_dir: Path, *, base_url: str = "docs/") -> list[Chunk]:
    chunks: list[Chunk] = []
    for path in source_files(docs_dir):
        rel = path.relative_to(docs_dir).as_posix()
        markdown, declared = front_matter_date(path.read_text(encoding="utf-8"), str(path))
        chunks.extend(convert_file(markdown, rel, base_url=base_url, updated_at=declared or _last_commit_time(path)))
    return chunks


def front_matter_date(markdown: str, file: str) -> tuple[str, str | None]:
    """(the text with its front matter blanked, its `updated:` date). The front matter is a block
    between `---` lines at the very top; its lines become empty, so line numbers stay true."""
    lines = markdown.splitlines()
    if not lines or lines[0].strip() != "---":
        return markdown, None
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        return markdown, None
    updated = None
    for number in range(1, end):
        key, _, value = lines[number].partition(":")
        if key.strip().lower() == "updated":
            updated = parse_utc(value, file=file, line=number + 1)
    return "\n".join([""] * (end + 1) + lines[end + 1:]), updated


def convert_file(markdown: str, rel: str, *, base_url: str = "docs/", updated_at: str | None = None) -> list[Chunk]:
    lines = markdown.splitlines()
    tokens = _PARSER.parse(markdown)
    # (start line, end line of heading, level, text): code fences and setext headings are handled
    # by the parser, which is why headings are not found with a regular expression.
    headings = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map:
            headings.append((tok.map[0], tok.map[1], int(tok.tag[1]), tokens[i + 1].content.strip()))
    sections: list[tuple[list[str], str, int, int]] = []  # (path, anchor, body start, body end)
    stack: list[tuple[int, str]] = []
    first_start = headings[0][0] if headings else len(lines)
    if any(line.strip() for line in lines[:first_start]):
        sections.append(([], "", 0, first_start))
    for n, (start, end, level, text) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, text))
        body_end = headings[n + 1][0] if n + 1 < len(headings) else len(lines)
        sections.append(([t for _, t in stack], _slug(text), end, body_end))
    chunks = []
    for path, anchor, start, end in sections:
        body = "\n".join(lines[start:end]).strip()
        if not body:
            continue
        section = " > ".join([rel, *path])
        title = path[-1] if path else rel
        chunks.append(make_chunk(
            source="docs", section=section, title=title, text=f"{title}\n{body}",
            url=f"{base_url}{rel}" + (f"#{anchor}" if anchor else ""), updated_at=updated_at,
        ))
    return chunks


def _slug(heading: str) -> str:
    # GitHub's anchor rule: lower case, punctuation dropped, spaces to hyphens.
    slug = re.sub(r"[^\w\- ]", "", heading.lower())
    return slug.replace(" ", "-")


def _last_commit_time(path: Path) -> str | None:
    """When the file last changed in git; None where that is unknown (no repository, not committed)."""
    try:
        out = subprocess.run(
            # Seconds since the epoch: a moment with no zone to misread.
            ["git", "log", "-1", "--format=%ct", "--", path.name],
            cwd=path.parent, capture_output=True, text=True, timeout=10, check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    if not out.isdigit():
        return None
    return utc_from_timestamp(int(out))
