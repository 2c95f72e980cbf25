"""Recorded provider streams whose tool call's arguments arrive in pieces, as hosted models write
them: a `show_view` call of a view with a title and three parts, its JSON cut at uneven places
(inside keys, strings and numbers), for Bedrock ConverseStream and an OpenAI-compatible gateway."""
from __future__ import annotations

import json

from pydantic import BaseModel

import tests.models.provider_recordings as rec
from groundchat.auth.callers import RUNS_READ
from groundchat.models.openai_compat import OpenAICompatModel
from groundchat.models.retry import NO_RETRY
from groundchat.tools.base import Tool, ToolContext
from tests.models.provider_recordings import chunk, sse

VIEW = {
    "title": "Violations by context level",
    "parts": [
        {"type": "stats", "items": [{"label": "Runs compared", "value": 12, "unit": "runs"}]},
        {"type": "bar_chart", "title": "Mean violations per run", "unit": "violations per run",
         "bars": [{"label": "none", "value": 7.5}, {"label": "checklist", "value": 3.25}]},
        {"type": "table", "caption": "Completion", "columns": ["context", "completion %"],
         "rows": [["none", 50], ["checklist", 75]]},
    ],
}
VIEW_TEXT = json.dumps(VIEW)
# What the view's numbers stand on: a data tool's result in the same answer (12 runs; 7.5 and 3.25
# violations; 50 % and 75 % of the completion fractions).
FIGURES = {"runs": 12, "rows": [{"context": "none", "mean_violations": 7.5, "completion_rate": 0.5},
                                {"context": "checklist", "mean_violations": 3.25, "completion_rate": 0.75}]}


class _NoArguments(BaseModel):
    pass


def figures_tool() -> Tool:
    """`compare_contexts` as the recordings call it (a figures tool, so its numbers ground a view)."""
    async def figures(_ctx: ToolContext, _args: _NoArguments) -> dict:
        return FIGURES

    return Tool(name="compare_contexts", description="Compare the context levels.", input_model=_NoArguments,
                permission=RUNS_READ, handler=figures, grounding="figures", drawer="contexts",
                offline_template="contexts")


# Where the text is cut: uneven, so pieces end inside keys, strings and numbers alike.
CUTS = (7, 19, 33, 34, 58, 90, 131, 160, 203, 251, 290, 333, 371, 402)


def view_pieces(text: str = VIEW_TEXT) -> list[str]:
    edges = [0, *[c for c in CUTS if c < len(text)], len(text)]
    return [text[a:b] for a, b in zip(edges, edges[1:]) if b > a]


BEDROCK_VIEW_CALL = [
    rec.message_start(),
    rec.text_delta(0, "Here is the comparison."),
    rec.block_stop(0),
    rec.tool_start(1, "tooluse_view01", "show_view"),
    *(rec.tool_input(1, piece) for piece in view_pieces()),
    rec.block_stop(1),
    rec.message_stop("tool_use"),
    rec.metadata(1500, 160),
]

# OpenRouter's shape: the id and name with empty arguments first, then the arguments in pieces
# under the call's index only.
OPENAI_VIEW_CALL = sse(
    chunk({"role": "assistant", "content": ""}),
    chunk({"content": "Here is the comparison."}),
    chunk({"tool_calls": [{"index": 0, "id": "call_view01", "type": "function", "function": {"name": "show_view", "arguments": ""}}]}),
    *(chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}) for piece in view_pieces()),
    chunk({}, finish="tool_calls"),
    chunk(None, usage={"prompt_tokens": 1500, "completion_tokens": 160, "total_tokens": 1660}),
)

OPENAI_FIGURES_CALL = sse(
    chunk({"tool_calls": [{"index": 0, "id": "call_fig01", "type": "function", "function": {"name": "compare_contexts", "arguments": "{}"}}]}),
    chunk({}, finish="tool_calls"),
    chunk(None, usage={"prompt_tokens": 1200, "completion_tokens": 12, "total_tokens": 1212}),
)
OPENAI_ANSWER = sse(
    chunk({"content": "Checklist halves the violations."}),
    chunk({}, finish="stop"),
    chunk(None, usage={"prompt_tokens": 1700, "completion_tokens": 6, "total_tokens": 1706}),
)


def openai_view_answer(view_call: bytes = OPENAI_VIEW_CALL) -> list[tuple[int, bytes, dict]]:
    """The three steps of an answer with a view, as a gateway streams them: the figures, the view
    (its arguments in pieces), the words."""
    return [(200, OPENAI_FIGURES_CALL, {}), (200, view_call, {}), (200, OPENAI_ANSWER, {})]


def openai_model(replay: rec.OpenAIReplay) -> OpenAICompatModel:
    """The real OpenAI-compatible adapter on a replayed gateway, priced as the price table has it."""
    return OpenAICompatModel("gpt-4.1-mini", base_url="https://gateway.example/v1", api_key="sk-test-0123456789abcdef",
                             transport=replay.transport, retry=NO_RETRY, price_id="openai:gpt-4.1-mini")
