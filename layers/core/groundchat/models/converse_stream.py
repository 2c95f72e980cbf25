"""ConverseStream's event stream (ConverseStreamOutput, as botocore parses it) -> our events.

Text deltas pass straight through. A toolUse block starts with its id and name
(`contentBlockStart.start.toolUse`), its input JSON arrives in `contentBlockDelta.delta.toolUse.input`
fragments, each passed on as a ToolInputDelta so a reader can watch the call being written, and it
is parsed whole at `contentBlockStop` into the one ToolCallEvent the loop runs.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Iterator, TypedDict

from groundchat.models.failures import ModelFailure
from groundchat.models.messages import ModelEvent, StopEvent, TextDelta, ToolCallEvent, ToolInputDelta, UsageEvent

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonValue
    from groundchat.models.converse_shapes import ContentBlockDelta, ConverseStreamEvent


class _ToolBlock(TypedDict):
    """A toolUse block while its input arrives in pieces."""

    id: str
    name: str
    input: list[str]


class ConverseStreamReader:
    """Turns ConverseStreamOutput events into our events.

    Fed one event at a time; `finish()` yields what can only be known at the end of the stream.
    """

    def __init__(self) -> None:
        self.tool_blocks: dict[int, _ToolBlock] = {}
        self.bad_tool_input: str | None = None
        self.stop_reason: str | None = None
        self.usage: UsageEvent | None = None
        self.saw_text = False
        self.saw_tool_call = False

    def feed(self, event: ConverseStreamEvent) -> list[ModelEvent]:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            tool = start.get("start", {}).get("toolUse")
            if tool:
                self.tool_blocks[start["contentBlockIndex"]] = {"id": tool["toolUseId"], "name": tool["name"], "input": []}
        elif "contentBlockDelta" in event:
            return self._delta(event["contentBlockDelta"])
        elif "contentBlockStop" in event:
            tool = self.tool_blocks.pop(event["contentBlockStop"]["contentBlockIndex"], None)
            call = self._tool_call(tool) if tool is not None else None
            return [call] if call is not None else []
        elif "messageStop" in event:
            self.stop_reason = event["messageStop"]["stopReason"]
        elif "metadata" in event:
            usage = event["metadata"].get("usage", {})
            self.usage = UsageEvent(
                input_tokens=usage.get("inputTokens", 0),
                output_tokens=usage.get("outputTokens", 0),
                cache_read_tokens=usage.get("cacheReadInputTokens", 0),
                cache_write_tokens=usage.get("cacheWriteInputTokens", 0),
            )
            return [self.usage]
        return []

    def _delta(self, block: ContentBlockDelta) -> list[ModelEvent]:
        delta = block.get("delta", {})
        if "text" in delta:
            # Text blocks arrive without a contentBlockStart: a delta is enough.
            if not delta["text"]:
                return []
            self.saw_text = True
            return [TextDelta(text=delta["text"])]
        if "toolUse" in delta:
            tool = self.tool_blocks.get(block["contentBlockIndex"])
            if tool is None:
                raise ModelFailure("gateway", f"toolUse input for block {block['contentBlockIndex']} that never started")
            fragment = delta["toolUse"]["input"]
            tool["input"].append(fragment)
            return [ToolInputDelta(id=tool["id"], name=tool["name"], delta=fragment)] if fragment else []
        # reasoningContent and citations are not part of the answer we show or store.
        return []

    def _tool_call(self, tool: _ToolBlock) -> ToolCallEvent | None:
        raw = "".join(tool["input"])
        try:
            args: JsonValue = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            # Decided at the end: a truncated input under max_tokens is missing content, not a bug.
            self.bad_tool_input = raw[:200]
            return None
        if not isinstance(args, dict):
            self.bad_tool_input = raw[:200]
            return None
        self.saw_tool_call = True
        return ToolCallEvent(id=tool["id"], name=tool["name"], args=args)

    def finish(self) -> list[ModelEvent]:
        usage = self.usage.model_dump(mode="json") if self.usage else None
        if self.stop_reason is None:
            raise ModelFailure("upstream_unreachable", "the stream ended before messageStop", usage=usage, retryable=True)
        if self.bad_tool_input is not None and self.stop_reason != "max_tokens":
            raise ModelFailure("gateway", f"tool input is not a JSON object: {self.bad_tool_input!r}", finish_reason=self.stop_reason, usage=usage)
        if not self.saw_text and not self.saw_tool_call:
            raise ModelFailure(
                "content_missing",
                f"the model stopped ({self.stop_reason}) without text or a tool call",
                finish_reason=self.stop_reason,
                usage=usage,
            )
        return [StopEvent(reason=self.stop_reason)]


def events_from_stream(events: Iterator[ConverseStreamEvent] | list[ConverseStreamEvent]) -> Iterator[ModelEvent]:
    """Synchronous translation of a whole stream; the adapter does the same one event at a time."""
    reader = ConverseStreamReader()
    for event in events:
        yield from reader.feed(event)
    yield from reader.finish()


__all__ = ["ConverseStreamReader", "events_from_stream"]
