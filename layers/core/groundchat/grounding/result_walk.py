"""Walking what the tools returned in one answer: the checks after an answer (citations, view
numbers, form values) all look through the same nested results."""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator

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


def result_nodes(tool_results: Iterable[JsonObject], names: Iterable[str] | None = None) -> Iterator[tuple[str | None, JsonValue]]:
    """`nodes` over the results of this answer's tool calls (only the tools named, if given)."""
    wanted = set(names) if names is not None else None
    for result in tool_results:
        if wanted is None or result.get("name") in wanted:
            yield from nodes(result.get("result"))
