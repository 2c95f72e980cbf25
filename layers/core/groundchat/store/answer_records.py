"""What an answer's last assistant message carries besides its words: its annotations (citations,
views), and what the answer cost and its compact details (`chat.answer_record`), so that a reopened
answer shows its cost line and "Details" as it did live.

Stored as the item's `annotations` and `details` (JSON text) and `cost` (Decimal text, the `done`
frame's figure). Answers stored before cost and details were kept have neither: read, they show none.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from groundchat.money import cost_text
from groundchat.store import item_values

if TYPE_CHECKING:
    from collections.abc import Mapping

    from groundchat.json_shapes import JsonValue
    from groundchat.store.items import StoredItem, StoredValue


def answer_attributes(annotations: Mapping[str, object], answer_record: Mapping[str, object] | None) -> dict[str, str]:
    """The attributes to set on the answer's last assistant message item."""
    out: dict[str, str] = {}
    if annotations:
        out["annotations"] = json.dumps(annotations, default=str)
    if answer_record:
        out["cost"] = str(answer_record["cost"])
        out["details"] = json.dumps(answer_record.get("details") or {}, separators=(",", ":"), default=str)
    return out


def public_answer_record(item: StoredItem) -> dict[str, StoredValue | JsonValue]:
    """`cost`, `cost_text` (as the `done` frame said them) and `details`, or nothing."""
    if item.get("cost") is None:
        return {}
    return {"cost": item["cost"], "cost_text": cost_text(item_values.amount(item, "cost")),
            "details": json.loads(item_values.text(item, "details")) if item.get("details") else {}}
