"""The steps of one answer as its trace records them: model calls and tool calls."""
from __future__ import annotations

from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel


class ModelStep(BaseModel):
    kind: Literal["model"] = "model"
    step: int
    model: str
    input_tokens: int | None
    output_tokens: int | None
    cost: str | None  # decimal text of what was charged
    stop: str
    latency_ms: float
    failure: dict[str, Any] | None = None

    @property
    def charged(self) -> Decimal:
        return Decimal(self.cost) if self.cost is not None else Decimal(0)


class ToolStep(BaseModel):
    kind: Literal["tool"] = "tool"
    id: str
    name: str
    args: dict[str, Any]
    outcome: Literal["ok", "refused", "invalid", "error"]
    latency_ms: float
    debug: dict[str, Any] | None = None


def trace_records(steps: list[ModelStep | ToolStep]) -> list[dict[str, Any]]:
    """As stored in the trace: a tool step without retrieval debug carries no `debug` key."""
    return [s.model_dump(exclude={"debug"} if isinstance(s, ToolStep) and s.debug is None else None) for s in steps]
