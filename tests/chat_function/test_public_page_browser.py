"""Public mode in a real headless Chromium: a visitor asks through the human-check widget (the
Turnstile stub's fake widget yields a token), and the page says what happened when the widget or
the verifier fails. Chromium comes from Debian's package; without it these tests skip."""
from __future__ import annotations

import pytest

from groundchat.auth.callers import CHAT_USE, RUNS_READ
from groundchat.public.visitor_sessions import COOKIE_NAME
from groundchat_testkit.scripted import ScriptedModel, Step
from groundchat_cli.serving import Servers, serve_in_thread
from groundchat_cli.turnstile_stub import TurnstileStub
from tests.chat_function.conftest import TEST_TOOLS
from tests.chat_function.test_page_browser import CHROMIUM, browser  # noqa: F401  (the browser fixture)

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")


@pytest.fixture(scope="module")
def stub():
    with TurnstileStub() as running:
        yield running


@pytest.fixture
def public_site(stub, dynamo, monkeypatch):
    """The chat function in public mode on 127.0.0.1, pointed at the stub."""
    from chat_function.app import create_app
    from groundchat.config import get_settings, reset_settings_cache
    from groundchat.services import Services

    servers = Servers()

    def serve(model: ScriptedModel, answer: str = "yes", widget: str = "works"):
        stub.answer, stub.widget = answer, widget
        stub.checks.clear()
        for name, value in {"GROUNDCHAT_MODE": "public", "GROUNDCHAT_VISITOR_RATE_LIMIT": "20",
                            "GROUNDCHAT_PUBLIC_BUDGET_USD": "0.50", "GROUNDCHAT_VISITOR_SECRET": "b" * 40,
                            "GROUNDCHAT_PUBLIC_DEV_AUTH": "local-only", **stub.settings_env()}.items():
            monkeypatch.setenv(name, value)
        reset_settings_cache()
        services = Services(settings=get_settings(), dynamo=dynamo, model_override=model, tools_override=TEST_TOOLS)
        services.users.table.put_item(Item={"user_id": "alice", "grants": {CHAT_USE, RUNS_READ}})
        return servers.serve(create_app(services))

    yield serve
    servers.stop_all()


def ask(page, question: str, answers: int = 1) -> str:
    """Ask as a visitor and wait for the `answers`-th answer to end; its text."""
    page.fill("#question", question)
    page.click("#ask button[type=submit]")
    page.wait_for_function(f"() => document.querySelectorAll('.msg.assistant[data-done]').length === {answers}", timeout=20_000)
    return page.locator(".msg.assistant").nth(answers - 1).inner_text()


def test_a_visitor_asks_through_the_widget_and_the_session_carries_the_next_question(browser, public_site, stub):
    model = ScriptedModel([Step(text="Full context is best."), Step(text="It is also the cheapest per run.")])
    url = public_site(model)
    page = browser.new_page()
    page.goto(f"{url}/chat")
    page.wait_for_selector("#human-check:not([hidden]) .stub-turnstile", timeout=10_000)
    page.wait_for_function("() => document.querySelector('#human-check').textContent.includes('verified as human')", timeout=10_000)
    assert "Full context is best." in ask(page, "Which context level is best?")
    assert "It is also the cheapest per run." in ask(page, "And what does it cost?", answers=2)
    # One human check for both questions; the second rode on the session, in the same conversation.
    assert len(stub.checks) == 1 and stub.checks[0]["remoteip"] == "127.0.0.1"
    assert [m.content for m in model.requests[1].messages if m.role == "user"] == ["Which context level is best?", "And what does it cost?"]
    cookie = next(c for c in page.context.cookies() if c["name"] == COOKIE_NAME)
    assert cookie["httpOnly"] and cookie["secure"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/api"
    # (the browser's default path, the question's directory: its stop and reconnect routes get it too)
    assert COOKIE_NAME not in page.evaluate("document.cookie")  # no script can read it
    assert page.locator("#share").is_hidden()  # sharing is for signed-in owners


def test_when_the_widget_fails_the_question_is_not_sent_and_the_page_says_why(browser, public_site, stub):
    model = ScriptedModel([Step(text="never")])
    url = public_site(model, widget="fails")
    page = browser.new_page()
    page.goto(f"{url}/chat")
    page.wait_for_function("() => document.querySelector('#human-check').textContent.includes('failed')", timeout=10_000)
    said = ask(page, "Which context level is best?")
    assert "Your question was not sent: the human check failed (stub-fails)" in said
    assert model.calls == 0 and stub.checks == []


def test_when_the_widgets_script_does_not_load_the_page_says_so(browser, public_site, stub):
    url = public_site(ScriptedModel([Step(text="never")]), widget="missing")
    page = browser.new_page()
    page.goto(f"{url}/chat")
    page.wait_for_function("() => document.querySelector('#human-check').textContent.includes('could not load')", timeout=10_000)
    assert "the human check's script did not load" in ask(page, "Hello?")


def test_a_verifier_outage_and_a_rejection_are_told_apart(browser, public_site, stub):
    model = ScriptedModel([Step(text="Now it works.")])
    url = public_site(model, answer="down")
    page = browser.new_page()
    page.goto(f"{url}/chat")
    page.wait_for_function("() => document.querySelector('#human-check').textContent.includes('verified as human')", timeout=10_000)
    assert "The human check cannot be reached, so nothing was asked" in ask(page, "First try?")
    stub.answer = "no"
    page.wait_for_function("() => document.querySelector('#human-check').textContent.includes('verified as human')", timeout=10_000)
    assert "The human check did not pass: try it again." in ask(page, "Second try?", answers=2)
    stub.answer = "yes"
    page.wait_for_function("() => document.querySelector('#human-check').textContent.includes('verified as human')", timeout=10_000)
    assert "Now it works." in ask(page, "Third try?", answers=3)
    # Each try spent its own token: three checks, three different tokens; one model call.
    assert len({c["token"] for c in stub.checks}) == 3 and model.calls == 1


def test_private_mode_shows_no_widget(browser, make_env, stub):
    env = make_env(ScriptedModel([Step(text="x")]))
    server, thread, url = serve_in_thread(env.app)
    try:
        page = browser.new_page()
        requested = []
        page.on("request", lambda r: requested.append(r.url))
        page.goto(f"{url}/chat")
        page.wait_for_load_state("networkidle")
        assert page.locator("#human-check").is_hidden()
        assert not any("turnstile" in u for u in requested)
    finally:
        server.should_exit = True
        thread.join(5)
