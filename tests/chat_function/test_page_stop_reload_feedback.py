"""The page around a running answer, in a real browser: a reload mid-answer shows "still answering"
and then the answer (one model run), Ask turns into Stop and stops it, and each answer takes a 👍 or
a 👎 with reasons, by keyboard, kept across a reload; axe finds nothing at phone and desktop widths."""
from __future__ import annotations

import threading
from pathlib import Path

from groundchat_testkit.scripted import Step
from tests.chat_function.page_support import axe_violations, page_width
from tests.chat_function.test_page_browser import CHROMIUM, _axe_source, browser, served, sign_in  # noqa: F401
from tests.chat_function.test_reconnect_and_stop import GatedModel, gated_tool

SHOTS = Path("/tmp/work/feedback")
WIDTHS = (320, 390, 1280)


def test_reload_stop_and_feedback_in_the_page(browser, served, corpus_dir):
    gate = threading.Event()
    model = GatedModel([Step(tool_calls=[("compare_contexts", {})]), Step(text="Full context is best: 3.5 violations."),
                        Step(tool_calls=[("compare_contexts", {})]), Step(text="never shown")])
    env, url = served(model, tools=[gated_tool(gate)])
    model.release(0)
    page = browser.new_page()
    sign_in(page, url, env, "alice")
    page.fill("#question", "Which context level is best?")
    page.click("#ask button[type=submit]")
    page.wait_for_function("() => document.querySelector('#ask button[type=submit]').textContent === 'Stop'")
    page.wait_for_function("() => location.search.includes('conversation=')")  # the start frame named it

    # Reload mid-answer (the tool is still running): the page says so and waits for the store.
    page.reload()
    page.wait_for_selector(".still-answering", timeout=10_000)
    assert "Which context level is best?" in page.inner_text("#transcript")
    assert page.inner_text("#ask button[type=submit]") == "Stop"
    gate.set()
    model.release(1)
    page.wait_for_selector(".msg.assistant .body:has-text('Full context is best')", timeout=20_000)
    assert page.locator(".still-answering").count() == 0
    assert model.calls == 2  # the reload asked again nobody: the answer committed on its own
    page.wait_for_function("() => document.querySelector('#ask button[type=submit]').textContent === 'Ask'")

    # 👎 with a reason, by keyboard: the toggle opens the reasons and moves the focus to the first.
    down = page.locator(".feedback-down")
    down.focus()
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.value") == "wrong-number"
    page.keyboard.press("Space")
    page.locator(".feedback-reasons button[type=submit]").focus()
    SHOTS.mkdir(parents=True, exist_ok=True)
    axe = _axe_source(corpus_dir)
    for width in WIDTHS:  # the reasons open, at each width
        page.set_viewport_size({"width": width, "height": 900})
        assert page_width(page) <= width
        assert axe_violations(page, axe) == []
        page.screenshot(path=str(SHOTS / f"reasons-{width}.png"), full_page=True)
    page.keyboard.press("Enter")
    page.wait_for_selector(".feedback-status:has-text('Thanks')")
    stored = page.evaluate("""fetch(location.pathname.replace(/chat$/, '') + 'api/conversations/' +
        new URLSearchParams(location.search).get('conversation'),
        {headers: {authorization: 'Bearer ' + sessionStorage.getItem('groundchat-token')}}).then(r => r.json())""")
    assert stored["messages"][-1]["feedback"]["reasons"] == ["wrong-number"]

    # Kept across a reload: the 👎 shows pressed, its reason ticked.
    page.reload()
    page.wait_for_selector(".feedback-down[aria-pressed=true]", timeout=10_000)
    assert page.locator(".feedback-reason input[value=wrong-number]").is_checked()

    # Stop: the next answer's tool is running when Stop is pressed; it ends at the next step.
    gate.clear()
    model.release(2)
    page.fill("#question", "And for cedar-mini?")
    page.click("#ask button[type=submit]")
    page.wait_for_function("() => document.querySelector('#ask button[type=submit]').textContent === 'Stop'")
    page.wait_for_selector(".msg.assistant >> nth=1")
    page.wait_for_function("() => location.search.includes('conversation=')")
    page.click("#ask button[type=submit]")  # Stop (the question box is empty: no validation in the way)
    page.wait_for_function("() => document.querySelector('#ask button[type=submit]').textContent === 'Stopping…'")
    gate.set()
    page.wait_for_selector(".msg.assistant[data-done=stopped]", timeout=20_000)
    assert "Nothing of this answer was kept" in page.inner_text(".msg.assistant[data-done=stopped]")
    assert model.calls == 3
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert axe_violations(page, axe) == []
        page.screenshot(path=str(SHOTS / f"stopped-{width}.png"), full_page=True)


def test_a_signed_in_reader_rates_a_shared_answer_and_a_signed_out_one_sees_no_controls(browser, served, corpus_dir):
    from groundchat_testkit.scripted import ScriptedModel

    env, url = served(ScriptedModel([Step(text="Full context is best: 3.5 violations.")]))
    owner = browser.new_page()
    sign_in(owner, url, env, "alice")
    owner.fill("#question", "Which context level is best?")
    owner.click("#ask button[type=submit]")
    owner.wait_for_selector(".msg.assistant[data-done=complete]")
    owner.click("#share")
    link = owner.wait_for_selector("#share-link:not(:empty)").get_attribute("href")
    shared = link if link.startswith("http") else url + "/" + link.lstrip("/")

    reader = browser.new_context().new_page()
    sign_in(reader, url, env, "bob")
    reader.goto(shared)
    reader.wait_for_selector(".feedback", timeout=10_000)
    reader.click(".feedback-down")
    reader.check(".feedback-reason input[value=citation-unsupported]")
    reader.click(".feedback-reasons button[type=submit]")
    reader.wait_for_selector(".feedback-status:has-text('Thanks')")
    axe = _axe_source(corpus_dir)
    for width in WIDTHS:
        reader.set_viewport_size({"width": width, "height": 900})
        assert page_width(reader) <= width and axe_violations(reader, axe) == []
        reader.screenshot(path=str(SHOTS / f"shared-rated-{width}.png"), full_page=True)
    conversation_id = shared.rstrip("/").rsplit("/", 1)[1]
    mine = reader.evaluate(f"""fetch('{url}/api/conversations/{conversation_id}/feedback',
        {{headers: {{authorization: 'Bearer ' + sessionStorage.getItem('groundchat-token')}}}}).then(r => r.json())""")
    assert {seq: (f["audience"], f["reasons"]) for seq, f in mine["feedback"].items()} == {"1": ("reader", ["citation-unsupported"])}

    stranger = browser.new_context().new_page()
    stranger.goto(shared)
    stranger.wait_for_selector(".msg.assistant")
    stranger.wait_for_timeout(800)  # long enough for a sign-in it does not have to be looked for
    assert stranger.locator(".feedback").count() == 0
