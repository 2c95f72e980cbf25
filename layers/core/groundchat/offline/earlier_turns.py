"""The earlier turns of a conversation as exchanges: each user question, the tool calls made to answer
it and their results, matched by call id. What the offline follow-ups read (offline/follow_up.py)."""
from __future__ import annotations

import json
from dataclasses import dataclass

from groundchat.json_shapes import JsonObject, JsonValue
from groundchat.models.messages import Message

# A tool call: the tool's name and its arguments.
Call = tuple[str, JsonObject]


@dataclass(frozen=True)
class Exchange:
    """One earlier question with the calls made for it and their results (parsed JSON, in order)."""

    question: str
    calls: tuple[Call, ...]
    results: tuple[JsonValue, ...]  # None where a call has no result (it failed)



def exchanges(messages: list[Message]) -> list[Exchange]:
    """The earlier turns as exchanges: each user question, the calls the answers to it made and their
    results, matched by call id."""
    out: list[Exchange] = []
    question: str | None = None
    calls: list[tuple[str, str, JsonObject]] = []
    results: dict[str, JsonValue] = {}

    def close() -> None:
        if question is not None:
            out.append(Exchange(question, tuple((n, a) for _, n, a in calls),
                                tuple(results.get(i) for i, _, _ in calls)))

    for m in messages:
        if m.role == "user":
            close()
            question, calls, results = m.content, [], {}
        elif m.role == "assistant":
            calls.extend((c.id, c.name, dict(c.args)) for c in m.tool_calls if c.name != "show_view")
        elif m.role == "tool" and m.tool_call_id and not m.is_error:
            try:
                results[m.tool_call_id] = json.loads(m.content)
            except (json.JSONDecodeError, TypeError):
                results[m.tool_call_id] = m.content
    close()
    return out


__all__ = ["Call", "Exchange", "exchanges"]
