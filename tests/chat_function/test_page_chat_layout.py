"""The chat page for people, in headless Chromium: the bot's name is text whatever it holds; the
conversations are a drawer on a narrow screen (a button with aria-expanded, Escape closes it, focus
comes back) whose entries show title, date and shared state; the empty chat offers example
questions, and shared conversations to read to someone who may not ask; a shared conversation's
link is shown with a button that copies it."""
from __future__ import annotations

import httpx
import pytest

from groundchat.auth.callers import CHAT_USE, RUNS_READ
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.test_page_browser import CHROMIUM, ask, browser, served, sign_in  # noqa: F401

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")

XSS = "<img src=x onerror=alert(1)>"
GRANTS = {"alice": [CHAT_USE, RUNS_READ], "carol": [RUNS_READ]}
LONG = "What do the agents get wrong most often when the task is a checkout flow with several steps and a summary?"


def answers(n: int) -> ScriptedModel:
    return ScriptedModel([Step(text=f"Answer {'ABCDEF'[i]}.") for i in range(n)])


def test_the_bot_name_is_text_on_every_page(browser, served, settings, monkeypatch):
    monkeypatch.setattr(settings, "bot_name", XSS)
    env, url = served(answers(1), grants=GRANTS)

    for path in ("/chat", "/chat/runs", "/chat/trace"):
        html = httpx.get(url + path).text
        assert XSS not in html and "&lt;img src=x onerror=alert(1)&gt;" in html, path
    page = browser.new_page()
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    for path in ("/chat", "/chat/runs", "/chat/trace?run=x"):
        page.goto(url + path)
        page.wait_for_load_state("networkidle")
        assert page.locator("img").count() == 0, path
        assert XSS in page.title(), path
    page.goto(url + "/chat")
    assert page.inner_text("h1") == XSS and page.evaluate("document.body.dataset.bot") == XSS
    sign_in(page, url, env, "alice")
    ask(page, "Hello?")
    assert page.inner_text(".msg.assistant .who") == XSS and page.locator("img").count() == 0
    page.wait_for_timeout(200)
    assert dialogs == []


def _two_conversations(page, url, env) -> None:
    sign_in(page, url, env, "alice")
    ask(page, LONG)
    page.click("#share")
    page.wait_for_selector("#share-box:not([hidden])")
    page.click("#new")
    ask(page, "And the second?")
    page.wait_for_function("() => document.querySelectorAll('#past li').length === 2")


def test_on_a_narrow_screen_the_conversations_are_a_drawer(browser, served):
    env, url = served(answers(2), grants=GRANTS)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    _two_conversations(page, url, env)
    toggle = page.locator("#past-toggle")
    assert toggle.is_visible() and toggle.get_attribute("aria-expanded") == "false"
    assert toggle.get_attribute("aria-controls") == "past-panel" and not page.is_visible("#past-panel")
    toggle.focus()
    page.keyboard.press("Enter")
    assert toggle.get_attribute("aria-expanded") == "true" and page.is_visible("#past-panel")
    assert page.evaluate("document.getElementById('past-panel').contains(document.activeElement)")
    # Each entry: its title, its date on one line, and whether it is shared, in words.
    entries = page.evaluate("""[...document.querySelectorAll('#past li')].map((li) => ({
        title: li.querySelector('button').textContent,
        date: li.querySelector('time').textContent,
        dateLines: li.querySelector('time').getClientRects().length,
        dateHeight: li.querySelector('time').getBoundingClientRect().height,
        shared: li.querySelector('.badge') ? li.querySelector('.badge').textContent : null}))""")
    assert [e["title"] for e in entries] == ["And the second?", LONG]
    assert [e["shared"] for e in entries] == [None, "shared"]
    assert all(len(e["date"]) == 10 and e["dateLines"] == 1 and e["dateHeight"] < 30 for e in entries)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # Escape closes it and gives the focus back to its button.
    page.keyboard.press("Escape")
    assert not page.is_visible("#past-panel") and toggle.get_attribute("aria-expanded") == "false"
    assert page.evaluate("document.activeElement.id") == "past-toggle"
    # Opening a conversation from the drawer closes it.
    toggle.click()
    page.click(f"#past li .entry button:has-text('{LONG[:30]}')")
    page.wait_for_function("() => document.getElementById('transcript').innerText.includes('Answer A.')")
    assert not page.is_visible("#past-panel") and toggle.get_attribute("aria-expanded") == "false"
    assert page.evaluate("document.activeElement.id") == "past-toggle"
    # The close button does the same as Escape.
    toggle.click()
    page.click("#past-close")
    assert not page.is_visible("#past-panel") and page.evaluate("document.activeElement.id") == "past-toggle"


