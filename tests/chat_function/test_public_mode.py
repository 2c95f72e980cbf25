"""Public mode through the chat function: visitors ask behind the rate limit and the bot wall, in
the documented order of checks, with their own permissions, history profile and spending ceiling.
The verifier is the Turnstile stub, on 127.0.0.1."""
from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from decimal import Decimal

import httpx
import pytest

from groundchat.auth.callers import CHAT_USE, RUNS_READ
from groundchat.public.visitor_sessions import COOKIE_NAME, issue_session
from groundchat.services import Services
from groundchat.store import budget_counters as bc
from groundchat.store.tables import ALL_TABLES, BUDGET, RATE_LIMITS
from groundchat_testkit.scripted import ScriptedModel, Step
from groundchat_cli.turnstile_stub import TurnstileStub
from tests.chat_function.conftest import TEST_TOOLS, parse_sse

SECRET = "p" * 40
HOME_ADDRESS = "198.51.100.23"


@pytest.fixture(scope="module")
def stub():
    with TurnstileStub() as running:
        yield running


@dataclass
class PublicEnv:
    services: Services
    model: ScriptedModel
    app: object
    stub: TurnstileStub

    def client(self, address: str = HOME_ADDRESS) -> httpx.AsyncClient:
        # https: the visitor cookie is Secure, and a client keeps it only over https.
        # The page's own requests: a browser sends its Origin with every POST.
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app, client=(address, 50123)), base_url="https://test",
                                 headers={"origin": "https://test"})


def token() -> dict[str, str]:
    return {"x-human-check": f"tok-{uuid.uuid4().hex}"}


def session_of(visitor_id: str, minutes: int = 30, now: float | None = None) -> dict[str, str]:
    return {"cookie": f"{COOKIE_NAME}={issue_session(SECRET, visitor_id, minutes, now).token}"}


@pytest.fixture
def public(stub, dynamo, monkeypatch, tmp_path):
    from chat_function.app import create_app
    from groundchat.config import get_settings, reset_settings_cache

    def build(model: ScriptedModel | None = None, grants: dict[str, list[str]] | None = None, prices: dict | None = None, **env) -> PublicEnv:
        stub.answer, stub.widget = "yes", "works"
        stub.checks.clear()
        if prices is not None:
            path = tmp_path / "public-prices.json"
            path.write_text(json.dumps(prices))
            monkeypatch.setenv("GROUNDCHAT_PRICES_FILE", str(path))
        values = {"GROUNDCHAT_MODE": "public", "GROUNDCHAT_VISITOR_RATE_LIMIT": "20", "GROUNDCHAT_PUBLIC_BUDGET_USD": "0.50",
                  "GROUNDCHAT_VISITOR_SECRET": SECRET, "GROUNDCHAT_PUBLIC_DEV_AUTH": "local-only",
                  **stub.settings_env(), **env}
        for name, value in values.items():
            monkeypatch.setenv(name, value)
        reset_settings_cache()
        services = Services(settings=get_settings(), dynamo=dynamo, model_override=model, tools_override=TEST_TOOLS)
        for user, perms in (grants or {"alice": [CHAT_USE, RUNS_READ], "bob": [RUNS_READ]}).items():
            services.users.table.put_item(Item={"user_id": user, "grants": set(perms)})
        return PublicEnv(services, model, create_app(services), stub)

    return build


def answered(text: str) -> ScriptedModel:
    return ScriptedModel([Step(text=text)], repeat_last=True)


async def ask(client: httpx.AsyncClient, body, headers=None) -> httpx.Response:
    return await client.post("/api/chat", content=body if isinstance(body, (bytes, str)) else json.dumps(body),
                             headers={"content-type": "application/json", "accept": "text/event-stream", **(headers or {})})


def code(response: httpx.Response) -> str:
    return response.json()["error"]["code"]


# ---- a visitor's way in -------------------------------------------------------------------------


