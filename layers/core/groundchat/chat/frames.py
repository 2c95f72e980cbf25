"""The typed frames an answer streams. The core yields them; the chat function renders SSE."""
from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

FrameType = Literal[
    "start", "text", "tool-call", "tool-result", "view", "citations", "history", "limit", "error", "done"
]
DoneReason = Literal["complete", "max-steps", "spend-cap", "unmeasurable-cost", "too-large", "error"]


class Frame(BaseModel):
    type: FrameType
    data: dict[str, Any] = Field(default_factory=dict)

    def sse(self) -> str:
        return f"event: {self.type}\ndata: {json.dumps(self.data, default=str, ensure_ascii=False)}\n\n"
