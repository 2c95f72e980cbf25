"""Every response of the chat function carries the security headers: the pages, their scripts and
styles, the JSON API, a streamed answer, refusals and unknown addresses; and no page runs an inline
script, so the policy needs no 'unsafe-inline' for scripts."""
from __future__ import annotations

import re
from importlib import resources
from types import SimpleNamespace

import pytest

from groundchat.web.security_headers import security_headers
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.conftest import parse_sse

FIXED = {"x-content-type-options": "nosniff", "referrer-policy": "strict-origin-when-cross-origin", "x-frame-options": "DENY"}


def policy_of(response) -> dict[str, str]:
    return dict(part.strip().split(" ", 1) for part in response.headers["content-security-policy"].split(";"))


def assert_secured(response) -> None:
    where = f"{response.request.method} {response.request.url.path} ({response.status_code})"
    for name, value in FIXED.items():
        assert response.headers.get(name) == value, (where, name)
    policy = policy_of(response)
    assert policy["script-src"] == "'self'", where  # no inline script, no eval, no other site
    assert policy["frame-ancestors"] == "'none'" and policy["object-src"] == "'none'" and policy["base-uri"] == "'none'", where
    assert policy["default-src"] == "'none'" and policy["connect-src"] == "'self' blob:", where
    assert "unsafe-eval" not in response.headers["content-security-policy"], where
    denied = response.headers["permissions-policy"].split(", ")
    assert {"camera=()", "microphone=()", "geolocation=()", "payment=()"} <= set(denied), where


@pytest.fixture
def env(make_env):
    return make_env(ScriptedModel([Step(text="Full context is best.")], repeat_last=True))


PAGES = ["/chat", "/chat/runs", "/chat/runs?run=x", "/chat/trace?run=abc"]
SCRIPTS = ["/static/transcript.js", "/static/view_stream.js", "/static/transcript.css", "/static/public.js", "/static/chat.js", "/static/runs.js",
           "/static/trace.js"]


async def test_every_page_script_and_api_answer_carries_the_headers(env):
    async with env.client() as c:
        answered = await c.post("/api/chat", json={"message": "Which context is best?"},
                                headers={**env.token("alice"), "accept": "text/event-stream"})
        assert answered.headers["content-type"].startswith("text/event-stream")
        conversation = parse_sse(answered.text)[0][1]["conversation_id"]
        checked = [answered]
        for address in PAGES + SCRIPTS + ["/api/chat/status", "/healthz", "/api/runs", f"/api/conversations/{conversation}"]:
            checked.append(await c.get(address, headers=env.token("alice")))
        assert all(r.status_code == 200 for r in checked), [(str(r.url), r.status_code) for r in checked if r.status_code != 200]
        # Refusals, redirects and what no route answers: the same headers.
        checked += [await c.get("/api/conversations"), await c.get(f"/api/conversations/{'f' * 32}", headers=env.token("alice")),
                    await c.post("/api/chat", content=b"{", headers={**env.token("alice"), "content-type": "application/json"}),
                    await c.get("/no/such/page"), await c.get("/chat/"), await c.delete("/chat"),
                    await c.post("/mcp", json={}, headers={"origin": "https://evil.example"})]
        assert [r.status_code for r in checked[-7:]] == [401, 404, 400, 404, 307, 405, 403]
    for response in checked:
        assert_secured(response)


async def test_a_scripts_media_type_is_javascript_so_nosniff_lets_it_run(env):
    async with env.client() as c:
        for address in SCRIPTS:
            r = await c.get(address)
            expected = "text/css" if address.endswith(".css") else "text/javascript"
            assert r.headers["content-type"].startswith(expected), address


@pytest.mark.parametrize("page", ["chat.html", "runs.html", "trace.html"])
def test_no_page_holds_an_inline_script_or_handler(page):
    text = resources.files("chat_function").joinpath(f"static/{page}").read_text(encoding="utf-8")
    tags = re.findall(r"<script\b[^>]*>", text)
    # Each is a file of this site, or a data block a browser never runs (the chat page's tool drawers).
    assert tags and all(re.fullmatch(r'<script src="(\.\./)?static/[a-z_]+\.js">', tag)
                        or re.fullmatch(r'<script id="[a-z-]+" type="application/json">', tag) for tag in tags), tags
    assert not re.search(r"<[a-z][^>]*\son[a-z]+\s*=", text)
    assert "javascript:" not in text


def test_public_mode_lets_the_human_check_serve_its_script_and_frame_and_nothing_else():
    settings = SimpleNamespace(mode="public", turnstile_script_url="https://challenges.example/turnstile/v0/api.js?render=explicit")
    policy = dict(part.strip().split(" ", 1) for part in security_headers(settings)["content-security-policy"].split(";"))
    assert policy["script-src"] == "'self' https://challenges.example"
    assert policy["frame-src"] == "https://challenges.example"
    assert policy["connect-src"] == "'self' blob:" and policy["frame-ancestors"] == "'none'"
    private = security_headers(SimpleNamespace(mode="private", turnstile_script_url=settings.turnstile_script_url))
    assert "challenges.example" not in private["content-security-policy"]


def test_a_human_check_script_that_is_no_web_address_stops_the_app_from_starting():
    with pytest.raises(ValueError, match="not an http"):
        security_headers(SimpleNamespace(mode="public", turnstile_script_url="javascript:alert(1)"))
