"""Is every number in a view one a data tool returned in this answer?

A shown number is grounded if it equals a returned number, or equals one rounded to the places
it is shown with, or (shown as a percentage) equals a returned fraction times 100 rounded the
same way. Nothing else is: a sum, a difference or a ratio the model worked out is refused, because
no tool vouches for it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from typing import TYPE_CHECKING, Iterable

from groundchat.grounding.result_walk import result_nodes
from groundchat.grounding.tool_grounding import Grounding

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonList, JsonObject, JsonValue

# Whose numbers a view may show: the tools that say their results are the benchmark's figures.
FIGURES = (Grounding.FIGURES,)

# A string that is a number and nothing else: "0.0126", "$0.0126", "87.5%".
_WHOLE_NUMBER = re.compile(r"^\s*\$?(-?\d+(?:\.\d+)?)%?\s*$")
# A number inside text. Digits glued to letters, dashes, dots or slashes belong to a name
# ("round-1", "WCAG 1.4.3", a run id, a date), not to a figure.
_NUMBER_IN_TEXT = re.compile(r"(?<![\w.\-/])\$?(\d+(?:,\d{3})*(?:\.\d+)?)(%?)(?![\w\-/]|\.\d)")
# Keys that name things rather than show figures.
_NOT_SHOWN = frozenset({"type", "action", "name", "level", "format"})


@dataclass(frozen=True)
class Shown:
    where: str
    text: str
    value: Decimal
    percent: bool


def returned_numbers(tool_results: Iterable[JsonObject]) -> set[Decimal]:
    """Every number in the data tools' results of this answer, numeric strings included."""
    found: set[Decimal] = set()
    for _, value in result_nodes(tool_results, FIGURES):
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, (int, float, Decimal)):
            number = _decimal(value)
            if number is not None:
                found.add(number)
        elif isinstance(value, str):
            match = _WHOLE_NUMBER.match(value)
            if match:
                found.add(Decimal(match.group(1)))
    return found


def shown_numbers(view: JsonObject) -> list[Shown]:
    """Every number a view shows, with where it appears. Works on the raw input, so a view that
    also has schema problems still gets its numbers checked in the same refusal."""
    out: list[Shown] = []
    for i, part in enumerate(_list(view.get("parts"))):
        if not isinstance(part, dict):
            continue
        base = f"parts[{i}]" + (f" ({part['type']})" if isinstance(part.get("type"), str) else "")
        percent_part = _is_percent_unit(part.get("unit"))
        if part.get("type") == "table":
            percent_columns = [isinstance(c, str) and "%" in c for c in _list(part.get("columns"))]
            for key in ("caption", "columns"):
                _collect(part.get(key), f"{base}.{key}", False, out)
            for r, row in enumerate(_list(part.get("rows"))):
                for c, cell in enumerate(_list(row)):
                    marked = c < len(percent_columns) and percent_columns[c]
                    _collect(cell, f"{base}.rows[{r}][{c}]", marked, out)
            continue
        for key, value in part.items():
            if key in _NOT_SHOWN:
                continue
            if key in ("items", "bars"):  # stats items and bars: only a `value` can be a percentage
                for j, item in enumerate(_list(value)):
                    if isinstance(item, dict):
                        marked = percent_part or item.get("format") == "percent" or _is_percent_unit(item.get("unit"))
                        for k, v in item.items():
                            if k not in _NOT_SHOWN:
                                _collect(v, f"{base}.{key}[{j}].{k}", marked and k == "value", out)
                continue
            _collect(value, f"{base}.{key}", False, out)
    _collect(view.get("title"), "title", False, out)
    return out


def ungrounded(view: JsonObject, tool_results: Iterable[JsonObject]) -> list[str]:
    """One line per number that no data tool of this answer returned, saying where it is."""
    pool = returned_numbers(list(tool_results))
    problems = []
    for shown in shown_numbers(view):
        if not is_grounded(shown, pool):
            hint = "a percentage of no returned fraction" if shown.percent else "not a number a data tool returned in this answer"
            problems.append(f"{shown.where}: {shown.text} is {hint}")
    return problems


def is_grounded(shown: Shown, pool: set[Decimal]) -> bool:
    places = max(0, -shown.value.as_tuple().exponent)  # type: ignore[operator]
    candidates = (n * 100 for n in pool) if shown.percent else iter(pool)
    return any(_rounds_to(n, places, shown.value) for n in candidates)


def _rounds_to(number: Decimal, places: int, shown: Decimal) -> bool:
    step = Decimal(1).scaleb(-places)
    # Either convention: writers round halves up, Python's formatting rounds them to even.
    return any(abs(number).quantize(step, rounding=mode) == shown for mode in (ROUND_HALF_UP, ROUND_HALF_EVEN))


def _collect(value: JsonValue, where: str, percent: bool, out: list[Shown]) -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, (int, float)):
        number = _decimal(value)
        if number is not None:
            out.append(Shown(where, repr(value) + ("%" if percent else ""), abs(number), percent))
    elif isinstance(value, str):
        for match in _NUMBER_IN_TEXT.finditer(value):
            digits = match.group(1).replace(",", "")
            out.append(Shown(where, repr(match.group(0)), Decimal(digits), percent or match.group(2) == "%"))
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in _NOT_SHOWN:
                _collect(v, f"{where}.{k}", percent, out)
    elif isinstance(value, list):
        for j, v in enumerate(value):
            _collect(v, f"{where}[{j}]", percent, out)


def _decimal(value: int | float | Decimal) -> Decimal | None:
    try:
        # repr: the shortest text that round-trips, i.e. the places the number was written with.
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except (InvalidOperation, ValueError):
        return None
    return number if number.is_finite() else None


def _is_percent_unit(unit: JsonValue) -> bool:
    return isinstance(unit, str) and unit.strip() in ("%", "percent")


def _list(value: JsonValue) -> JsonList:
    return value if isinstance(value, list) else []