async def test_a_visitor_passes_the_check_once_then_asks_on_the_session(public):
    env = public(answered("Full context is best."))
    async with env.client() as client:
        first = await ask(client, {"message": "Which context is best?"}, token())
        assert first.status_code == 200
        cookie = first.headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE_NAME}=") and "HttpOnly" in cookie and "Secure" in cookie
        # Path /api (or /<stage>/api): the stop and reconnect routes of the visitor's answer get it.
        assert "SameSite=strict" in cookie and "Path=/api;" in cookie and "Max-Age=1800" in cookie
        frames = parse_sse(first.text)
        conversation = frames[0][1]["conversation_id"]
        assert frames[-1][0] == "done" and frames[-1][1]["reason"] == "complete"
        # The session carries the next question, in the same conversation: no new check.
        second = await ask(client, {"message": "And its cost?", "conversation_id": conversation})
        assert second.status_code == 200 and "set-cookie" not in second.headers
    assert [c["remoteip"] for c in env.stub.checks] == [HOME_ADDRESS]  # verified once, for one token
    stored = await env.services.conversations.get(conversation)
    assert stored["owner"].startswith("visitor:") and int(stored["message_count"]) == 4
    assert [m.content for m in env.model.requests[1].messages if m.role == "user"] == ["Which context is best?", "And its cost?"]


@pytest.mark.parametrize("context, path", [(None, "/api"), ('{"stage": "prod", "path": "/prod/api/ai-sdk/chat"}', "/prod/api")],
                         ids=["at-the-root", "behind-a-stage"])
async def test_the_ai_sdk_route_sets_the_visitor_cookie_for_the_whole_api_as_the_chat_route_does(public, context, path):
    env = public(answered("Full context is best."))
    chat_id = uuid.uuid4().hex
    body = {"id": chat_id, "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "Which context?"}]}]}
    extra = {"x-amzn-request-context": context} if context else {}
    async with env.client() as client:
        first = await client.post("/api/ai-sdk/chat", json=body, headers={**token(), **extra})
        assert first.status_code == 200, first.text
        cookie = first.headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE_NAME}=") and f"Path={path};" in cookie
        if context is None:
            # The browser's rule (a cookie goes to paths under its Path): the reconnect and the stop get it.
            for route in (f"/api/conversations/{chat_id}/answer", f"/api/conversations/{chat_id}/stop"):
                sent = await (client.get(route) if route.endswith("answer") else client.post(route))
                assert f"{COOKIE_NAME}=" in sent.request.headers.get("cookie", ""), route
                assert sent.status_code != 401, (route, sent.text)


async def test_no_check_and_no_session_is_401_and_a_session_sends_no_token_to_the_verifier(public):
    env = public(answered("x"))
    async with env.client() as client:
        refused = await ask(client, {"message": "hi"})
        assert (refused.status_code, code(refused)) == (401, "human-check-required")
        # A valid session wins over a token sent beside it: the token is not spent.
        assert (await ask(client, {"message": "hi"}, {**token(), **session_of("visitor:" + "a" * 32)})).status_code == 200
    assert env.stub.checks == [] and env.model.calls == 1


async def test_a_rejected_token_is_403_and_an_outage_is_503_fail_closed(public):
    env = public(answered("x"))
    async with env.client() as client:
        env.stub.answer = "no"
        rejected = await ask(client, {"message": "hi"}, token())
        assert (rejected.status_code, code(rejected)) == (403, "not-human")
        for outage in ("down", "error"):
            env.stub.answer = outage
            down = await ask(client, {"message": "hi"}, token())
            assert (down.status_code, code(down)) == (503, "bot-check-unavailable")
            assert down.headers["retry-after"] == "30" and "set-cookie" not in down.headers
    assert env.model.calls == 0


