"""Testing kit: the strict transcript checker and a scripted model that runs it on every call.

A double that accepts any transcript proves nothing about a provider. These encode the ordering
rules providers enforce, so a test fails where a provider would.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, AsyncIterator, Iterable

from groundchat.models.messages import Message, ModelRequest, StopEvent, TextDelta, ToolCallEvent, ToolInputDelta, UsageEvent


class TranscriptError(AssertionError):
    """Base of the typed transcript errors."""


class OrphanToolResult(TranscriptError):
    """A tool message that answers no call of the preceding assistant turn."""


class UnknownToolCallId(TranscriptError):
    """A tool message whose call id matches no call made in this transcript."""


class UnansweredToolCalls(TranscriptError):
    """A user or assistant turn taken while calls of the previous assistant turn are unanswered."""


class SplitToolResults(TranscriptError):
    """Results for one assistant turn split across turns (something else came between them)."""


class DuplicateToolResult(TranscriptError):
    """Two results for the same call."""


def assert_provider_transcript(messages: Iterable[Message | dict[str, Any]]) -> None:
    msgs = [m if isinstance(m, Message) else Message.model_validate(m) for m in messages]
    all_ids: set[str] = set()
    for m in msgs:
        if m.role == "assistant":
            all_ids.update(c.id for c in m.tool_calls)
    pending: set[str] = set()  # calls of the latest assistant turn still unanswered
    answered: set[str] = set()
    current_calls: set[str] = set()
    closed: set[str] = set()  # ids whose result block has ended
    in_results = False
    for i, m in enumerate(msgs):
        if m.role == "tool":
            cid = m.tool_call_id or ""
            if cid not in all_ids:
                raise UnknownToolCallId(f"message {i}: tool result for call id {cid!r} that no assistant turn made")
            if cid in closed:
                raise SplitToolResults(f"message {i}: result for {cid!r} arrives after its turn's results ended")
            if cid not in current_calls:
                raise OrphanToolResult(f"message {i}: tool result {cid!r} answers no call of the preceding assistant turn")
            if cid in answered:
                raise DuplicateToolResult(f"message {i}: second result for call {cid!r}")
            answered.add(cid)
            pending.discard(cid)
            in_results = True
            continue
        if pending:
            raise UnansweredToolCalls(f"message {i}: {m.role} turn while calls {sorted(pending)} are unanswered")
        if in_results or current_calls:
            closed.update(current_calls)
        in_results = False
        current_calls = set()
        if m.role == "assistant":
            current_calls = {c.id for c in m.tool_calls}
            pending = set(current_calls)
    # A transcript sent to a provider never ends with calls unanswered.
    if pending:
        raise UnansweredToolCalls(f"transcript ends with calls {sorted(pending)} unanswered")


@dataclass
class Step:
    """One scripted model step: text, then tool calls, then usage and a stop reason."""

    text: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    input_tokens: int = 100
    output_tokens: int = 20
    provider_cost: Decimal | None = None
    report_usage: bool = True
    raise_error: BaseException | None = None
    # Each call's arguments also stream as this many ToolInputDelta pieces of their JSON text first,
    # as hosted models write them (before `raise_error`, so a step can fail with its input half shown).
    input_pieces: int = 0


class ScriptedModel:
    """Plays a list of steps; checks every transcript it receives with the strict checker."""

    def __init__(self, steps: list[Step], model_id: str = "scripted", repeat_last: bool = False) -> None:
        self.steps = list(steps)
        self.model_id = model_id
        self.price_id = model_id
        self.repeat_last = repeat_last
        self.requests: list[ModelRequest] = []
        self._n = 0

    @property
    def calls(self) -> int:
        return len(self.requests)

    async def __call__(self, request: ModelRequest) -> AsyncIterator[TextDelta | ToolInputDelta | ToolCallEvent | UsageEvent | StopEvent]:
        assert_provider_transcript(request.messages)
        if request.messages and request.messages[-1].role == "assistant":
            raise UnansweredToolCalls("the transcript ends with an assistant turn: nothing to answer")
        self.requests.append(request.model_copy(deep=True))
        if self._n >= len(self.steps):
            if not (self.repeat_last and self.steps):
                raise AssertionError(f"scripted model ran out of steps after {self._n}")
            step = self.steps[-1]
        else:
            step = self.steps[self._n]
        index = self._n
        self._n += 1
        if step.text:
            # Stream in two pieces, as providers do, so consumers must join deltas.
            half = len(step.text) // 2 or 1
            yield TextDelta(text=step.text[:half])
            if step.text[half:]:
                yield TextDelta(text=step.text[half:])
        for j, (name, args) in enumerate(step.tool_calls if step.input_pieces else []):
            for piece in _pieces(json.dumps(args), step.input_pieces):
                yield ToolInputDelta(id=f"call_{index}_{j}", name=name, delta=piece)
        if step.raise_error is not None:
            raise step.raise_error
        for j, (name, args) in enumerate(step.tool_calls):
            yield ToolCallEvent(id=f"call_{index}_{j}", name=name, args=args)
        if step.report_usage:
            yield UsageEvent(input_tokens=step.input_tokens, output_tokens=step.output_tokens, provider_cost=step.provider_cost)
        yield StopEvent(reason="tool_use" if step.tool_calls else "end_turn")


def _pieces(text: str, count: int) -> list[str]:
    """`text` cut into `count` pieces of about the same length (fewer when it is shorter)."""
    size = max(1, -(-len(text) // count))
    return [text[i:i + size] for i in range(0, len(text), size)]
