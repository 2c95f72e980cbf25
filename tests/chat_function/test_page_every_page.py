"""Every page, signed in and signed out, at 1280, 390 and 320 px: axe-core 4.14.1 finds nothing, and
no page scrolls sideways. The pages: the chat (with an answer, its details open, shared; the
conversations drawer open on a narrow screen), the run list, a run, two runs compared, an answer's
trace and a shared conversation."""
from __future__ import annotations

import pytest

from groundchat.auth.callers import CHAT_USE, DOCS_READ, RUNS_READ, TRACES_READ
from groundchat.tools.data_tools import DATA_TOOLS
from groundchat.tools.docs_tools import search_docs
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.page_support import axe_violations, import_runs, newest_first, page_width, sample_slice
from tests.chat_function.test_page_answer_details import FakeDocs
from tests.chat_function.test_page_browser import CHROMIUM, _axe_source, ask, browser, served, sign_in  # noqa: F401

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")

GRANTS = {"alice": [CHAT_USE, RUNS_READ, DOCS_READ, TRACES_READ]}
ANSWER = ("**Checklist** runs break fewer rules [bbbb2222]; text needs *4.5:1* contrast [bbbb2222], "
          "about 37% of runs miss it, and a made-up source [deadbeef].\n- one\n- two")


def rich_model() -> ScriptedModel:
    return ScriptedModel([
        Step(tool_calls=[("list_runs", {"context": "checklist", "limit": 4}), ("compare_contexts", {}),
                         ("search_docs", {"query": "contrast"}), ("explain_rule", {"rule_id": "color-contrast"})]),
        Step(text=ANSWER),
    ])


@pytest.mark.parametrize("width", [1280, 390, 320])
def test_every_page_passes_axe_and_fits_the_screen_signed_in_and_out(browser, served, dynamo, corpus_dir, width):
    axe = _axe_source(corpus_dir)
    lines = import_runs(dynamo, sample_slice())
    env, url = served(rich_model(), grants=GRANTS, tools=[*DATA_TOOLS, search_docs])
    env.services.docs_override = FakeDocs()
    size = {"width": width, "height": 900}
    page = browser.new_page(viewport=size)
    sign_in(page, url, env, "alice")
    ask(page, "Which context level is best, and why does contrast matter?")
    page.click(".answer-details summary")
    page.wait_for_selector(".trace-link a")
    page.click("#share")
    page.wait_for_selector("#share-box:not([hidden])")
    shared = page.get_attribute("#share-link", "href")
    trace = page.get_attribute(".trace-link a", "href")
    newest, older = newest_first(lines, context="checklist")[:2]
    pages = ["/chat/runs?context=checklist", f"/chat/runs?run={newest}", f"/chat/runs?run={newest}&compare={older}", trace, shared]
    ready = {"/chat/runs?context=checklist": "#rows tr", f"/chat/runs?run={newest}": "#run-facts dl",
             f"/chat/runs?run={newest}&compare={older}": "#compared-rows tr", trace: "#steps table", shared: ".msg.assistant .sources"}

    found, wide = {}, {}

    def check(p, name):
        p.wait_for_load_state("networkidle")
        found[name] = axe_violations(p, axe)
        if page_width(p) > width:
            wide[name] = page_width(p)

    check(page, "/chat signed in, answered, details open, shared")
    if width < 992:
        page.click("#past-toggle")
        page.wait_for_selector("#past-panel.open")
        check(page, "/chat conversations drawer")
        page.keyboard.press("Escape")
    for address in pages:
        page.goto(url + address)
        page.wait_for_selector(ready[address])
        check(page, address + " signed in")

    outsider = browser.new_context(viewport=size).new_page()
    outsider.goto(f"{url}/chat")
    outsider.wait_for_selector("#dev-sign-in:not([hidden])")
    outsider.wait_for_selector("#shared-examples:not([hidden])")
    check(outsider, "/chat signed out")
    for address in pages:
        outsider.goto(url + address)
        outsider.wait_for_selector(".msg.assistant .sources" if address == shared else "#sign-in:not([hidden])")
        check(outsider, address + " signed out")
    assert found == {name: [] for name in found}
    assert wide == {}
