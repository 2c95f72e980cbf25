"""Recorded provider streams whose tool call's arguments arrive in pieces, as hosted models write
them: a `show_view` call of a view with a title and three parts, its JSON cut at uneven places
(inside keys, strings and numbers), for Bedrock ConverseStream and an OpenAI-compatible gateway."""
from __future__ import annotations

import json

import tests.models.provider_recordings as rec
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
