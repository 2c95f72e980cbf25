"""The page's OIDC sign-in in a real headless Chromium, against the local provider stub: one click
to the provider and back, a question answered through the cookie, silent renewal, sign-out.

The app listens on 127.0.0.1 and the provider is addressed as `localhost`, so the provider's
redirect back is a cross-site navigation, as with a real provider (it is what makes the sign-in
cookie SameSite=Lax and the session cookie Strict). Both hosts are secure contexts to Chromium, so
it keeps Secure cookies over plain http here.
"""
from __future__ import annotations

import pytest

from groundchat_testkit.oidc_provider import StubOidcProvider
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.test_page_browser import CHROMIUM, _axe_source, ask, browser, served  # noqa: F401
from tests.chat_function.page_support import inject_axe

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")]

USER = "oidc-user-1"
# Short, so the page's renewal (at four fifths of the token's life) happens within the test.
ID_TOKEN_SECONDS = 15


@pytest.fixture
def oidc_app(served, settings, dynamo, monkeypatch):
    """The chat app in oidc mode beside a provider stub; `offline=True` answers with the offline
    answerer over the sample runs (slower to fill), else a scripted answer."""
    stubs: list[StubOidcProvider] = []

    def start(offline: bool = False) -> tuple[StubOidcProvider, str]:
        from groundchat.offline.answerer import OfflineAnswerer
        from groundchat.tools.data_tools import DATA_TOOLS
        from tests.moto_snapshot import sample_loaded

        stub = StubOidcProvider(redirect_uris=[], host="localhost", id_token_seconds=ID_TOKEN_SECONDS).start()
        stubs.append(stub)
        monkeypatch.setattr(settings, "auth_mode", "oidc")  # before the app is made: the routes depend on it
        if offline:
            sample_loaded(dynamo)
            env, url = served(OfflineAnswerer(), tools=list(DATA_TOOLS), grants={USER: ["chat.use", "runs.read"]})
        else:
            env, url = served(ScriptedModel([Step(text="A scripted answer.")]), grants={USER: ["chat.use"]})
        for name, value in {"oidc_issuer": stub.issuer, "oidc_client_id": stub.client_id,
                            "oidc_redirect_url": f"{url}/auth/callback", "session_secret": "p" * 40}.items():
            monkeypatch.setattr(settings, name, value)
        stub.redirect_uris.append(f"{url}/auth/callback")
        stub.sign_out_uris.append(f"{url}/chat")
        return stub, url

    yield start
    for stub in stubs:
        stub.stop()


def cookies_by_name(context) -> dict[str, dict]:
    return {c["name"]: c for c in context.cookies()}


def test_sign_in_with_the_provider_ask_renew_and_sign_out(browser, oidc_app):
    stub, url = oidc_app(offline=True)
    context = browser.new_context()
    page = context.new_page()
    crashes: list[str] = []
    page.on("pageerror", lambda exc: crashes.append(str(exc)))

    page.goto(f"{url}/chat")
    page.wait_for_selector("#oidc-sign-in:not([hidden])", timeout=10_000)
    assert page.inner_text("#oidc-sign-in-button") == "Sign in"
    assert not page.is_visible("#dev-sign-in") and not page.is_visible("#token-sign-in")  # no token to paste

    page.click("#oidc-sign-in-button")
    page.wait_for_url(f"{url}/chat", timeout=10_000)
    page.wait_for_selector("#signed-in:not([hidden])", timeout=10_000)
    assert page.inner_text("#who") == "ada@example.com"
    assert not page.is_visible("#oidc-sign-in")
    assert [r["grant_type"] for r in stub.token_requests] == ["authorization_code"]
    assert stub.token_requests[0]["code_verifier"]

    cookies = cookies_by_name(context)
    session = cookies["__Host-groundchat-session"]
    assert (session["secure"], session["httpOnly"], session["sameSite"], session["path"]) == (True, True, "Strict", "/")
    refresh = cookies["__Secure-groundchat-refresh"]
    assert (refresh["secure"], refresh["httpOnly"], refresh["sameSite"], refresh["path"]) == (True, True, "Strict", "/auth")
    assert "__Host-groundchat-sign-in" not in cookies  # used once, then cleared
    assert page.evaluate("document.cookie") == ""  # the page's script never sees a token
    assert page.evaluate("sessionStorage.getItem('groundchat-token')") is None

    # The run list, opened with no chat tab to lend it anything, finds the session by itself.
    page.goto(f"{url}/chat/runs")
    page.wait_for_selector("#rows tr", timeout=10_000)
    page.goto(f"{url}/chat")
    page.wait_for_selector("#signed-in:not([hidden])", timeout=10_000)

    ask(page, "Which context level is best, and what does it cost?")
    assert "offline answerer" in page.inner_text(".msg.assistant")
    page.wait_for_selector("#past li", timeout=10_000)  # the conversation list read through the cookie

    # Silent renewal before the ID token expires: a refresh grant, a later expiry, still signed in.
    first_expiry = session["expires"]
    with page.expect_response("**/auth/refresh", timeout=ID_TOKEN_SECONDS * 2000) as renewed:
        pass
    assert renewed.value.status == 200
    assert stub.token_requests[-1]["grant_type"] == "refresh_token"
    assert cookies_by_name(context)["__Host-groundchat-session"]["expires"] > first_expiry
    assert page.is_visible("#signed-in")
    ask(page, "What do agents get wrong most often?", answers=2)

    page.click("#sign-out")
    page.wait_for_url(f"{url}/chat", timeout=10_000)
    page.wait_for_selector("#oidc-sign-in:not([hidden])", timeout=10_000)
    assert not page.is_visible("#signed-in")
    assert stub.sign_outs and stub.sign_outs[-1]["client_id"] == stub.client_id
    assert not {"__Host-groundchat-session", "__Secure-groundchat-refresh"} & set(cookies_by_name(context))
    assert page.evaluate("fetch('/api/conversations').then((r) => r.status)") == 401
    assert crashes == []
    context.close()


