"""A text longer than an embedding model reads, cut into windows the model reads whole.

The local model reads 256 tokens and drops the rest: an annex section of 1,500 tokens was found
by its first sixth only, and a third of the Understanding chunks by their beginning. Each window
repeats the text's first line (the title or handle that says what the passage is about) and takes
whole sentences after it, so no window is a sentence torn in two or a body without its subject.
The embedder averages the windows' vectors (search/embeddings.py): one vector per chunk, so every
store and the vector cache keep their shape.
"""
from __future__ import annotations

import re
from typing import Callable, Sequence

# Sentence ends and clause ends (the Act's points end in ";" and lead in with ":"), and line breaks.
_SENTENCE_END = re.compile(r"(?<=[.;:])\s+|\n+")

TokenCounts = Callable[[Sequence[str]], list[int]]
"""The token count of each text, without the model's special tokens."""


def windows(text: str, token_counts: TokenCounts, budget: int) -> list[str]:
    """`text` as windows of at most `budget` tokens each, led by its first line. A text within the
    budget is one window, itself. A single sentence over the budget is a window of its own (the model
    truncates it), never cut mid-word here."""
    head, newline, body = text.partition("\n")
    if not newline:  # one line: no title to repeat, its sentences are the body
        head, body = "", text
    pieces = [p for p in _SENTENCE_END.split(body) if p.strip()]
    counts = token_counts([head, *pieces])
    head_tokens, piece_tokens = counts[0], counts[1:]
    if head_tokens + sum(piece_tokens) <= budget or not pieces:
        return [text]
    room = max(budget - head_tokens, 1)
    out: list[list[str]] = []
    used = 0
    for piece, tokens in zip(pieces, piece_tokens):
        if out and out[-1] and used + tokens <= room:
            out[-1].append(piece)
            used += tokens
        else:
            out.append([piece])
            used = tokens
    lead = f"{head}\n" if head else ""
    return [lead + " ".join(group) for group in out]


__all__ = ["TokenCounts", "windows"]
