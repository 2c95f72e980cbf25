"""The sentences of an answer that carry a ref, each with the words a support score compares.

A ref vouches for the sentence it sits in; one standing alone after a full stop ("… 4.5:1. [ref]")
belongs to the sentence before it, and so does a fragment too short to say anything ("See also [ref]"). When a sentence carries several refs, each ref is compared
with the clause that leads up to it and with the whole sentence, and the better of the two counts:
"text needs 4.5:1 [a], and the Act applies from 2025 [b]" must not count against [a] what [b] says.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from groundchat.grounding.refs import CITATION

# A sentence ends at . ! ? followed by a space and a capital, a quote or a bracket: "Art. 4",
# "1.4.3" and "e.g. the" do not end one.
_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"“'(\[*_])")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+•>]|\d{1,2}[.)])\s+")
_URL = re.compile(r"https?://\S+")
_MARKUP = re.compile(r"\*\*|__|`|\|")
_MIN_CLAUSE_WORDS = 4
_LEADING_REFS = re.compile(r"(?:\[[0-9a-f]{8}\]\s*)+")
# A quote cut off mid-sentence ("The intent of this … [ref]") says too little on its own.
_CUT_SHORT = re.compile(r"(?:…|\.\.\.)\s*(?:\[[0-9a-f]{8}\]\s*)+[.;,]?$")


@dataclass(frozen=True)
class CitedSentence:
    ref: str
    sentence: str  # exactly as it stands in the answer (trimmed), so a page can find it
    texts: tuple[str, ...]  # what is compared with the passage: the clause before the ref, the whole sentence


def cited_sentences(answer_text: str) -> list[CitedSentence]:
    """Each (ref, sentence) of the answer once, in order of appearance."""
    out: list[CitedSentence] = []
    seen: set[tuple[str, str]] = set()
    for sentence in _sentences(answer_text):
        whole = clean(sentence)
        start = 0
        for match in CITATION.finditer(sentence):
            ref = match.group(1)
            clause = clean(sentence[start:match.start()])
            start = match.end()
            if len(clause.split()) < _MIN_CLAUSE_WORDS:
                clause = clean(sentence[:match.start()])
            key = (ref, sentence)
            if key in seen or not whole:
                continue
            seen.add(key)
            out.append(CitedSentence(ref, sentence, tuple(dict.fromkeys(t for t in (clause, whole) if t))))
    return out


def _sentences(text: str) -> list[str]:
    """The answer's sentences, line by line (list items and table rows are sentences of their
    own), each an exact slice of the answer. A piece that is only refs joins the sentence before
    it; so does a cited fragment after a sentence of the same line (a few words, or a quote cut
    short with "…"), which says too little to be compared on its own."""
    spans: list[list[int]] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        marker = _LIST_MARKER.match(line)
        cut = marker.end() if marker else 0
        first_of_line = len(spans)
        for piece in _pieces(line, cut):
            begin, end = offset + piece[0], offset + piece[1]
            leading = _LEADING_REFS.match(text, begin, end)
            if spans and leading and leading.end() < end:
                # "… 4.5:1. [ref] Large text …": the refs close the sentence before.
                spans[-1][1] = offset + piece[0] + len(leading.group(0).rstrip())
                begin = leading.end()
            words = _words(text[begin:end])
            cited = CITATION.search(text[begin:end])
            short = words < _MIN_CLAUSE_WORDS or _CUT_SHORT.search(text[begin:end])
            if spans and cited and (words == 0 or (short and len(spans) > first_of_line)):
                spans[-1][1] = end  # "… 4.5:1. [ref]", "… a quote cut short. The intent of this … [ref]"
            else:
                spans.append([begin, end])
        offset += len(line)
    return [text[b:e] for b, e in spans if CITATION.search(text[b:e])]


def _pieces(line: str, start: int) -> list[tuple[int, int]]:
    """(start, end) of each sentence in a line, whitespace trimmed."""
    out = []
    for boundary in [*_BOUNDARY.finditer(line, start), None]:
        end = boundary.start() if boundary else len(line)
        piece = line[start:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            out.append((start + lead, start + len(piece.rstrip())))
        if boundary:
            start = boundary.end()
    return out


def clean(text: str) -> str:
    """The words of a sentence: no refs, links or Markdown marks."""
    text = CITATION.sub(" ", text)
    text = _URL.sub(" ", text)
    text = _MARKUP.sub(" ", text)
    text = re.sub(r"\s+([.,;:!?])", r"\1", " ".join(text.split()))
    return text.strip(" ,;:.")


def _words(text: str) -> int:
    return len(re.findall(r"[^\W\d_]+", CITATION.sub(" ", text)))
