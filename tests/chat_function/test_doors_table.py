"""One table of cases, run against each HTTP door of the same answer: our SSE frames, the JSON
answer and the AI SDK's UI message stream. A behaviour that holds at one door and not at another
is a red test. (MCP is a tool call, not an answer: its refusals and caps are
tests/mcp_server/test_mcp_http.py's, and the four doors' same answer is test_four_clients.py's.)"""
from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from groundchat.auth.callers import CHAT_USE, RUNS_READ
from groundchat.models.failures import ModelFailure
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.conftest import parse_sse

QUESTION = "Which context level is best?"
GRANTS = {"alice": [CHAT_USE, RUNS_READ], "bob": [CHAT_USE, RUNS_READ], "rita": [RUNS_READ]}


@dataclass(frozen=True)
class Door:
    name: str
    path: str

    def body(self, conversation_id: str | None) -> dict:
        if self.name == "ai-sdk":
            return {"id": conversation_id or "a" * 32,
                    "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": QUESTION}]}]}
        return {"message": QUESTION, "stream": self.name == "sse",
                **({"conversation_id": conversation_id} if conversation_id else {})}

    def failure_code(self, response) -> tuple[int, str]:
        """(status, failure class) of an answer whose generation failed, as this door says it."""
        if self.name == "json":
            return response.status_code, response.json()["error"]["failure_kind"]
        if self.name == "sse":
            [error] = [data for kind, data in parse_sse(response.text) if kind == "error"]
            return response.status_code, error["code"]
        parts = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: {")]
        [error] = [p["data"] for p in parts if p["type"] == "data-error"]
        assert parts[-1]["type"] == "finish" and any(p["type"] == "error" for p in parts)
        return response.status_code, error["code"]


DOORS = [Door("sse", "/api/chat"), Door("json", "/api/chat"), Door("ai-sdk", "/api/ai-sdk/chat")]


@pytest.mark.parametrize("door", DOORS, ids=lambda d: d.name)
@pytest.mark.parametrize(("case", "user", "status", "code"), [
    ("no caller", None, 401, "unauthenticated"),
    ("no chat.use", "rita", 403, "forbidden"),
    ("someone else's conversation", "bob", 404, "not-found"),
])
async def test_a_refusal_is_the_same_at_every_door(make_env, door, case, user, status, code):
    env = make_env(ScriptedModel([Step(text="Full context.")], repeat_last=True), grants=GRANTS)
    async with env.client() as c:
        first = await c.post("/api/chat", json={"message": QUESTION}, headers=env.token("alice"))
        alices = first.json()["conversation_id"]
        r = await c.post(door.path, json=door.body(alices), headers=env.token(user) if user else {})
    assert (r.status_code, r.json()["error"]["code"]) == (status, code), (case, r.text)
    assert env.model.calls == 1  # only alice's first question was answered


@pytest.mark.parametrize("door", DOORS, ids=lambda d: d.name)
async def test_a_failed_generation_says_its_class_at_every_door(make_env, door):
    env = make_env(ScriptedModel([Step(raise_error=ModelFailure("gateway", "HTTP 500: upstream"))]), grants=GRANTS)
    async with env.client() as c:
        r = await c.post(door.path, json=door.body(None), headers=env.token("alice"))
    # The JSON answer has one status for the whole answer; a stream has begun (200) before it fails.
    assert door.failure_code(r) == (502 if door.name == "json" else 200, "gateway")
