"""Our notes on the two texts: data files, loaded once, and checked against the text at ingest.

A note says in everyday words what a passage is about, for the search only (the keyword heading and
the embedding text, corpus/index_text.py); it is never shown or cited and states no more than the
text does. The notes live in corpus/notes/<kind>.jsonl, one a line, keyed by source and section:

    {"source": "wcag22", "section": "1.4.3", "note": "...", "text_sha256": "0123456789abcdef"}

| file | one note per | written for (what `text_sha256` hashes) | must have one |
|---|---|---|---|
| wcag_failures | success criterion ("1.4.3"): how people describe its failures; its Understanding passages read it too | the criterion's passage | every criterion |
| eaa_articles | article or annex section as a whole ("Article 7", "Annex I Section IV") | all its passages: paragraphs, definitions, points | every article and annex section |
| eaa_situations | the same: the situations people bring to it | the same | all of those but Article 3 |
| eaa_paragraphs | paragraph ("Article 7(3)"; an article of one paragraph is "Article 34") | the paragraph | every paragraph but Article 3's opening |
| eaa_recitals | recital ("Recital 12") | the recital | every recital |
| eaa_points | point of a long annex section ("Annex I Section IV, point (g)") | the passages holding the point or one of its sub-points | every passage of points (not an opening) in a section that has point notes |

`text_sha256` is the first 16 hex digits of the SHA-256 of those passages' texts as the converter
writes them (the text a chunk cites), each with its whitespace collapsed (corpus/text.py `collapse`),
sorted, and joined by "\\n" (sorted: an index gives a source's passages back in an order of its own,
and the ingest checks the chunks it copies from the serving index too). The ingest checks every
note against the chunks it is about to index (`check_notes`): a note whose section is gone, a section
whose text is not the one its note was written for, and a section that should have a note and has
none are reported by file and line (docs/engineering/notes.md).
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

from groundchat.corpus.annex_points import OPENING, POINT_SEPARATOR
from groundchat.corpus.chunk import Chunk, kind, whole_section
from groundchat.corpus.text import collapse

FAILURES, ARTICLES, SITUATIONS = "wcag_failures", "eaa_articles", "eaa_situations"
PARAGRAPHS, RECITALS, POINTS = "eaa_paragraphs", "eaa_recitals", "eaa_points"
KINDS = (FAILURES, ARTICLES, SITUATIONS, PARAGRAPHS, RECITALS, POINTS)
HASH_CHARS = 16


class NotesFileError(ValueError):
    """A line of a notes file that is not a note, or a second note for one section."""


@dataclass(frozen=True)
class Note:
    kind: str  # the file's name without .jsonl
    source: str
    section: str
    note: str
    text_sha256: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.kind}.jsonl:{self.line}"

    @property
    def key(self) -> tuple[str, str]:
        return self.kind, self.section


class Notes:
    """The notes by kind and section, in the files' order."""

    def __init__(self, entries: Iterable[Note]) -> None:
        self._by: dict[str, dict[str, Note]] = {k: {} for k in KINDS}
        for entry in entries:
            self._by[entry.kind][entry.section] = entry

    def get(self, kind: str, section: str) -> str | None:
        entry = self._by[kind].get(section)
        return entry.note if entry else None

    def entries(self, kind: str) -> list[Note]:
        return list(self._by[kind].values())

    def without(self, keys: Iterable[Sequence[str]]) -> Notes:
        """These notes but those keyed (kind, section)."""
        drop = {tuple(key) for key in keys}
        return Notes(e for k in KINDS for e in self._by[k].values() if e.key not in drop)


def notes_dir() -> Path:
    """The folder the package ships the notes in."""
    return Path(str(resources.files("groundchat.corpus").joinpath("notes")))


def data_files(folder: Path | None = None) -> list[Path]:
    return [(folder or notes_dir()) / f"{k}.jsonl" for k in KINDS]


@cache
def load(folder: Path | None = None) -> Notes:
    """Every notes file, read once (tests may pass a folder of their own)."""
    return Notes(note for path in data_files(folder) for note in _read(path))


def _read(path: Path) -> Iterator[Note]:
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            note = Note(path.stem, entry["source"], entry["section"], entry["note"], entry["text_sha256"], number)
        except (ValueError, KeyError, TypeError) as exc:
            raise NotesFileError(f"{path.name}:{number}: not a note ({type(exc).__name__}: {exc})") from exc
        if note.source != SOURCE_OF[note.kind] or note.section in seen:
            raise NotesFileError(f"{path.name}:{number}: a second note for {note.section}" if note.section in seen
                                 else f"{path.name}:{number}: source {note.source!r}, not {SOURCE_OF[note.kind]!r}")
        seen.add(note.section)
        yield note


# The notes the index derives its text from: all of them, unless an ingest withholds some.
_IN_USE: ContextVar[Notes | None] = ContextVar("groundchat_notes_in_use", default=None)


def in_use() -> Notes:
    return _IN_USE.get() or load()


@contextmanager
def using(notes: Notes) -> Generator[Notes, None, None]:
    """Derive the index's text from these notes within the block (an ingest that indexes without
    the notes its check found out of date)."""
    token = _IN_USE.set(notes)
    try:
        yield notes
    finally:
        _IN_USE.reset(token)


def text_sha256(passages: Sequence[Chunk]) -> str:
    text = "\n".join(sorted(collapse(c.text) for c in passages))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_CHARS]


# -- the check --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Rule:
    source: str
    key: Callable[[Chunk], str | None]  # the section a passage's note of this kind is keyed by
    needs: str
    exempt: frozenset[str] = frozenset()


