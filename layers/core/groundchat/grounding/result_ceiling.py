"""Keep tool results under our own ceiling, saying what was dropped instead of cutting blindly."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from groundchat.json_shapes import as_list

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject, JsonValue

NOTE_KEY = "_truncated"


def _size(value: JsonValue) -> int:
    return len(json.dumps(value, default=str, ensure_ascii=False))


def fit_result(value: JsonValue, max_chars: int) -> JsonValue:
    """`value` unchanged if its JSON fits in `max_chars`. Otherwise items are dropped from the end
    of its longest lists (the first rows of a ranked or newest-first result matter most), then long
    strings are shortened, and `_truncated` says exactly what went."""
    if _size(value) <= max_chars:
        return value
    if isinstance(value, str):
        keep = max(0, max_chars - 60)
        return value[:keep] + f" … [cut: {len(value) - keep} characters dropped]"
    if not isinstance(value, dict):
        return {"value": str(value)[: max(0, max_chars - 200)], NOTE_KEY: "result over the size ceiling, cut"}
    result = dict(value)
    notes: list[str] = []

    def with_notes(extra: list[str]) -> JsonObject:
        return {**result, NOTE_KEY: "; ".join([*notes, *extra])}

    for key in sorted((k for k, v in result.items() if isinstance(v, list)), key=lambda k: -_size(result[k])):
        items = as_list(result[key])  # a list: the keys are those of lists
        total = len(items)

        def fits(n: int) -> bool:
            note = [f"dropped {total - n} of {total} items from '{key}'"] if n < total else []
            return _size({**with_notes(note), key: items[:n]}) <= max_chars

        low, high = 0, total  # the largest n that fits, by bisection
        while low < high:
            mid = (low + high + 1) // 2
            if fits(mid):
                low = mid
            else:
                high = mid - 1
        result[key] = items[:low]
        if low < total:
            notes.append(f"dropped {total - low} of {total} items from '{key}'")
        if _size(with_notes([])) <= max_chars:
            return with_notes([])
    for key, val in list(result.items()):
        if isinstance(val, str) and len(val) > 200:
            result[key] = val[:200] + " …"
            notes.append(f"shortened '{key}' from {len(val)} characters")
    return with_notes([]) if notes else {**result, NOTE_KEY: "result over the size ceiling"}
