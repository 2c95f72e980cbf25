"""The offline answerer's summary of an excerpt: deterministic, built from the excerpt's own
labelled turns, handed over as data with the request (what the person wrote, what the assistant
answered and called), never invented.

It keeps the earlier summary's lines and the person's words first; when the whole would pass the
step's output ceiling, the oldest lines after the first go, so the start of the conversation
(where instructions usually are) stays.
"""
from __future__ import annotations

import re

from groundchat.models.messages import ModelRequest

HEAD = "(Offline summary: the turns of the excerpt, cut short; not written by a language model.)"
LEFT_OUT = "- (earlier lines left out to fit)"
_NUMBER = re.compile(r"message (\d+)$")
_CALL = re.compile(r"^\(called (\S+) with ")


def offline_summary(request: ModelRequest) -> str:
    lines: list[str] = []
    for turn in request.excerpt:
        number = _NUMBER.search(turn.label)
        where = f"message {number.group(1)}" if number else ""
        if turn.label.startswith("Summary so far"):
            lines.extend(line for line in turn.text.splitlines() if line.strip() and line != HEAD)
        elif turn.label.startswith("Person"):
            lines.append(f"- The person ({where}): {_one_line(turn.text, 400)}")
        elif turn.label.startswith("Assistant"):
            calls = [m.group(1) for line in turn.text.splitlines() if (m := _CALL.match(line))]
            words = " ".join(line for line in turn.text.splitlines() if not _CALL.match(line))
            if calls:
                lines.append(f"- The assistant ({where}) called {', '.join(calls)}.")
            if words.strip():
                lines.append(f"- The assistant ({where}): {_one_line(words, 240)}")
    return _within(lines, request.max_output_tokens * 3)


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit].rstrip() + " …"


def _within(lines: list[str], max_chars: int) -> str:
    def size(kept: list[str]) -> int:
        return len(HEAD) + sum(len(line) + 1 for line in kept)

    kept = list(lines)
    dropped = False
    while len(kept) > 1 and size(kept) + len(LEFT_OUT) > max_chars:
        del kept[1]
        dropped = True
    if dropped and kept[1:2] != [LEFT_OUT]:
        kept.insert(1, LEFT_OUT)
    return "\n".join([HEAD, *kept])