async def test_an_expired_session_renewed_by_a_new_check_keeps_the_visitor_and_conversation(public):
    env = public(answered("x"))
    async with env.client() as client:
        first = await ask(client, {"message": "one"}, token())
        conversation = parse_sse(first.text)[0][1]["conversation_id"]
    owner = (await env.services.conversations.get(conversation))["owner"]
    ran_out = session_of(owner, minutes=1, now=time.time() - 120)
    async with env.client() as client:
        stale = await ask(client, {"message": "two", "conversation_id": conversation}, ran_out)
        assert (stale.status_code, code(stale)) == (401, "human-check-required")
        renewed = await ask(client, {"message": "two", "conversation_id": conversation}, {**ran_out, **token()})
        assert renewed.status_code == 200 and renewed.headers["set-cookie"].startswith(COOKIE_NAME)
        # A session that names another visitor cannot continue this one's conversation.
        other = await ask(client, {"message": "three", "conversation_id": conversation}, session_of("visitor:" + "e" * 32))
        assert (other.status_code, code(other)) == (404, "not-found")


# ---- the order of checks ------------------------------------------------------------------------


async def test_the_order_of_checks_in_public_mode(public, dynamo, monkeypatch):
    """503 (no model key), 429 rate, 403/503 bot wall, 400 body, 404/409 conversation, 429 caps:
    each request below fails every later check too, and gets the earliest one's answer."""
    # 503 first: nothing counted, nothing verified.
    env = public(None, GROUNDCHAT_MODEL="openai:gpt-4.1-mini")
    async with env.client() as client:
        r = await ask(client, b"not json", {"x-human-check": ""})
        assert (r.status_code, code(r)) == (503, "chat-not-configured")
    assert dynamo.client.scan(TableName=dynamo.name(RATE_LIMITS))["Items"] == []

    model = answered("x")
    env = public(model, GROUNDCHAT_VISITOR_RATE_LIMIT="2", GROUNDCHAT_MAX_CONVERSATION_MESSAGES="2",
                 prices={"scripted": {"input_per_mtok": "1", "output_per_mtok": "2"}}, GROUNDCHAT_PUBLIC_BUDGET_USD="0.001")
    env.stub.answer = "no"
    async with env.client("192.0.2.1") as client:
        # Rate limit before the bot wall: the third request is 429 and never reaches the verifier.
        for _ in range(2):
            assert code(await ask(client, b"not json", token())) == "not-human"
        r = await ask(client, b"not json", token())
        assert (r.status_code, code(r)) == (429, "rate-limited") and int(r.headers["retry-after"]) >= 1
        assert len(env.stub.checks) == 2
    async with env.client("192.0.2.2") as client:
        # Bot wall before the body: a bad body with a rejected token is 403, with an outage 503.
        assert code(await ask(client, b"not json", token())) == "not-human"
        env.stub.answer = "down"
        assert code(await ask(client, b"not json", token())) == "bot-check-unavailable"
    env.stub.answer = "yes"
    async with env.client("192.0.2.3") as client:
        # Body before the conversation: 400, and the visitor keeps the session the check earned.
        r = await ask(client, {"message": "x", "conversation_id": "c" * 32, "extra": 1}, token())
        assert (r.status_code, code(r)) == (400, "bad-request") and r.headers["set-cookie"].startswith(COOKIE_NAME)
        # The conversation before the caps: unknown is 404 though the ceiling could not pay a step.
        r = await ask(client, {"message": "x", "conversation_id": "c" * 32})
        assert (r.status_code, code(r)) == (404, "not-found")
    owner = (await _visitor_with_a_full_conversation(env))
    async with env.client("192.0.2.4") as client:
        r = await ask(client, {"message": "x", "conversation_id": owner[1]}, session_of(owner[0]))
        assert (r.status_code, code(r)) == (409, "conversation-full")
        # Last, the caps: the visitors' ceiling ($0.001) cannot hold one step's worst case.
        r = await ask(client, {"message": "x"}, session_of(owner[0]))
        assert (r.status_code, code(r)) == (429, "spend-cap") and r.json()["error"]["scope"] == "public"
        assert "The spending cap for visitors of $0.001" in r.json()["error"]["message"]
    assert model.calls == 0


