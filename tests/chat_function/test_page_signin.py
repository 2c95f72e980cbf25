"""Signing in locally without pasting a token: the dev-only route, and the page's one click."""
from __future__ import annotations

import jwt
import pytest

from groundchat.auth.tokens import TokenVerifier
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.test_page_browser import CHROMIUM, ask, browser, served  # noqa: F401


# ---- the route ---------------------------------------------------------------------------------

async def test_dev_sign_in_issues_a_token_the_chat_accepts(make_env):
    env = make_env(ScriptedModel([Step(text="ok")]))
    async with env.client() as client:
        offer = (await client.get("/api/dev/sign-in")).json()
        assert offer["default_user"] == env.settings.dev_user
        assert {"alice", "bob"} <= set(offer["users"])
        r = await client.post("/api/dev/sign-in", json={"user": "alice"})
        assert r.status_code == 200 and r.headers["cache-control"] == "no-store"
        body = r.json()
        assert body["user"] == "alice" and "chat.use" in body["permissions"]
        assert TokenVerifier(env.settings).verify(body["token"]).id == "alice"
        assert jwt.decode(body["token"], options={"verify_signature": False})["exp"] <= body["expires_at"]
        listed = await client.get("/api/conversations", headers={"authorization": "Bearer " + body["token"]})
        assert listed.status_code == 200
        default = (await client.post("/api/dev/sign-in")).json()  # no body: the dev user
        assert default["user"] == env.settings.dev_user


@pytest.mark.parametrize("body", [b'{"user": ""}', b'{"user": "a b"}', b'{"user": 3}', b'{"user": "x", "admin": true}',
                                  b"[1]", b"not json", b'{"user": "' + b"a" * 2000 + b'"}'])
async def test_dev_sign_in_refuses_anything_but_a_user_id(make_env, body):
    env = make_env(ScriptedModel([Step(text="ok")]))
    async with env.client() as client:
        r = await client.post("/api/dev/sign-in", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad-request"


async def test_the_sign_in_route_does_not_exist_outside_dev_mode(make_env, settings, monkeypatch):
    monkeypatch.setattr(settings, "auth_mode", "oidc")
    env = make_env(ScriptedModel([Step(text="ok")]))
    async with env.client() as client:
        assert (await client.post("/api/dev/sign-in", json={"user": "alice"})).status_code == 404
        assert (await client.get("/api/dev/sign-in")).status_code == 404
    assert "/api/dev/sign-in" not in env.app.openapi()["paths"]


# ---- the page ----------------------------------------------------------------------------------

@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")
def test_one_click_sign_in_clears_the_sign_in_error_then_asks_and_signs_out(browser, served):
    model = ScriptedModel([Step(text="An answer for you.")])
    env, url = served(model)
    page = browser.new_page()
    page.goto(f"{url}/chat")
    page.wait_for_selector("#dev-sign-in:not([hidden])")
    assert page.inner_text("#dev-sign-in-button") == "Sign in as dev"
    assert not page.is_visible("#token")  # no token to paste: it is behind "Sign in with an access token"
    # Asked before signing in: the page says to sign in, and keeps the question.
    page.fill("#question", "Which context level is best?")
    page.click("#ask button[type=submit]")
    page.wait_for_selector(".msg.needs-sign-in")
    assert "Sign in to ask" in page.inner_text("#transcript")
    page.fill("#dev-user", "alice")
    assert page.inner_text("#dev-sign-in-button") == "Sign in as alice"
    page.click("#dev-sign-in-button")
    page.wait_for_selector("#signed-in:not([hidden])")
    assert page.inner_text("#who") == "alice"
    assert not page.is_visible("#dev-sign-in")
    assert page.inner_text("#transcript") == "" and page.input_value("#question") == "Which context level is best?"
    assert page.evaluate("sessionStorage.getItem('groundchat-token')").count(".") == 2
    assert page.evaluate("localStorage.length") == 0  # the token stays with this tab
    page.click("#ask button[type=submit]")
    page.wait_for_selector(".msg.assistant[data-done='complete']")
    assert "An answer for you." in page.inner_text(".msg.assistant")
    page.wait_for_selector("#past li")
    page.click("#sign-out")
    page.wait_for_selector("#dev-sign-in:not([hidden])")
    assert page.evaluate("sessionStorage.getItem('groundchat-token')") is None
    assert page.inner_text("#transcript") == "" and page.locator("#past li").count() == 0
    page.reload()
    page.wait_for_selector("#dev-sign-in:not([hidden])")
    assert not page.is_visible("#signed-in")


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")
def test_outside_dev_mode_the_page_offers_the_token_field(browser, served, settings, monkeypatch):
    monkeypatch.setattr(settings, "auth_mode", "oidc")
    env, url = served(ScriptedModel([Step(text="ok")]))
    page = browser.new_page()
    page.goto(f"{url}/chat")
    page.wait_for_selector("#token-sign-in[open]")
    assert page.is_visible("#token") and not page.is_visible("#dev-sign-in")
