"""The OIDC sign-in's routes against the local provider stub: the whole authorization-code + PKCE
round trip, the session cookie as a caller, cross-site refusals, renewal, sign-out and every
failure as one clear line."""
from __future__ import annotations

from http.cookies import SimpleCookie

import httpx
import pytest

from groundchat.auth.callers import CHAT_USE, RUNS_READ
from groundchat_testkit.oidc_provider import StubOidcProvider
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.conftest import parse_sse

APP = "https://chat.test"
SAME_ORIGIN = {"origin": APP}


@pytest.fixture
def idp():
    with StubOidcProvider(redirect_uris=[f"{APP}/auth/callback"], sign_out_uris=[f"{APP}/chat"]) as stub:
        yield stub


@pytest.fixture
def oidc_env(make_env, settings, monkeypatch, idp):
    for name, value in {"auth_mode": "oidc", "oidc_issuer": idp.issuer, "oidc_client_id": idp.client_id,
                        "oidc_redirect_url": f"{APP}/auth/callback", "session_secret": "k" * 40}.items():
        monkeypatch.setattr(settings, name, value)
    return make_env(ScriptedModel([Step(text="Hello from the scripted model.")] * 3),
                    grants={"oidc-user-1": [CHAT_USE, RUNS_READ]})


def client(env) -> httpx.AsyncClient:
    # https, so the client's cookie jar keeps and sends the Secure cookies as a browser does.
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=env.app), base_url=APP)


def set_cookies(response: httpx.Response) -> dict[str, dict]:
    out = {}
    for header in response.headers.get_list("set-cookie"):
        parsed = SimpleCookie()
        parsed.load(header)
        for name, morsel in parsed.items():
            flags = {k: v for k, v in morsel.items() if v}
            out[name] = {"value": morsel.value, **flags, "raw": header}
    return out


async def sign_in(app_client: httpx.AsyncClient) -> httpx.Response:
    """What the browser does: our sign-in, the provider's authorize (auto-approved), our callback."""
    started = await app_client.get("/auth/sign-in")
    assert started.status_code == 302, started.text
    with httpx.Client() as browser:
        approved = browser.get(started.headers["location"])
    assert approved.status_code == 302, approved.text
    return await app_client.get(approved.headers["location"])


async def test_the_round_trip_signs_in_with_a_strict_secure_http_only_session(oidc_env, idp):
    async with client(oidc_env) as app_client:
        started = await app_client.get("/auth/sign-in")
        state_cookie = set_cookies(started)["__Host-groundchat-sign-in"]
        assert state_cookie["secure"] and state_cookie["httponly"] and state_cookie["samesite"] == "lax"
        assert state_cookie["path"] == "/" and state_cookie["max-age"] == "600"
        authorize = httpx.URL(started.headers["location"])
        assert authorize.params["code_challenge_method"] == "S256" and len(authorize.params["code_challenge"]) == 43
        with httpx.Client() as browser:
            approved = browser.get(str(authorize))
        landed = await app_client.get(approved.headers["location"])
        assert landed.status_code == 302 and landed.headers["location"] == "/chat"
        cookies = set_cookies(landed)
        session = cookies["__Host-groundchat-session"]
        assert session["secure"] and session["httponly"] and session["samesite"] == "strict" and session["path"] == "/"
        assert 290 <= int(session["max-age"]) <= 300  # the ID token's own lifetime
        refresh = cookies["__Secure-groundchat-refresh"]
        assert refresh["secure"] and refresh["httponly"] and refresh["samesite"] == "strict" and refresh["path"] == "/auth"
        assert cookies["__Host-groundchat-sign-in"]["max-age"] == "0"
        assert idp.token_requests[-1]["code_verifier"] and idp.token_requests[-1]["grant_type"] == "authorization_code"

        who = (await app_client.get("/auth/session")).json()
        assert who["signed_in"] and who["user"] == "oidc-user-1" and who["name"] == "ada@example.com"
        assert 290 <= who["expires_in"] <= 300 and who["refreshable"] is True
        assert "token" not in str(who).lower()  # the page never sees a token
        assert (await app_client.get("/api/conversations")).status_code == 200
        asked = await app_client.post("/api/chat", json={"stream": True, "message": "Hello?"}, headers=SAME_ORIGIN)
        assert asked.status_code == 200
        assert "Hello from the scripted model." in "".join(d.get("text", "") for t, d in parse_sse(asked.text) if t == "text")


