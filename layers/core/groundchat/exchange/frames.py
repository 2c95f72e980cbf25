"""The typed frames an answer streams: a closed set of variants, one per `event:` the page reads.

The core yields them; the chat function renders each as SSE with `data` as the event's JSON.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal, Union

from pydantic import BaseModel, Field

from groundchat.json_shapes import Jsonable

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject, JsonValue

# `stopped`: its owner asked it to stop (store/answers_in_progress.py); it ended at the next step boundary.
DoneReason = Literal["complete", "max-steps", "spend-cap", "unmeasurable-cost", "too-large", "error", "stopped"]


class _Frame(BaseModel):
    # Each variant declares its own `type` as a literal: the discriminator of `Frame` below.

    @property
    def data(self) -> JsonObject:
        """The event's payload as it goes on the wire: every field but the type."""
        return self.model_dump(exclude={"type"})


class StartFrame(_Frame):
    type: Literal["start"] = "start"
    conversation_id: str
    run_id: str


class TextFrame(_Frame):
    type: Literal["text"] = "text"
    text: str


class StepFrame(_Frame):
    """Where one model step starts (its call is about to be made) and where it ends (after the tools
    it asked for ran, or after its words when it asked for none), so a client can tell the steps
    of an answer apart even when a step only called tools. A step that fails ends in `error`, not here."""

    type: Literal["step"] = "step"
    phase: Literal["start", "finish"]
    step: int  # 0 for the first model call of the answer
    # `finish` only: the provider's stop reason ("end_turn", "tool_use", "stop", "max_tokens", ...).
    finish_reason: str | None = None


class ToolInputDeltaFrame(_Frame):
    """The next piece of a tool call's arguments (JSON text) while the model is still writing them,
    so a reader can watch the call take shape (the page draws a view as its spec arrives). Pieces
    of one call share its `id`; joined, they are the call's input. The `tool-call` frame with the
    same id, sent once the step's words are complete, is what runs; a call whose step failed or
    was stopped before its tools ran gets none, and its pieces count for nothing."""

    type: Literal["tool-input-delta"] = "tool-input-delta"
    id: str
    name: str
    delta: str


class ToolCallFrame(_Frame):
    type: Literal["tool-call"] = "tool-call"
    id: str
    name: str
    args: dict[str, Jsonable] = Field(default_factory=dict)


class ToolResultFrame(_Frame):
    """A tool's result, or the error the model saw instead; never both."""

    type: Literal["tool-result"] = "tool-result"
    id: str
    name: str
    result: Jsonable = None
    error: str | None = None
    # What the reader may see of a search's debug record (`chat.reader_debug`): the page's
    # "Details", never sent to the model.
    debug: dict[str, Jsonable] | None = None

    @property
    def data(self) -> JsonObject:
        outcome = {"error": self.error} if self.error is not None else {"result": self.result}
        return {"id": self.id, "name": self.name, **outcome, **({"debug": self.debug} if self.debug else {})}


class ViewFrame(_Frame):
    """An accepted view, exactly as the catalog dumped it."""

    type: Literal["view"] = "view"
    view: dict[str, Jsonable]

    @property
    def data(self) -> JsonObject:
        return dict(self.view)


class SupportEntry(BaseModel):
    ref: str
    sentence: str
    score: float  # in [0, 1]
    verdict: Literal["supported", "weak"]


class CitationsFrame(_Frame):
    type: Literal["citations"] = "citations"
    sources: list[dict[str, Jsonable]]
    unverified: list[dict[str, Jsonable]]
    cited: int
    verified: int
    # Figures in the answer's words that no tool returned in this answer (`grounding.text_numbers`).
    unverified_numbers: list[dict[str, Jsonable]] = Field(default_factory=list)
    # How well each cited passage supports the sentence citing it (`grounding.citation_support`): one entry
    # per (ref, sentence), the sentence exactly as it stands in the answer.
    support: list[SupportEntry] = Field(default_factory=list)
    # Whether that check ran: "checked", "unchecked" (the model could not run: no entry means
    # nothing, never "supported"; `support_note` says why) or "nothing-to-check" (no verified ref).
    support_state: Literal["checked", "unchecked", "nothing-to-check"] = "nothing-to-check"
    support_note: str | None = None


class HistoryFrame(_Frame):
    """What of the stored conversation the model was sent (see `groundchat.chat.history`)."""

    type: Literal["history"] = "history"
    # `warned`: sent whole, but near the limit (shortening comes next); `reduced`: shortened.
    outcome: Literal["unchanged", "warned", "reduced", "failed"]
    codes: list[str]
    tokens: int
    max_input_tokens: int
    reason: str | None = None
    dropped_messages: int = 0
    # The deployment's history profile (GROUNDCHAT_HISTORY_PROFILE), e.g. "long-authoring".
    profile: str | None = None
    # Earlier messages the model saw only as a summary.
    summarised_messages: int = 0
    # How older exchanges are shortened here: "drop-oldest" (left out of what the model is sent) or
    # "summarise-oldest" (folded into a summary); the stored conversation is whole either way.
    strategy: Literal["drop-oldest", "summarise-oldest"] = "drop-oldest"

    @property
    def data(self) -> JsonObject:
        data: JsonObject = self.model_dump(exclude={"type"}, exclude_defaults=True)
        codes: list[JsonValue] = [*self.codes]
        data.update({"outcome": self.outcome, "codes": codes, "tokens": self.tokens,
                     "max_input_tokens": self.max_input_tokens, "strategy": self.strategy})
        return data


class LimitFrame(_Frame):
    type: Literal["limit"] = "limit"
    scope: str
    message: str
    resets_at: str | None = None


class ErrorFrame(_Frame):
    type: Literal["error"] = "error"
    # The failure's class (models/failures.py) or the loop's own code ("store_unavailable").
    code: str
    message: str
    run_id: str
    # The sanitised reason the message is built from (secrets and stack frames removed, bounded);
    # for a failure inside groundchat only the exception's class, since its text may name a table.
    reason: str | None = None


class DoneFrame(_Frame):
    type: Literal["done"] = "done"
    reason: DoneReason
    run_id: str
    # What this answer was charged, every model step and search of it: Decimal text and its
    # `cost_text` ("$0.0012").
    cost: str = "0"
    cost_text: str = "$0.00"
    # The recall plan (recall/plan.py): whether the caller's past conversations were offered as a
    # source for this answer, and why or why not. None where no plan was made (a tool run alone).
    recall: dict[str, Jsonable] | None = None
    # The stored message the answer ends with (its last assistant turn), once committed: what a
    # reader's rating names (POST /api/conversations/{id}/messages/{seq}/feedback). None: not stored.
    answer_seq: int | None = None
    # The tokens its model steps read and wrote, as the provider reported them (a history summary's
    # step among them); a step that reported none counts 0 here and is charged in full.
    input_tokens: int = 0
    output_tokens: int = 0


Frame = Annotated[
    Union[
        StartFrame, StepFrame, TextFrame, ToolInputDeltaFrame, ToolCallFrame, ToolResultFrame, ViewFrame, CitationsFrame,
        HistoryFrame, LimitFrame, ErrorFrame, DoneFrame,
    ],
    Field(discriminator="type"),
]
FrameType = Literal["start", "step", "text", "tool-input-delta", "tool-call", "tool-result", "view", "citations", "history", "limit", "error", "done"]