def _part(c: Chunk) -> str | None:
    return whole_section(c.section) if kind(c) in ("article", "definition", "annex") else None


def _own(*kinds: str) -> Callable[[Chunk], str | None]:
    return lambda c: c.section if kind(c) in kinds else None


# Article 3 is its definitions, each found by its term: it has an article note, no situations and
# no paragraph note for its opening line.
_RULES = {
    FAILURES: _Rule("wcag22", _own("success-criterion"), "every success criterion has one"),
    ARTICLES: _Rule("eaa", _part, "every article and annex section has one"),
    SITUATIONS: _Rule("eaa", _part, "every article and annex section but Article 3 has one", frozenset({"Article 3"})),
    PARAGRAPHS: _Rule("eaa", _own("article"), "every paragraph but Article 3's opening has one", frozenset({"Article 3"})),
    RECITALS: _Rule("eaa", _own("recital"), "every recital has one"),
}
SOURCE_OF = {**{k: rule.source for k, rule in _RULES.items()}, POINTS: "eaa"}


@dataclass(frozen=True)
class Problem:
    kind: str
    section: str
    what: str  # "orphan" (its section is gone), "changed" (its text is another), "missing"
    detail: str
    note: Note | None = None  # the note not to use; None for a missing one

    @property
    def where(self) -> str:
        return self.note.where if self.note else f"{self.kind}.jsonl"

    def __str__(self) -> str:
        return f"{self.where}: {self.detail}"


@dataclass
class NotesReport:
    problems: list[Problem] = field(default_factory=list)

    def unusable(self) -> list[Note]:
        return [p.note for p in self.problems if p.note is not None]

    def lines(self) -> list[str]:
        return [str(p) for p in self.problems]


class NotesOutOfDate(ValueError):
    """The notes do not match the converted text and the ingest stops (GROUNDCHAT_NOTES_CHECK=stop)."""

    def __init__(self, report: NotesReport) -> None:
        self.report = report
        super().__init__(
            f"{len(report.problems)} note problem(s) against the converted text; fix the notes (corpus/notes/, "
            "docs/engineering/notes.md) or set GROUNDCHAT_NOTES_CHECK=warn to index without them:\n"
            + "\n".join(f"  {line}" for line in report.lines()))


def check_notes(chunks: Sequence[Chunk], notes: Notes | None = None) -> NotesReport:
    """The notes of the chunks' sources (wcag22, eaa) checked against those chunks: a note whose
    section the chunks lack, a section whose text hash is not its note's `text_sha256`, and a section
    that must have a note and has none. A source without chunks here is not checked."""
    notes = notes or load()
    sources = {c.source for c in chunks}
    problems: list[Problem] = []
    for name, rule in _RULES.items():
        if rule.source in sources:
            problems += _check_sections(name, rule, [c for c in chunks if c.source == rule.source], notes)
    if SOURCE_OF[POINTS] in sources:
        problems += _check_points([c for c in chunks if c.source == SOURCE_OF[POINTS]], notes)
    return NotesReport(problems)


def _check_sections(name: str, rule: _Rule, chunks: list[Chunk], notes: Notes) -> list[Problem]:
    passages: dict[str, list[Chunk]] = {}
    for c in chunks:
        if (key := rule.key(c)) is not None:
            passages.setdefault(key, []).append(c)
    found = [_against(entry, passages.get(entry.section, [])) for entry in notes.entries(name)]
    # A missing note's report carries the hash a new note for the section would carry.
    missing = [Problem(name, s, "missing", f"no note for {s} ({rule.needs}; its text_sha256: {text_sha256(found_for)})")
               for s, found_for in passages.items() if s not in rule.exempt and notes.get(name, s) is None]
    return [p for p in found if p] + missing


def _against(entry: Note, passages: list[Chunk]) -> Problem | None:
    if not passages:
        return Problem(entry.kind, entry.section, "orphan",
                       f"note for {entry.section}, which the converted text no longer has", entry)
    now = text_sha256(passages)
    if now != entry.text_sha256:
        return Problem(entry.kind, entry.section, "changed", f"note for {entry.section} was written for "
                       f"another text (text_sha256 {entry.text_sha256}, the text now {now})", entry)
    return None


def covers(key: str, label: str) -> bool:
    """A point's note covers the point and its sub-points: "(g)" covers "(g)" and "(g)(iii)"."""
    return label == key or label.startswith(key + "(")


def _check_points(chunks: list[Chunk], notes: Notes) -> list[Problem]:
    keys = [(entry, *entry.section.split(POINT_SEPARATOR, 1)) for entry in notes.entries(POINTS)]
    labelled = [(c, whole_section(c.section), c.meta.get("points", "").split()) for c in chunks]
    # A passage kept whole records no points; an opening's note is its section's.
    labelled = [(c, section, labels) for c, section, labels in labelled if labels and OPENING not in labels]
    found = [_against(entry, [c for c, s, labels in labelled if s == section and any(covers(key, l) for l in labels)])
             for entry, section, key in keys]
    noted = {section for _, section, _ in keys}
    missing = [Problem(POINTS, c.section, "missing", f"no note for any point of {c.section} (every passage of "
                       "points in a section with point notes has one)")
               for c, s, labels in labelled if s in noted
               and not any(section == s and covers(key, l) for _, section, key in keys for l in labels)]
    return [p for p in found if p] + missing


__all__ = ["KINDS", "Note", "Notes", "NotesOutOfDate", "NotesReport", "Problem", "check_notes", "covers",
           "data_files", "in_use", "load", "text_sha256", "using"]
