"""Readers' words made safe to print on an operator's terminal or open in a spreadsheet.

Feedback text is whatever a reader typed: an ESC starts a terminal escape sequence (colours, a
cursor move, a title change), a BEL rings, a NUL or a lone carriage return hides what precedes it,
and a bidi override (U+202E) shows the line in another order than it is stored. Each such character
is written as a visible `<U+XXXX>` instead, so the operator sees that it was there and what it was.
Newlines and tabs stay: a quoted CSV field holds them as text, and they move no cursor backwards.
"""
from __future__ import annotations

import json
import unicodedata

_KEPT = frozenset("\n\t")


def _is_hidden_control(ch: str) -> bool:
    category = unicodedata.category(ch)
    if category == "Cc":  # C0 (NUL, BEL, ESC, CR, ...), DEL and C1 (CSI, ...)
        return ch not in _KEPT
    if category in ("Zl", "Zp"):  # U+2028, U+2029: a line break most tools do not expect
        return True
    # Format characters that steer the bidi algorithm (LRM, RLM, ALM, the embeddings, overrides
    # and isolates). Joiners and soft hyphens are boundary-neutral ("BN") and stay, or emoji
    # sequences and hyphenated words would be broken apart.
    return category == "Cf" and unicodedata.bidirectional(ch) != "BN"


def visible(text: str) -> str:
    """`text` with every hidden control written as `<U+XXXX>`."""
    if text.isprintable():  # the common case, one pass in C
        return text
    return "".join(f"<U+{ord(ch):04X}>" if _is_hidden_control(ch) else ch for ch in text)


def json_line(value: object) -> str:
    """`value` as one line of JSON whose hidden controls are `\\uXXXX` escapes: the data a parser
    reads back is unchanged, and the line printed raw moves, rings or reorders nothing."""
    text = json.dumps(value, ensure_ascii=False)  # C0 controls are escaped already; DEL, C1 and bidi are not
    if text.isprintable():
        return text
    return "".join(f"\\u{ord(ch):04x}" if _is_hidden_control(ch) else ch for ch in text)