def test_on_a_wide_screen_the_conversations_are_a_column(browser, served):
    env, url = served(answers(2), grants=GRANTS)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    _two_conversations(page, url, env)
    assert page.is_visible("#past-panel") and not page.is_visible("#past-toggle") and not page.is_visible("#past-close")
    assert page.locator("#past li[aria-current] .entry button").inner_text() == "And the second?"


def _share_one(env, url: str) -> str:
    r = httpx.post(f"{url}/api/chat", json={"stream": True, "message": "Which context is best?"}, headers=env.token("alice"))
    conversation_id = r.text.split('"conversation_id": "')[1].split('"')[0]
    assert httpx.post(f"{url}/api/conversations/{conversation_id}/share", headers=env.token("alice")).status_code == 200
    return conversation_id


def test_who_may_not_ask_reads_shared_conversations_and_who_may_gets_examples(browser, served):
    env, url = served(answers(2), grants=GRANTS)
    shared_id = _share_one(env, url)
    visitor = browser.new_page()
    visitor.goto(f"{url}/chat")
    visitor.wait_for_selector("#shared-examples:not([hidden]) a")
    assert visitor.is_visible(".examples") and visitor.inner_text("#start-heading") == "Start with a question"
    assert visitor.get_attribute("#shared-examples a", "href") == f"/chat/shared/{shared_id}"
    assert visitor.inner_text("#shared-examples li").startswith("Which context is best?")
    # carol is signed in without chat.use: no examples to click, the shared ones to read instead.
    carol = browser.new_page()
    sign_in(carol, url, env, "carol")
    carol.wait_for_function("() => document.getElementById('start-heading').textContent === 'Read what others asked'")
    assert not carol.is_visible(".examples") and carol.is_visible("#start-note")
    assert "chat.use" in carol.inner_text("#start-note")
    carol.click("#shared-examples a")
    carol.wait_for_selector(".msg.assistant")
    assert "Answer A." in carol.inner_text("#transcript")
    # alice may ask: the examples are there, and one asks when clicked.
    alice = browser.new_page()
    sign_in(alice, url, env, "alice")
    assert alice.is_visible(".examples") and not alice.is_visible("#start-note")
    alice.click(".examples button >> nth=0")
    alice.wait_for_selector(".msg.assistant[data-done='complete']")
    assert alice.inner_text(".msg.user .question") == "Which context level is best, and what does it cost?"


def test_sharing_shows_the_link_and_copies_it(browser, served):
    env, url = served(answers(1), grants=GRANTS)
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    sign_in(page, url, env, "alice")
    ask(page, "Which context is best?")
    page.click("#share")
    page.wait_for_selector("#share-box:not([hidden])")
    shown = page.inner_text("#share-link")
    assert shown.startswith(url + "/chat/shared/") and page.get_attribute("#share-link", "href") == shown[len(url):]
    assert page.evaluate("document.activeElement.id") == "copy-link"  # the next thing to do, focused
    page.click("#copy-link")
    page.wait_for_function("() => document.getElementById('share-status').textContent.startsWith('The link is copied')")
    assert page.evaluate("navigator.clipboard.readText()") == shown
    reader = browser.new_page()
    reader.goto(shown)
    reader.wait_for_selector(".msg.assistant")
    assert "Answer A." in reader.inner_text("#transcript")
