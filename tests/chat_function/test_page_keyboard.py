"""With the keyboard alone (Tab, Shift+Tab, Enter, Space, typing): sign in with the one-click local
sign-in, ask, open the answer's details, share and copy the link. At every stop on the way the
focus shows: a solid outline at least 2 px wide with 3:1 contrast against what is behind it, and
nothing covering the focused element (WCAG 2.2 AA: 2.4.7, 2.4.11, 1.4.11)."""
from __future__ import annotations

import pytest

from groundchat.auth.callers import CHAT_USE, DOCS_READ, RUNS_READ, TRACES_READ
from groundchat.tools.data_tools import DATA_TOOLS
from groundchat.tools.docs_tools import search_docs
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.page_support import assert_focus_visible, import_runs, sample_slice, tab_to
from tests.chat_function.test_page_answer_details import FakeDocs
from tests.chat_function.test_page_browser import CHROMIUM, browser, served  # noqa: F401

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")


@pytest.mark.parametrize("width", [1280, 390])
def test_sign_in_ask_open_the_details_and_share_with_the_keyboard_alone(browser, served, dynamo, width):
    import_runs(dynamo, sample_slice())
    model = ScriptedModel([
        Step(tool_calls=[("list_runs", {"context": "checklist", "limit": 3}), ("search_docs", {"query": "contrast"})]),
        Step(text="Checklist runs are listed above; text needs 4.5:1 [bbbb2222]."),
    ])
    env, url = served(model, grants={"dev": [CHAT_USE, RUNS_READ, DOCS_READ, TRACES_READ]}, tools=[*DATA_TOOLS, search_docs])
    env.services.docs_override = FakeDocs()
    context = browser.new_context(viewport={"width": width, "height": 900}, permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.goto(f"{url}/chat")
    page.wait_for_selector("#dev-sign-in:not([hidden])")
    page.wait_for_function("() => document.getElementById('dev-user').value === 'dev'")

    stops = tab_to(page, "#dev-sign-in-button")
    assert stops[0]["text"] == "Skip to the question"  # the first stop skips the header
    page.keyboard.press("Enter")
    page.wait_for_selector("#signed-in:not([hidden])")
    assert page.evaluate("document.activeElement.id") == "sign-out"
    assert_focus_visible(page)

    tab_to(page, "#question")
    page.keyboard.type("Which checklist runs are newest, and what does contrast need?")
    tab_to(page, "#ask button[type=submit]")
    page.keyboard.press("Enter")
    page.wait_for_selector(".msg.assistant[data-done='complete'] .answer-details")

    # The Ask button kept the focus; back up through the answer's evidence (tool results, their
    # links and tables) to its details.
    assert page.evaluate("document.activeElement.matches('#ask button[type=submit]')")
    tab_to(page, ".answer-details summary", shift=True)
    page.keyboard.press("Space")
    assert page.evaluate("document.querySelector('.answer-details').open")
    assert page.locator(".answer-details .search-debug").is_visible()
    page.wait_for_selector(".trace-link a")
    tab_to(page, ".trace-link a")
    # Up through the evidence: citation marks, the tools' tables (scrollable regions) and links.
    stops = tab_to(page, ".tools li:first-child summary", shift=True)
    assert {"a", "div", "summary"} <= {s["tag"] for s in stops}

    tab_to(page, "#share")
    page.keyboard.press("Space")
    page.wait_for_selector("#share-box:not([hidden])")
    assert page.evaluate("document.activeElement.id") == "copy-link"
    assert_focus_visible(page)
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('share-status').textContent.startsWith('The link is copied')")
    assert page.evaluate("navigator.clipboard.readText()") == page.inner_text("#share-link")
    # Back up with Shift+Tab: the way back shows its focus too.
    tab_to(page, "#question", shift=True)