async def test_a_cookie_signed_change_from_elsewhere_is_refused_and_says_why(oidc_env):
    async with client(oidc_env) as app_client:
        await sign_in(app_client)
        for headers in ({"origin": "https://evil.test"}, {}, {"origin": "null"}):
            refused = await app_client.post("/api/chat", json={"stream": True, "message": "Hello?"}, headers=headers)
            assert refused.status_code == 403, headers
            assert refused.json()["error"]["code"] == "cross-site"
        assert "another site (https://evil.test)" in (await app_client.post(
            "/api/chat", json={"stream": True, "message": "Hi"}, headers={"origin": "https://evil.test"})).json()["error"]["message"]
        # A client without Origin may send our header instead; reading never needs either.
        assert (await app_client.post("/api/chat", json={"stream": True, "message": "Hi"}, headers={"x-groundchat-csrf": "1"})).status_code == 200
        assert (await app_client.get("/api/conversations", headers={"origin": "https://evil.test"})).status_code == 200
        for route in ("/auth/refresh", "/auth/sign-out"):
            assert (await app_client.post(route, headers={"origin": "https://evil.test"})).status_code == 403


def test_the_stub_refuses_a_wrong_verifier_and_a_second_use_of_a_code(idp):
    from groundchat.auth.oidc import new_pkce_pair

    verifier, challenge = new_pkce_pair()
    with httpx.Client() as browser:
        approved = browser.get(f"{idp.issuer}/authorize", params={
            "response_type": "code", "client_id": idp.client_id, "redirect_uri": f"{APP}/auth/callback",
            "scope": "openid", "state": "s", "code_challenge": challenge, "code_challenge_method": "S256"})
        code = httpx.URL(approved.headers["location"]).params["code"]
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": f"{APP}/auth/callback", "client_id": idp.client_id}
        wrong = browser.post(f"{idp.issuer}/token", data={**form, "code_verifier": new_pkce_pair()[0]})
        assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
        assert "code_verifier" in wrong.json()["error_description"]
        # A refused attempt used the code up, as providers do: the right verifier is too late.
        assert browser.post(f"{idp.issuer}/token", data={**form, "code_verifier": verifier}).status_code == 400

        approved = browser.get(str(httpx.URL(approved.request.url)))
        form["code"] = httpx.URL(approved.headers["location"]).params["code"]
        right = browser.post(f"{idp.issuer}/token", data={**form, "code_verifier": verifier})
        assert right.status_code == 200 and right.json()["id_token"].count(".") == 2
        assert browser.post(f"{idp.issuer}/token", data={**form, "code_verifier": verifier}).json()["error"] == "invalid_grant"
        plain = browser.get(f"{idp.issuer}/authorize", params={
            "response_type": "code", "client_id": idp.client_id, "redirect_uri": f"{APP}/auth/callback", "scope": "openid",
            "state": "s", "code_challenge": verifier, "code_challenge_method": "plain"})
        assert httpx.URL(plain.headers["location"]).params["error"] == "invalid_request"


@pytest.mark.parametrize("query, says", [
    ("code=abc&state=forged", "state differs"),
    ("error=access_denied&error_description=The+user+said+no&state=x", "access_denied: The user said no"),
])
async def test_a_bad_callback_is_a_page_that_says_what_to_do(oidc_env, query, says):
    async with client(oidc_env) as app_client:
        await app_client.get("/auth/sign-in")
        page = await app_client.get(f"/auth/callback?{query}")
    assert page.status_code == 400 and page.headers["content-type"].startswith("text/html")
    assert says in page.text and "Start the sign-in again." in page.text and "Traceback" not in page.text
    assert set_cookies(page)["__Host-groundchat-sign-in"]["max-age"] == "0"


