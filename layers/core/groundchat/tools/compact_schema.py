"""The tool schemas as the model is sent them: only what it needs to call the tool right.

Every step resends the schemas, so their size is paid on every step of every answer. Pydantic's
schema carries generated titles, length bounds and `null` alternatives that tell the model nothing
it acts on; they are dropped here. The tool's input model still checks every call in full, bounds
included, so nothing the model sends is trusted for being shorter to describe.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject, JsonValue

# `additionalProperties: false` included: an unknown field is refused by the check, with its name.
_DROPPED = {"title", "minLength", "maxLength", "minItems", "maxItems", "default", "ge", "le", "additionalProperties"}
_NUMBER = [{"type": "integer"}, {"type": "number"}]


def compact(schema: JsonValue) -> JsonValue:
    if isinstance(schema, list):
        return [compact(item) for item in schema]
    if isinstance(schema, dict):
        return compact_object(schema)
    return schema


def compact_object(schema: JsonObject) -> JsonObject:
    out: JsonObject = {}
    for key, value in schema.items():
        if key in _DROPPED and not isinstance(value, dict):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: compact(prop) for name, prop in value.items()}  # property names stay, "title" included
            continue
        out[key] = compact(value)
    if "const" in out:  # a constant says its own type
        out.pop("type", None)
    alternatives = out.get("anyOf")
    if alternatives == _NUMBER:
        del out["anyOf"]
        out["type"] = "number"
        return out
    if isinstance(alternatives, list):
        # `X or null` for an optional field: the field is simply not required.
        kept = [a for a in alternatives if a != {"type": "null"}]
        if len(kept) == 1 and len(kept) < len(alternatives) and isinstance(kept[0], dict):
            del out["anyOf"]
            out.update(kept[0])
    return out
