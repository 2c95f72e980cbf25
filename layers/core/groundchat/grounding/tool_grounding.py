"""What a tool's result vouches for: each tool names its class (`Tool.grounding`, tools/base.py),
the loop writes it on the result's record, and the checks after an answer read it there. No check
keeps a list of tool names, so a new tool is grounded as it says, and a record without a class
stops the check instead of passing unnoticed."""
from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject


class Grounding(StrEnum):
    # The benchmark's figures (the data tools): a view may show its numbers, a form may offer its
    # names (model, context, task, label, run), and the answer's words may quote its numbers.
    FIGURES = "figures"
    # Passages and facts (the searches, the rule lookup): the answer's words may quote the numbers
    # in it ("4.5:1"), but a view may not show them as figures.
    TEXT = "text"
    # A verdict on what the model sent (show_view): it vouches for nothing.
    NONE = "none"


class UngroundedRecord(ValueError):
    """A tool result recorded without its tool's grounding class."""


def grounding_of(record: JsonObject) -> Grounding:
    """The class a tool result's record carries (`{"id", "name", "grounding", "result"}`)."""
    value = record.get("grounding")
    try:
        return Grounding(value)
    except ValueError:
        raise UngroundedRecord(f"the result of tool {record.get('name')!r} carries no grounding class "
                               f"({value!r}; one of {', '.join(g.value for g in Grounding)})") from None