async def test_a_callback_without_the_sign_in_cookie_is_refused(oidc_env):
    async with client(oidc_env) as app_client:
        page = await app_client.get("/auth/callback?code=abc&state=x")
    assert page.status_code == 400 and "did not start in this browser" in page.text


async def test_the_provider_down_is_a_503_with_one_line(oidc_env, idp):
    async with client(oidc_env) as app_client:
        idp.down()
        page = await app_client.get("/auth/sign-in")
        assert page.status_code == 503 and page.headers["content-type"].startswith("text/html")
        assert "answered HTTP 503 for its discovery document" in page.text and "Try again in a minute." in page.text
        idp.is_down = False
        await sign_in(app_client)
        idp.down()  # discovery is cached now: the token endpoint is what fails
        renewed = await app_client.post("/auth/refresh", headers=SAME_ORIGIN)
        assert renewed.status_code == 503 and renewed.json()["error"]["code"] == "sign-in-unavailable"
        assert "\n" not in renewed.json()["error"]["message"]
        # A session cookie that cannot be checked now (no keys cached, provider down) is neither
        # "signed in" nor "signed out": the page learns that the provider is unreachable.
        from groundchat.auth.oidc import provider_for

        provider_for.cache_clear()
        who = await app_client.get("/auth/session")
        assert who.status_code == 503 and who.json()["configured"] is True and who.json()["signed_in"] is False
        assert who.json()["error"]["message"].endswith("Try again in a minute.")
        idp.is_down = False
        started = await app_client.get("/auth/sign-in")
        state = httpx.URL(started.headers["location"]).params["state"]
        idp.stop()  # gone entirely between the authorize step and the callback: nothing listens
        page = await app_client.get(f"/auth/callback?code=a&state={state}")
    assert page.status_code == 503 and "token endpoint cannot be reached (ConnectError)" in page.text
    assert "Traceback" not in page.text


async def test_renewal_and_sign_out(oidc_env, idp):
    async with client(oidc_env) as app_client:
        await sign_in(app_client)
        renewed = await app_client.post("/auth/refresh", headers=SAME_ORIGIN)
        assert renewed.status_code == 200 and renewed.json()["signed_in"] and renewed.json()["user"] == "oidc-user-1"
        assert idp.token_requests[-1]["grant_type"] == "refresh_token"
        assert "__Host-groundchat-session" in set_cookies(renewed)

        out = await app_client.post("/auth/sign-out", headers={**SAME_ORIGIN, "accept": "application/json"})
        assert out.status_code == 200
        end = httpx.URL(out.json()["end_session_url"])
        assert str(end).startswith(f"{idp.issuer}/logout?")
        assert end.params["post_logout_redirect_uri"] == f"{APP}/chat" and end.params["id_token_hint"].count(".") == 2
        cleared = set_cookies(out)
        assert {name for name, c in cleared.items() if c.get("max-age") == "0"} == {
            "__Host-groundchat-session", "__Secure-groundchat-refresh", "__Host-groundchat-sign-in"}
        assert all(c["secure"] and c["httponly"] for c in cleared.values())  # a __Host- cookie is only deleted so
        after = (await app_client.get("/auth/session")).json()
        assert after["signed_in"] is False and after["refreshable"] is False
        assert (await app_client.get("/api/conversations")).status_code == 401
        again = await app_client.post("/auth/refresh", headers=SAME_ORIGIN)
        assert again.status_code == 401 and again.json()["error"]["message"] == "There is no sign-in to renew here. Sign in again."


