"""The questions each part of the two texts answers, in the words people ask them.

A question in users' words ("we're 8 people with €1.5m turnover: are we micro?") is more like
another question than like the Act's text (a definition by headcount and annual turnover), and
more like one question than like a note that lists twenty situations at once: a passage's single
vector averages everything it says. So each article, Article 3 definition, annex section and
recital of the Act has a few questions of its own (2 to 8), each numbered paragraph of the articles
that set duties and procedures two to four more (keyed "Article 10(2)", counted for the paragraph
and its article), and each WCAG success criterion seven, each embedded on its own. The search reads which
part's questions are nearest to a new question and counts that as evidence for the part's passages
(search/question_leg.py).

They are indexed as the source `questions`: embedded at ingest like every passage, so the local
index and OpenSearch serve them the same way, and never cited: the citable legs never read them, and
they are not in `SOURCES`. Each is a chunk whose section is the part it answers ("Article 4",
"Article 3(23)", "Annex I Section IV", "Annex II", "Recital 41"), and whose `answers` names that
part's source.

The questions (questions/*.json, one file per source) were written from the texts, in users' words,
apart from every evaluation set; tests/corpus/test_question_bank.py checks that none is in an
evaluation set and that none repeats the Act's wording.
"""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from groundchat.corpus.chunk import QUESTIONS, Chunk, make_chunk

# Part of the ingest's source hash: bump it whenever this converter writes different chunks from the
# same files.
CONVERTER_VERSION = "1"


def bank_dir() -> Path:
    """The folder the package ships the questions in."""
    return Path(str(resources.files("groundchat.corpus").joinpath("questions")))


def source_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def read_bank(path: Path) -> dict[str, list[str]]:
    """{part: [question, …]} from one file, refused with its path if it is not that shape."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not all(
            isinstance(k, str) and isinstance(v, list) and all(isinstance(q, str) and q.strip() for q in v)
            for k, v in data.items()):
        raise ValueError(f"{path}: expected an object of part -> list of non-empty questions")
    return data


def convert(folder: Path) -> list[Chunk]:
    """One chunk per question; the file's stem is the source its parts belong to (`eaa.json`)."""
    chunks = []
    for path in source_files(folder):
        for part, questions in read_bank(path).items():
            for question in questions:
                chunks.append(make_chunk(source=QUESTIONS, section=part, title=part, text=question.strip(),
                                         url="", meta={"answers": path.stem}))
    return chunks


__all__ = ["CONVERTER_VERSION", "bank_dir", "convert", "read_bank", "source_files"]
