"""The OIDC sign-in through the API Gateway REST stand-in and the packaged chat function under the
real Web Adapter and emulator, against the testkit's OpenID provider: the cookies of one response
arrive as separate Set-Cookie headers (folded into one, a browser would keep only the first), the
cross-site check passes through with the request's Origin and Host, and every address the sign-in
sends the browser to keeps the stage prefix.

The cookies are Secure (`__Host-`), so a client would not send them back over plain http; the
test carries them by hand, as a browser does over https."""
from __future__ import annotations

from http.cookies import SimpleCookie

import httpx
import pytest

from groundchat_cli.apigw_rest import RestApiStandIn, stage_of
from groundchat_cli.local_lambda import free_port, load_template
from groundchat_testkit.oidc_provider import StubOidcProvider
from tests.lambda_shape.local_stack import build_package, chat_env, frames, local_dynamo, require_local_lambda, start_function

USER = "oidc-user-1"  # the provider's default person


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tools = require_local_lambda()
    template = load_template()
    root = tmp_path_factory.mktemp("sign-in")
    build = build_package(root, tools)
    # The redirect URL names the API's own address, so the stand-in's port is chosen first.
    port = free_port()
    stage_url = f"http://127.0.0.1:{port}/{stage_of(template, {})}"
    with StubOidcProvider(redirect_uris=[f"{stage_url}/auth/callback"], sign_out_uris=[f"{stage_url}/chat"]) as idp, \
            local_dynamo() as db:
        from groundchat.config import Settings
        from groundchat.store.dynamo import Dynamo
        from groundchat.store.tables import USERS

        Dynamo(Settings(dynamodb_endpoint=db.endpoint)).table(USERS).put_item(
            Item={"user_id": USER, "grants": {"chat.use", "runs.read"}})
        env = chat_env(db.endpoint, root / "home", GROUNDCHAT_AUTH_MODE="oidc", GROUNDCHAT_OIDC_ISSUER=idp.issuer,
                       GROUNDCHAT_OIDC_CLIENT_ID=idp.client_id, GROUNDCHAT_OIDC_REDIRECT_URL=f"{stage_url}/auth/callback",
                       GROUNDCHAT_SESSION_SECRET="s" * 40)
        chat = start_function(template, "ChatFunction", build, root / "chat", env)
        api = RestApiStandIn(template, {"ChatFunction": chat}, port=port).start()
        try:
            yield {"api": api, "chat": chat, "idp": idp}
        finally:
            api.stop()
            chat.stop()


def set_cookies(response: httpx.Response) -> dict[str, dict]:
    """Each Set-Cookie header parsed on its own: exactly one cookie in each."""
    out = {}
    for header in response.headers.get_list("set-cookie"):
        parsed = SimpleCookie()
        parsed.load(header)
        assert len(parsed) == 1, f"more than one cookie in one header: {header!r}"
        [(name, morsel)] = parsed.items()
        out[name] = {"value": morsel.value, **{k: v for k, v in morsel.items() if v}}
    return out


@pytest.fixture(scope="module")
def signed_in(stack):
    """The browser's round trip; what each step answered."""
    api = stack["api"]
    with httpx.Client(timeout=120) as browser:
        started = browser.get(f"{api.stage_url}/auth/sign-in")
        approved = browser.get(started.headers["location"])
        state = set_cookies(started)["__Host-groundchat-sign-in"]["value"]
        landed = browser.get(approved.headers["location"], headers={"cookie": f"__Host-groundchat-sign-in={state}"})
    cookies = set_cookies(landed)
    return {"started": started, "approved": approved, "landed": landed, "cookies": cookies,
            "jar": "; ".join(f"{n}={c['value']}" for n, c in cookies.items() if c["value"])}


def test_the_sign_in_goes_to_the_provider_and_back_to_the_callback_under_the_stage(stack, signed_in):
    started, approved = signed_in["started"], signed_in["approved"]
    assert started.status_code == 302, stack["chat"].log()
    assert started.headers["location"].startswith(stack["idp"].issuer + "/authorize?")
    assert approved.status_code == 302
    assert httpx.URL(approved.headers["location"]).path == f"/{stack['api'].stage}/auth/callback"


def test_the_callbacks_three_cookies_arrive_as_three_headers(signed_in):
    landed = signed_in["landed"]
    assert landed.status_code == 302, landed.text
    assert len(landed.headers.get_list("set-cookie")) == 3
    cookies = signed_in["cookies"]
    assert set(cookies) == {"__Host-groundchat-session", "__Secure-groundchat-refresh", "__Host-groundchat-sign-in"}
    session, refresh = cookies["__Host-groundchat-session"], cookies["__Secure-groundchat-refresh"]
    assert session["value"].count(".") == 2 and session["httponly"] and session["secure"] and session["path"] == "/"
    assert refresh["value"] and refresh["path"] == "/dev/auth"  # the renewal's route, under the stage
    assert cookies["__Host-groundchat-sign-in"]["max-age"] == "0"


def test_the_callback_lands_on_the_chat_page_under_the_stage(stack, signed_in):
    assert signed_in["landed"].headers["location"] == f"/{stack['api'].stage}/chat"


def test_the_session_cookie_signs_in_through_the_adapter(stack, signed_in):
    who = httpx.get(f"{stack['api'].stage_url}/auth/session", headers={"cookie": signed_in["jar"]}, timeout=60).json()
    assert who["signed_in"] is True and who["user"] == USER and who["name"] == "ada@example.com"


def test_a_cookie_signed_question_passes_the_csrf_check_only_from_this_origin(stack, signed_in):
    api, jar = stack["api"], signed_in["jar"]
    question = {"message": "What does the axe rule color-contrast check?"}
    with httpx.Client(base_url=api.stage_url, timeout=120, headers={"cookie": jar}) as client:
        with client.stream("POST", "/api/chat", json={"stream": True, **question}, headers={"origin": api.url}) as asked:
            assert asked.status_code == 200, asked.read()
            got = frames(asked.iter_lines())
        assert [t for t, _ in got].count("done") == 1 and got[-1][1]["reason"] == "complete"
        for headers in ({"origin": "http://evil.test"}, {}):
            refused = client.post("/api/chat", json={"stream": True, **question}, headers=headers)
            assert refused.status_code == 403, headers
            assert refused.json()["error"]["code"] == "cross-site"
        # A client that sends no Origin may send the app's header instead.
        with client.stream("POST", "/api/chat", json={"stream": True, **question}, headers={"x-groundchat-csrf": "1"}) as asked:
            assert asked.status_code == 200


def test_signing_out_clears_every_cookie_in_headers_of_their_own(stack, signed_in):
    api = stack["api"]
    out = httpx.post(f"{api.stage_url}/auth/sign-out", timeout=60,
                     headers={"cookie": signed_in["jar"], "origin": api.url, "accept": "application/json"})
    assert out.status_code == 200, out.text
    cleared = set_cookies(out)
    assert len(out.headers.get_list("set-cookie")) == 3
    assert {n: c["max-age"] for n, c in cleared.items()} == {
        "__Host-groundchat-session": "0", "__Secure-groundchat-refresh": "0", "__Host-groundchat-sign-in": "0"}
    assert cleared["__Secure-groundchat-refresh"]["path"] == "/dev/auth"
    assert out.json()["signed_out"] is True
