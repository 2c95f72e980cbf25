"""A recorded gateway stream whose view spec arrives in pieces, at the chat's doors: the SSE stream
carries each piece as a `tool-input-delta` event ahead of the whole `tool-call`; the JSON answer is
the same as without pieces (its tool calls whole, the view accepted)."""
from __future__ import annotations

import json

from groundchat.auth.callers import CHAT_USE, RUNS_READ, VIEWS_SHOW
from groundchat.tools.view_tool import show_view
from tests.chat_function.conftest import parse_sse
from tests.models.provider_recordings import OpenAIReplay
from tests.models.tool_input_recordings import FIGURES, VIEW, figures_tool, openai_model, openai_view_answer, view_pieces

GRANTS = {"vera": [CHAT_USE, RUNS_READ, VIEWS_SHOW]}


def env_for(make_env):
    return make_env(openai_model(OpenAIReplay(*openai_view_answer())), tools=[figures_tool(), show_view], grants=GRANTS)


async def test_the_sse_stream_carries_each_piece_before_the_whole_call(make_env):
    env = env_for(make_env)
    async with env.client() as c:
        r = await c.post("/api/chat", json={"message": "Compare the context levels", "stream": True}, headers=env.token("vera"))
    frames = parse_sse(r.text)
    kinds = [kind for kind, _ in frames]
    pieces = [data for kind, data in frames if kind == "tool-input-delta" and data["id"] == "call_view01"]
    assert [p["delta"] for p in pieces] == view_pieces()
    assert {p["name"] for p in pieces} == {"show_view"}
    call_at = kinds.index("tool-call", kinds.index("tool-input-delta", kinds.index("tool-result")))
    assert frames[call_at][1] == {"id": "call_view01", "name": "show_view", "args": VIEW}
    # Every piece of the view's call comes before its call; the accepted view follows its result.
    assert max(i for i, (kind, data) in enumerate(frames) if kind == "tool-input-delta" and data["id"] == "call_view01") < call_at
    assert kinds[call_at + 1:call_at + 3] == ["tool-result", "view"]
    assert frames[-1][1]["reason"] == "complete"


async def test_the_json_answer_has_no_pieces_only_the_whole_calls_and_the_view(make_env):
    env = env_for(make_env)
    async with env.client() as c:
        r = await c.post("/api/chat", json={"message": "Compare the context levels"}, headers=env.token("vera"))
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["tool_calls"] == [
        {"id": "call_fig01", "name": "compare_contexts", "args": {}, "outcome": "ok"},
        {"id": "call_view01", "name": "show_view", "args": VIEW, "outcome": "ok"},
    ]
    assert answer["view"]["title"] == VIEW["title"] and answer["message"] == "Here is the comparison.Checklist halves the violations."
    assert "tool-input" not in json.dumps(answer) and FIGURES["runs"] == 12
