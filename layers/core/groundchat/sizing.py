"""Keep tool results under our own ceiling, saying what was dropped instead of cutting blindly."""
from __future__ import annotations

import json
from typing import Any


def _size(value: Any) -> int:
    return len(json.dumps(value, default=str, ensure_ascii=False))


def fit_result(value: Any, max_chars: int) -> Any:
    """Return `value` unchanged if it fits; else drop items from its longest lists (last first)
    and long strings, recording what was dropped under `_truncated`."""
    if _size(value) <= max_chars:
        return value
    if isinstance(value, str):
        return value[: max(0, max_chars - 80)] + f" … [cut: {len(value) - max_chars + 80} characters dropped]"
    if not isinstance(value, dict):
        return {"value": str(value)[: max_chars - 200], "_truncated": "result over the size ceiling, cut"}
    result = dict(value)
    notes: list[str] = []
    list_keys = sorted((k for k, v in result.items() if isinstance(v, list)), key=lambda k: -_size(result[k]))
    for key in list_keys:
        items = list(result[key])
        total = len(items)
        while items and _size({**result, key: items, "_truncated": notes}) > max_chars:
            items.pop()
        result[key] = items
        if len(items) < total:
            notes.append(f"dropped {total - len(items)} of {total} items from '{key}'")
        if _size({**result, "_truncated": notes}) <= max_chars:
            break
    if _size({**result, "_truncated": notes}) > max_chars:
        for key, val in list(result.items()):
            if isinstance(val, str) and len(val) > 200:
                result[key] = val[:200] + " …"
                notes.append(f"shortened '{key}' from {len(val)} characters")
    result["_truncated"] = "; ".join(notes) or "result over the size ceiling"
    return result