async def _visitor_with_a_full_conversation(env: PublicEnv) -> tuple[str, str]:
    from groundchat.models.messages import Message

    owner, conversation = "visitor:" + "b" * 32, "d" * 32
    await env.services.conversations.commit_exchange(
        conversation_id=conversation, owner=owner, run_id="r" * 32, existing=None,
        messages=[Message(role="user", content="q"), Message(role="assistant", content="a")], annotations={}, title="q")
    return owner, conversation


# ---- what a visitor may do, and spend -----------------------------------------------------------


async def test_visitors_spend_against_the_public_ceiling_as_well_as_the_total(public, dynamo):
    env = public(answered("x"), prices={"scripted": {"input_per_mtok": "1", "output_per_mtok": "2"}})
    async with env.client() as client:
        assert (await ask(client, {"message": "hi"}, token())).status_code == 200
    budget = dynamo.name(BUDGET)
    chat = bc.read_counter_sync(dynamo.client, budget, bc.CHAT_SCOPE, "total")
    visitors = bc.read_counter_sync(dynamo.client, budget, bc.PUBLIC_SCOPE, "total")
    assert chat.spent == visitors.spent == Decimal("0.00014")  # 100 in at $1/M + 20 out at $2/M
    assert chat.reserved == visitors.reserved == 0
    from groundchat.spending.operator import budget_status

    status = await budget_status(dynamo, env.services.settings, "dev")
    assert status["visitors"] == {"spent": "0.00014", "reserved": "0", "remaining": "0.49986", "cap": "0.5",
                                  "period": "total", "resets_at": None}


async def test_signed_in_people_keep_their_grants_and_do_not_spend_the_visitors_ceiling(public, dynamo):
    from groundchat.auth.tokens import issue_dev_token

    env = public(answered("x"), prices={"scripted": {"input_per_mtok": "1", "output_per_mtok": "2"}})
    async with env.client() as client:
        alice = {"authorization": f"Bearer {issue_dev_token(env.services.settings, 'alice')}"}
        assert (await ask(client, {"message": "hi"}, alice)).status_code == 200  # no human check for people
        bob = {"authorization": f"Bearer {issue_dev_token(env.services.settings, 'bob')}"}
        r = await ask(client, {"message": "hi"}, bob)
        assert (r.status_code, code(r)) == (403, "forbidden")
    assert env.stub.checks == []
    assert bc.read_counter_sync(dynamo.client, dynamo.name(BUDGET), bc.PUBLIC_SCOPE, "total").spent == 0
    assert bc.read_counter_sync(dynamo.client, dynamo.name(BUDGET), bc.CHAT_SCOPE, "total").spent > 0


async def test_visitors_are_offered_only_the_tools_of_their_configured_permissions(public):
    env = public(answered("x"), GROUNDCHAT_VISITOR_PERMISSIONS="chat.use,docs.read")
    async with env.client() as client:
        assert (await ask(client, {"message": "hi"}, token())).status_code == 200
    assert [t.name for t in env.model.requests[0].tools] == []  # compare_contexts needs runs.read
    env = public(answered("x"), GROUNDCHAT_VISITOR_PERMISSIONS="chat.use,docs.read,runs.read")  # the default
    async with env.client() as client:
        assert (await ask(client, {"message": "hi"}, token())).status_code == 200
    assert [t.name for t in env.model.requests[0].tools] == ["compare_contexts"]


