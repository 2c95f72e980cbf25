"""What one answer accumulates while it runs, shared between the loop and the tools it calls.

The loop creates one per answer and hands it to every tool through `ToolContext.answer`; a tool
called on its own (the CLI, a page route) gets a fresh one, so nothing leaks between answers.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING

from groundchat.exchange.frames import Frame

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject


@dataclass
class Annotations:
    """Stored with the assistant's answer and drawn again on shared pages."""

    citations: JsonObject | None = None
    views: list[JsonObject] = field(default_factory=list)

    def stored(self) -> JsonObject:
        out: JsonObject = {}
        if self.citations is not None:
            out["citations"] = self.citations
        if self.views:
            out["views"] = [*self.views]
        return out


@dataclass
class AnswerState:
    # This answer's tool results so far, as `{"id", "name", "grounding", "result"}` (grounding: the
    # tool's class, grounding/tool_grounding.py): views and citations are grounded against exactly these.
    tool_results: list[JsonObject] = field(default_factory=list)
    annotations: Annotations = field(default_factory=Annotations)
    # Frames a tool asked for (a view); the loop sends them after that tool's result.
    pending_frames: list[Frame] = field(default_factory=list)
    # The retrieval debug record of the last search, moved into that call's trace step.
    debug: JsonObject | None = None
    # What each search of this answer was charged (model steps are in the trace's steps).
    search_charges: list[Decimal] = field(default_factory=list)
    view_refusals: int = 0
    # The caller's other conversations whose words the recall tool handed this answer: the commit
    # marks what carries them, so a shared page withholds them and deleting one redacts them here.
    recalled_from: set[str] = field(default_factory=set)

    def take_frames(self) -> list[Frame]:
        frames, self.pending_frames = self.pending_frames, []
        return frames

    def take_debug(self) -> JsonObject | None:
        debug, self.debug = self.debug, None
        return debug