async def test_a_bearer_id_token_is_checked_like_the_cookie(oidc_env, idp):
    async with client(oidc_env) as app_client:
        good = await app_client.get("/api/conversations", headers={"authorization": f"Bearer {idp.id_token()}"})
        other_client = await app_client.get("/api/conversations", headers={"authorization": f"Bearer {idp.id_token(aud='x')}"})
    assert good.status_code == 200 and other_client.status_code == 401


async def test_without_settings_the_session_says_so_and_sign_in_names_what_to_set(make_env, settings, monkeypatch, idp):
    monkeypatch.setattr(settings, "auth_mode", "oidc")
    env = make_env(ScriptedModel([Step(text="ok")]))
    async with client(env) as app_client:
        assert (await app_client.get("/auth/session")).json()["configured"] is False
        monkeypatch.setattr(settings, "oidc_issuer", idp.issuer)
        page = await app_client.get("/auth/sign-in")
    assert page.status_code == 503 and "GROUNDCHAT_OIDC_CLIENT_ID" in page.text


async def test_the_routes_exist_only_in_oidc_mode(make_env):
    env = make_env(ScriptedModel([Step(text="ok")]))
    async with client(env) as app_client:
        for method, path in (("GET", "/auth/sign-in"), ("GET", "/auth/callback"), ("POST", "/auth/refresh"),
                             ("POST", "/auth/sign-out"), ("GET", "/auth/session")):
            assert (await app_client.request(method, path)).status_code == 404
    assert not any(p.startswith("/auth/") for p in env.app.openapi()["paths"])


async def test_a_changed_refresh_cookie_ends_the_session_with_401_and_clears_it(oidc_env, idp):
    async with client(oidc_env) as app_client:
        await sign_in(app_client)
        sealed = app_client.cookies.get("__Secure-groundchat-refresh")
        app_client.cookies.set("__Secure-groundchat-refresh", sealed[:-6] + "AAAAAA", domain="chat.test", path="/auth")
        refused = await app_client.post("/auth/refresh", headers=SAME_ORIGIN)
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "unauthenticated"
        assert "changed or sealed by another server" in refused.json()["error"]["message"]
        cleared = set_cookies(refused)
        assert cleared["__Secure-groundchat-refresh"]["max-age"] == "0"
        assert cleared["__Host-groundchat-session"]["max-age"] == "0"


async def test_an_origin_that_is_not_an_origin_is_a_403_never_a_500(oidc_env):
    async with client(oidc_env) as app_client:
        await sign_in(app_client)
        for origin in ("https://chat.test:99999", "http://[::1", "https://", "chat.test"):
            refused = await app_client.post("/api/chat", json={"stream": True, "message": "Hi"}, headers={"origin": origin})
            assert refused.status_code == 403 and refused.json()["error"]["code"] == "cross-site", origin
            out = await app_client.post("/auth/sign-out", headers={"origin": origin, "accept": "application/json"})
            assert out.status_code == 403, origin


async def test_the_scheme_is_part_of_the_origin(oidc_env):
    async with client(oidc_env) as app_client:
        await sign_in(app_client)
        refused = await app_client.post("/api/chat", json={"stream": True, "message": "Hi"}, headers={"origin": "http://chat.test"})
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "cross-site"



@pytest.mark.parametrize("path", ["/chat", "/chat/runs", "/chat/trace"])
async def test_every_page_says_its_site_signs_in_with_oidc(oidc_env, path):
    """`data-sign-in` tells the page that /auth/session exists and may be asked."""
    async with client(oidc_env) as app_client:
        assert 'data-sign-in="oidc"' in (await app_client.get(path)).text
        assert (await app_client.get("/auth/session")).status_code == 200


@pytest.mark.parametrize("path", ["/chat", "/chat/runs", "/chat/trace"])
async def test_in_dev_mode_every_page_says_there_is_no_session_to_ask_about(make_env, path):
    env = make_env(ScriptedModel([Step(text="Hello.")]))
    async with client(env) as app_client:
        assert 'data-sign-in="dev"' in (await app_client.get(path)).text
        assert (await app_client.get("/auth/session")).status_code == 404