async def test_visitors_get_the_short_history_oldest_exchanges_forgotten(public):
    env = public(answered("ok"))
    conversation = None
    async with env.client() as client:
        for n in range(6):
            body = {"message": f"question {n}", **({"conversation_id": conversation} if conversation else {})}
            r = await ask(client, body, token() if n == 0 else None)
            assert r.status_code == 200
            frames = parse_sse(r.text)
            conversation = frames[0][1]["conversation_id"]
    asked = [m.content for m in env.model.requests[-1].messages if m.role == "user"]
    assert asked == ["question 1", "question 2", "question 3", "question 4", "question 5"]  # 4 earlier + this one
    history = next(data for kind, data in frames if kind == "history")
    assert history["outcome"] == "reduced" and history["dropped_messages"] == 2


async def test_visitors_have_no_conversation_list_no_sharing_and_no_traces(public):
    env = public(answered("x"))
    async with env.client() as client:
        first = await ask(client, {"message": "hi"}, token())
        conversation = parse_sse(first.text)[0][1]["conversation_id"]
        # The session cookie is scoped to /api/chat; sent anyway, it is not a sign-in anywhere else.
        cookie = {"cookie": f"{COOKIE_NAME}={client.cookies.get(COOKIE_NAME)}"}
        assert client.cookies.get(COOKIE_NAME)
        for method, path in (("GET", "/api/conversations"), ("GET", f"/api/conversations/{conversation}"),
                             ("POST", f"/api/conversations/{conversation}/share"), ("GET", "/api/traces/latest"),
                             ("GET", "/api/chat/budget")):
            r = await client.request(method, path, headers=cookie)
            assert (r.status_code, code(r)) == (401, "unauthenticated"), path


async def test_the_address_comes_from_api_gateways_context_and_is_never_stored(public, dynamo):
    env = public(answered("x"), GROUNDCHAT_VISITOR_ADDRESS_FROM="api-gateway", GROUNDCHAT_VISITOR_RATE_LIMIT="1")

    def context(ip: str) -> dict[str, str]:
        return {"x-amzn-request-context": json.dumps({"identity": {"sourceIp": ip}}), "x-forwarded-for": "10.9.9.9"}

    async with env.client("127.0.0.1") as client:
        assert (await ask(client, {"message": "hi"}, {**token(), **context("203.0.113.50")})).status_code == 200
        limited = await ask(client, {"message": "hi"}, {**token(), **context("203.0.113.50")})
        assert code(limited) == "rate-limited"
        # Another source address (same connection, same X-Forwarded-For) has its own window.
        assert (await ask(client, {"message": "hi"}, context("203.0.113.51"))).status_code == 200
    assert [c["remoteip"] for c in env.stub.checks] == ["203.0.113.50"]  # then the session carried them
    for table in ALL_TABLES:
        items = dynamo.client.scan(TableName=dynamo.name(table))["Items"]
        assert "203.0.113.5" not in json.dumps(items), f"an address is stored in {table.logical}"


async def test_status_says_public_with_the_widgets_site_key_and_private_says_nothing_new(public, make_env):
    env = public(answered("x"))
    async with env.client() as client:
        status = (await client.get("/api/chat/status")).json()
    assert status["mode"] == "public"
    assert status["human_check"] == {"provider": "turnstile", "site_key": env.stub.site_key, "script_url": env.stub.script_url,
                                     "session_minutes": 30}


async def test_private_mode_status_and_answers_are_as_before(make_env):
    env = make_env(answered("x"))
    async with env.client() as client:
        status = (await client.get("/api/chat/status")).json()
        assert set(status) == {"enabled", "reason", "how_to_fix", "bot_name", "model", "feedback_reasons"}
        r = await ask(client, {"message": "hi"}, {"x-human-check": "ignored"})
        assert (r.status_code, code(r)) == (401, "unauthenticated")
        r = await ask(client, {"message": "hi"}, env.token("alice"))
        assert r.status_code == 200 and "set-cookie" not in r.headers