def test_the_provider_refusing_shows_a_page_that_says_what_to_do(browser, oidc_app):
    stub, url = oidc_app()
    stub.deny = True
    page = browser.new_page()
    page.goto(f"{url}/chat")
    page.click("#oidc-sign-in-button")
    page.wait_for_selector("#sign-in-problem", timeout=10_000)
    assert page.inner_text("#sign-in-problem") == "The sign-in provider did not sign you in (access_denied: The user said no). Start the sign-in again."
    stub.deny = False
    page.get_by_role("link", name="Sign in again").click()
    page.wait_for_selector("#signed-in:not([hidden])", timeout=10_000)
    assert page.url == f"{url}/chat"


def test_the_provider_down_is_a_page_that_says_to_try_again(browser, oidc_app):
    stub, url = oidc_app()
    stub.down()
    page = browser.new_page()
    page.goto(f"{url}/chat")
    page.wait_for_selector("#oidc-sign-in:not([hidden])", timeout=10_000)
    with page.expect_response(lambda r: "/auth/sign-in" in r.url) as answered:
        page.click("#oidc-sign-in-button")
    assert answered.value.status == 503
    problem = page.inner_text("#sign-in-problem")
    assert "cannot be reached" in problem or "answered HTTP 503" in problem
    assert problem.endswith("Try again in a minute.") and "Traceback" not in page.content()


def test_the_sign_in_parts_pass_axe_at_both_widths(browser, oidc_app, corpus_dir):
    """The sign-in button, the signed-in line and the sign-in problem page, signed out and in, at
    1280 and 390 px."""
    axe = _axe_source(corpus_dir)
    stub, url = oidc_app()
    found = {}
    for width in (1280, 390):
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        stub.deny = True
        page.goto(f"{url}/chat")
        page.wait_for_selector("#oidc-sign-in:not([hidden])", timeout=10_000)
        steps = [("chat, signed out", None), ("sign-in problem", "#oidc-sign-in-button"), ("chat, signed in", "sign-in")]
        for name, action in steps:
            if action == "#oidc-sign-in-button":
                page.click(action)
                page.wait_for_selector("#sign-in-problem", timeout=10_000)
            elif action == "sign-in":
                stub.deny = False
                page.get_by_role("link", name="Sign in again").click()
                page.wait_for_selector("#signed-in:not([hidden])", timeout=10_000)
            page.wait_for_load_state("networkidle")
            inject_axe(page, axe)
            result = page.evaluate("async () => await axe.run()")
            found[(name, width)] = [(v["id"], [n["target"] for n in v["nodes"]]) for v in result["violations"]]
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), (name, width)
        context.close()
    assert found == {key: [] for key in found}
