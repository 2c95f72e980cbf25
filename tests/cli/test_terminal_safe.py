"""Readers' words printed for an operator: controls shown, never obeyed; ordinary text untouched."""
from __future__ import annotations

import json

import pytest

from groundchat_cli.terminal_safe import json_line, visible


@pytest.mark.parametrize("raw, shown", [
    ("\x1b[31mred", "<U+001B>[31mred"),
    ("ring\x07", "ring<U+0007>"),
    ("nul\x00", "nul<U+0000>"),
    ("\u202eexe.txt", "<U+202E>exe.txt"),
    ("\u200f\u061c\u2067x\u2069\u202a", "<U+200F><U+061C><U+2067>x<U+2069><U+202A>"),
    ("over\rwrite", "over<U+000D>write"),
    ("del\x7f c1\x9b", "del<U+007F> c1<U+009B>"),
    ("line\u2028sep", "line<U+2028>sep"),
], ids=["esc", "bel", "nul", "rlo", "other-bidi", "cr", "del-c1", "line-separator"])
def test_a_hidden_control_is_written_as_its_code_point(raw, shown):
    assert visible(raw) == shown


@pytest.mark.parametrize("text", ["plain words", "two\nlines\tand a tab", "👩\u200d💻 soft\xadhyphen", "العربية עברית", ""])
def test_ordinary_text_is_left_as_it_is(text):
    assert visible(text) == text


def test_a_json_line_reads_back_the_same_and_prints_no_control():
    value = {"text": "a\x1b[2J\u202eb\x9b\x7f", "n": 3}
    line = json_line(value)
    assert json.loads(line) == value
    assert line.isascii() and "\n" not in line
    assert json_line({"text": "café"}) == '{"text": "café"}'  # readable letters stay letters
