"""Walking what the tools returned in one answer: the checks after an answer (citations, view
numbers, form values) all look through the same nested results."""
from __future__ import annotations

from typing import TYPE_CHECKING, Collection, Iterable, Iterator

from groundchat.grounding.tool_grounding import Grounding, grounding_of

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject, JsonValue


def nodes(value: JsonValue, key: str | None = None) -> Iterator[tuple[str | None, JsonValue]]:
    """Every value inside `value`, depth first, with the dict key it sits under (None in lists)."""
    yield key, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from nodes(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from nodes(v, None)


def result_nodes(tool_results: Iterable[JsonObject],
                 grounding: Collection[Grounding] | None = None) -> Iterator[tuple[str | None, JsonValue]]:
    """`nodes` over the results of this answer's tool calls (only those whose tool's grounding
    class is one of `grounding`, if given: see tool_grounding.py)."""
    for result in tool_results:
        if grounding is None or grounding_of(result) in grounding:
            yield from nodes(result.get("result"))
