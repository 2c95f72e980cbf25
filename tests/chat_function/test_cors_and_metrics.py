"""CORS only for configured origins; every refusal and answer is counted."""
import httpx

from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.conftest import parse_sse


async def test_cors_allows_only_configured_origins(dynamo, settings, monkeypatch):
    from chat_function.app import create_app
    from groundchat.services import Services

    monkeypatch.setattr(settings, "allowed_origins", "https://chat.example.org")
    app = create_app(Services(settings=settings, dynamo=dynamo, model_override=ScriptedModel([])))
    preflight = {"access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        ok = await c.options("/api/chat", headers={"origin": "https://chat.example.org", **preflight})
        other = await c.options("/api/chat", headers={"origin": "https://evil.example", **preflight})
    assert ok.headers["access-control-allow-origin"] == "https://chat.example.org"
    assert "access-control-allow-origin" not in other.headers


async def test_a_browser_mcp_host_on_a_listed_origin_may_send_mcps_headers(dynamo, settings, monkeypatch):
    from chat_function.app import create_app
    from groundchat.services import Services

    monkeypatch.setattr(settings, "allowed_origins", "https://host.example.org")
    app = create_app(Services(settings=settings, dynamo=dynamo, model_override=ScriptedModel([])))
    preflight = {"origin": "https://host.example.org", "access-control-request-method": "POST",
                 "access-control-request-headers": "authorization,content-type,mcp-protocol-version"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        asked = await c.options("/mcp", headers=preflight)
        refused = await c.post("/mcp", json={}, headers={"origin": "https://host.example.org"})
    assert asked.status_code == 200 and asked.headers["access-control-allow-origin"] == "https://host.example.org"
    assert "mcp-protocol-version" in asked.headers["access-control-allow-headers"]
    # The 401's WWW-Authenticate (where to sign in) is readable by the host's script.
    assert refused.status_code == 401 and "www-authenticate" in refused.headers["access-control-expose-headers"]


async def test_refusals_and_answers_are_recorded_as_metrics(make_env, monkeypatch):
    import groundchat.chat.stored_run as answer_module
    import chat_function.errors as errors_module

    refusals, answers = [], []
    monkeypatch.setattr(errors_module, "record_refusal", lambda code, **kw: refusals.append(code))
    monkeypatch.setattr(answer_module, "record_refusal", lambda code, **kw: refusals.append(code))
    monkeypatch.setattr(answer_module, "record_answer", lambda cost, tokens, **kw: answers.append((cost, tokens, kw)))
    env = make_env(ScriptedModel([Step(text="fine", input_tokens=120, output_tokens=30)]))
    async with env.client() as c:
        await c.post("/api/chat", json={"stream": True, "message": "q"})
        r = await c.post("/api/chat", json={"stream": True, "message": "q"}, headers=env.token("alice"))
    assert parse_sse(r.text)[-1][1]["reason"] == "complete"
    assert refusals == ["unauthenticated"]
    assert len(answers) == 1
    cost, tokens, kw = answers[0]
    assert tokens == 150 and kw == {"input_tokens": 120, "output_tokens": 30}
