"""The steps of one answer as its trace records them: model calls and tool calls."""
from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Literal, Mapping

from pydantic import BaseModel, JsonValue

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject


def charged_text(charge: Mapping[str, object]) -> str | None:
    """The decimal text a guard's `settle()` says it charged (its "charged"), as a step records it."""
    charged = charge.get("charged")
    return None if charged is None else str(charged)


class ModelStep(BaseModel):
    kind: Literal["model"] = "model"
    step: int
    model: str
    input_tokens: int | None
    output_tokens: int | None
    cost: str | None  # decimal text of what was charged
    stop: str
    latency_ms: float
    failure: dict[str, JsonValue] | None = None
    # "history-summary": a step that summarised the oldest exchanges before the answer's own steps.
    purpose: Literal["answer", "history-summary"] = "answer"

    @property
    def charged(self) -> Decimal:
        return Decimal(self.cost) if self.cost is not None else Decimal(0)


class ToolStep(BaseModel):
    kind: Literal["tool"] = "tool"
    id: str
    name: str
    args: dict[str, JsonValue]
    outcome: Literal["ok", "refused", "invalid", "error"]
    latency_ms: float
    debug: dict[str, JsonValue] | None = None
    # What a failing tool raised, for the operator; the reader and the model see `tool-failed`.
    error_detail: str | None = None


def trace_records(steps: list[ModelStep | ToolStep]) -> list[JsonObject]:
    """As stored in the trace: a tool step carries `debug` and `error_detail` only when it has them."""
    return [s.model_dump(exclude={k for k in ("debug", "error_detail") if getattr(s, k) is None} or None)
            if isinstance(s, ToolStep) else s.model_dump() for s in steps]


def wordless_records(records: list[JsonObject]) -> list[JsonObject]:
    """The trace's steps without anything that may echo the question: a tool step keeps its name,
    outcome and latency, not its arguments, debug record or error text. For a run whose question
    nothing else keeps (chat/stored_run.py), so that its trace keeps none either."""
    return [{k: v for k, v in r.items() if k not in ("args", "debug", "error_detail")} if r.get("kind") == "tool" else r
            for r in records]