async def test_a_question_a_visitors_cookie_signs_must_come_from_this_site(public):
    """Another site's page can make the browser post text/plain with the visitor's cookie: refused,
    nothing is asked or spent; the page's own post (its Origin) and a script's header pass."""
    env = public(answered("x"))
    async with env.client() as client:
        assert (await ask(client, {"message": "hi"}, token())).status_code == 200
        for origin in ("https://evil.test", "http://test", "null", "https://test:99999"):
            forged = await client.post("/api/chat", content=json.dumps({"message": "hi"}),
                                       headers={"content-type": "text/plain", "origin": origin})
            assert (forged.status_code, code(forged)) == (403, "cross-site"), origin
        without = await client.post("/api/chat", content=json.dumps({"message": "hi"}),
                                    headers={"content-type": "application/json", "origin": ""})
        assert (without.status_code, code(without)) == (403, "cross-site")
        scripted = await client.post("/api/chat", content=json.dumps({"message": "hi"}),
                                     headers={"content-type": "application/json", "origin": "", "x-groundchat-csrf": "1"})
        assert scripted.status_code == 200
    assert env.model.calls == 2


async def test_a_visitor_follows_and_stops_only_their_own_answer_by_its_session(public):
    """Reconnect and stop need no human check (no model is called), only the session of the one who
    asked; another visitor, no session, or a cookie sent from another site get nothing."""
    env = public(answered("Full context is best."))
    async with env.client() as client:
        first = await ask(client, {"message": "Which context is best?"}, token())
        conversation = parse_sse(first.text)[0][1]["conversation_id"]
        mine = session_of((await env.services.conversations.get(conversation))["owner"])
        client.cookies.clear()
        followed = await client.get(f"/api/conversations/{conversation}/answer", headers=mine)
        assert followed.status_code == 200 and followed.json()["state"] == "answered"
        stop = await client.post(f"/api/conversations/{conversation}/stop", headers={**mine, "x-groundchat-csrf": "1"})
        assert (stop.status_code, code(stop)) == (409, "not-answering")
        forged = await client.post(f"/api/conversations/{conversation}/stop", headers={**mine, "origin": "https://evil.test"})
        assert (forged.status_code, code(forged)) == (403, "cross-site")
        other = await client.get(f"/api/conversations/{conversation}/answer", headers=session_of("visitor:someone-else"))
        assert other.status_code == 404
        nobody = await client.get(f"/api/conversations/{conversation}/answer")
        assert nobody.status_code == 401


async def test_public_mode_serves_no_dev_sign_in(public):
    env = public(answered("x"))
    async with env.client() as client:
        offered = await client.get("/api/dev/sign-in")
        taken = await client.post("/api/dev/sign-in", content=json.dumps({"user": "dev"}),
                                  headers={"content-type": "application/json"})
    assert offered.status_code == 404 and taken.status_code == 404 and "token" not in taken.text


def test_the_local_server_never_takes_the_visitors_address_from_x_forwarded_for(public):
    """`groundchat serve` in client mode: uvicorn would trust X-Forwarded-For from 127.0.0.1 by
    default, so each made-up address would get a window of its own. Served the way the stack serves."""
    import threading
    import time

    import uvicorn

    from groundchat_cli.localstack import local_server_config
    from groundchat_cli.stack_address import free_port

    env = public(ScriptedModel([Step(text="x")] * 5), GROUNDCHAT_VISITOR_RATE_LIMIT="1")
    port = free_port()
    server = uvicorn.Server(local_server_config(env.app, port))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(200):
            if server.started:
                break
            time.sleep(0.05)
        statuses = []
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            for n in range(4):
                answer = client.post("/api/chat", content=json.dumps({"message": "hi"}),
                                     headers={"content-type": "application/json", **token(),
                                              "x-forwarded-for": f"203.0.113.{n + 1}"})
                statuses.append(answer.status_code)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    assert statuses == [200, 429, 429, 429]
    assert [c["remoteip"] for c in env.stub.checks] == ["127.0.0.1"]
