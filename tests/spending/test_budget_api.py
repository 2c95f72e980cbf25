"""The chat endpoint's spending checks, through FastAPI's TestClient: 429 after 409, the
budget route, and a cap met mid-answer."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest
from fastapi.testclient import TestClient

from groundchat.auth.tokens import issue_dev_token
from groundchat.auth.callers import CHAT_USE, RUNS_READ
from groundchat.spending.budget_guard import BudgetGuard
from groundchat.store import budget_counters as bc
from groundchat_testkit.scripted import ScriptedModel, Step

from .helpers import counter, lookup, open_reservations, usage_rows

QUESTION = "How do the contexts compare?"


def sse(text: str) -> list[tuple[str, dict]]:
    frames = []
    for block in text.strip().split("\n\n"):
        lines = block.splitlines()
        event = next(line[7:] for line in lines if line.startswith("event: "))
        frames.append((event, json.loads("".join(line[6:] for line in lines if line.startswith("data: ")))))
    return frames


@pytest.fixture
def api(dynamo, budget_settings, monkeypatch):
    """An app whose configured model is the scripted one, priced by the test's prices file."""
    from chat_function.app import create_app
    from groundchat.services import Services

    def make(model: ScriptedModel, chat: str = "1", user: str = "0.50", period: str = "total"):
        monkeypatch.setenv("GROUNDCHAT_MODEL", "scripted")
        settings = budget_settings(chat=chat, user=user, period=period)
        services = Services(settings=settings, dynamo=dynamo, model_override=model, tools_override=[lookup])
        for user_id in ("alice", "bob"):
            services.users.table.put_item(Item={"user_id": user_id, "grants": {CHAT_USE, RUNS_READ}})
        client = TestClient(create_app(services))
        client.auth_for = lambda user_id: {"authorization": f"Bearer {issue_dev_token(settings, user_id)}"}
        client.services = services
        return client

    return make


def first_step_worst_case(client, user: str = "alice") -> Decimal:
    from groundchat.chat.prompts import system_prompt
    from groundchat.models.messages import Message, ModelRequest

    s = client.services
    request = ModelRequest(
        system=system_prompt(s.settings.bot_name, s.registry.names),
        messages=[Message(role="user", content=QUESTION)],
        tools=[lookup.spec()],
        max_output_tokens=s.settings.max_output_tokens,
    )
    return BudgetGuard(s.dynamo, s.settings, user, "c", "r", "scripted").step_worst_case(request)[0]


def test_an_answer_is_charged_and_the_budget_route_shows_it(api, dynamo):
    model = ScriptedModel([Step(tool_calls=[("lookup", {})], input_tokens=300, output_tokens=40), Step(text="It is 42.", input_tokens=350, output_tokens=30)], model_id="scripted")
    client = api(model)
    r = client.post("/api/chat", json={"stream": True, "message": QUESTION}, headers=client.auth_for("alice"))
    assert r.status_code == 200
    assert sse(r.text)[-1][1]["reason"] == "complete"
    charged = sum(row["charged"] for row in usage_rows(dynamo))
    assert charged == Decimal("0.00038") + Decimal("0.00041")  # $1 / $2 per million in / out

    assert client.get("/api/chat/budget").status_code == 401
    body = client.get("/api/chat/budget", headers=client.auth_for("alice")).json()
    assert body["chat"] == {"spent": "0.00079", "reserved": "0", "remaining": "0.99921", "cap": "1", "period": "total", "resets_at": None}
    assert body["you"]["spent"] == "0.00079" and body["you"]["remaining"] == "0.49921"
    assert client.get("/api/chat/budget", headers=client.auth_for("bob")).json()["you"]["spent"] == "0"


def test_a_first_step_that_could_pass_a_cap_is_429_before_any_model_call(api, dynamo):
    model = ScriptedModel([Step(text="never")], model_id="scripted")
    client = api(model, chat="0.004", period="month")
    r = client.post("/api/chat", json={"stream": True, "message": QUESTION}, headers=client.auth_for("alice"))
    assert r.status_code == 429
    err = r.json()["error"]
    assert err["code"] == "spend-cap" and err["scope"] == "chat"
    assert err["message"].startswith("The chat's spending cap of $0.004 for this month is reached")
    assert err["resets_at"] and err["resets_at"] in err["message"]
    assert model.calls == 0
    assert usage_rows(dynamo) == [] and open_reservations(dynamo) == []


def test_the_429_comes_after_the_409(api, dynamo):
    model = ScriptedModel([Step(text="never")], model_id="scripted")
    client = api(model, chat="0.001")
    client.services.conversations.conversations.put_item(
        Item={"conversation_id": "f" * 32, "owner": "alice", "message_count": 40, "created_at": "2026-11-01T00:00:00Z", "title": "t", "version": 1}
    )
    full = client.post("/api/chat", json={"stream": True, "conversation_id": "f" * 32, "message": QUESTION}, headers=client.auth_for("alice"))
    assert full.status_code == 409
    fresh = client.post("/api/chat", json={"stream": True, "message": QUESTION}, headers=client.auth_for("alice"))
    assert fresh.status_code == 429
    assert model.calls == 0


def test_a_refused_request_leaves_its_conversation_free(api, dynamo):
    model = ScriptedModel([Step(text="First answer.", input_tokens=100, output_tokens=20)], model_id="scripted")
    client = api(model)
    first = client.post("/api/chat", json={"stream": True, "message": QUESTION}, headers=client.auth_for("alice"))
    conversation_id = sse(first.text)[0][1]["conversation_id"]
    # Now the cap cannot hold another step: refused, and the conversation is not left claimed.
    client.services.settings.user_budget_usd = Decimal("0.0002")
    refused = client.post("/api/chat", json={"stream": True, "conversation_id": conversation_id, "message": QUESTION}, headers=client.auth_for("alice"))
    assert refused.status_code == 429 and refused.json()["error"]["scope"] == "user"
    item = client.services.conversations.conversations.get_item(Key={"conversation_id": conversation_id})["Item"]
    assert "active_run" not in item


def test_a_question_the_caps_hold_no_answer_for_is_a_429_before_any_call(api, dynamo):
    model = ScriptedModel([Step(tool_calls=[("lookup", {})], input_tokens=100, output_tokens=2900), Step(text="never")], model_id="scripted")
    client = api(model)
    cap = first_step_worst_case(client) + Decimal("0.001")  # the first step fits; the answering step does not
    client.services.settings.user_budget_usd = cap
    r = client.post("/api/chat", json={"stream": True, "message": QUESTION}, headers=client.auth_for("alice"))
    assert r.status_code == 429 and r.json()["error"]["code"] == "spend-cap" and r.json()["error"]["scope"] == "user"
    assert model.calls == 0
    mine = counter(dynamo, bc.user_scope("alice"))
    assert (mine.spent, mine.reserved) == (0, 0)
