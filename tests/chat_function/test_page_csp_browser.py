"""The pages under their Content-Security-Policy in a real headless Chromium, at 390 and 1280 px:
every page still works (an answer streams in, its details open, the run list, a run, a trace and a
shared conversation draw), the browser reports no violation of the policy and no error in the
console, axe-core finds nothing, and the policy is really enforced (an inline script is refused)."""
from __future__ import annotations

import pytest

from groundchat.auth.callers import CHAT_USE, DOCS_READ, RUNS_READ, TRACES_READ
from groundchat.tools.data_tools import DATA_TOOLS
from groundchat.tools.docs_tools import search_docs
from tests.chat_function.page_support import axe_violations, import_runs, newest_first, page_width, sample_slice
from tests.chat_function.test_page_answer_details import FakeDocs
from tests.chat_function.test_page_browser import CHROMIUM, _axe_source, ask, browser, served, sign_in  # noqa: F401
from tests.chat_function.test_page_every_page import rich_model

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")

# Runs before any script of the page, outside its policy: every violation the browser reports.
WATCH_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(`${e.effectiveDirective} blocked ${e.blockedURI || "inline"} in ${e.sourceFile || location.pathname}`);
});
"""


@pytest.mark.parametrize("width", [390, 1280])
def test_every_page_works_under_the_policy_with_no_violation_and_axe_clean(browser, served, dynamo, corpus_dir, width):
    axe = _axe_source(corpus_dir)
    lines = import_runs(dynamo, sample_slice())
    env, url = served(rich_model(), grants={"alice": [CHAT_USE, RUNS_READ, DOCS_READ, TRACES_READ]},
                      tools=[*DATA_TOOLS, search_docs])
    env.services.docs_override = FakeDocs()
    context = browser.new_context(viewport={"width": width, "height": 900})
    context.add_init_script(WATCH_VIOLATIONS)
    console: list[str] = []
    context.on("console", lambda m: console.append(f"{m.type}: {m.text} ({m.location.get('url')})") if m.type in ("error", "warning") else None)
    page = context.new_page()
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    headers: dict[str, dict[str, str]] = {}
    page.on("response", lambda r: headers.__setitem__(r.url.replace(url, ""), r.headers))

    sign_in(page, url, env, "alice")
    ask(page, "Which context level is best, and why does contrast matter?")
    assert "Checklist" in page.inner_text(".msg.assistant")  # the answer drew, its marks and sources with it
    page.click(".answer-details summary")
    page.wait_for_selector(".trace-link a")
    page.click("#share")
    page.wait_for_selector("#share-box:not([hidden])")
    shared, trace = page.get_attribute("#share-link", "href"), page.get_attribute(".trace-link a", "href")
    newest, older = newest_first(lines, context="checklist")[:2]
    ready = {"/chat/runs?context=checklist": "#rows tr", f"/chat/runs?run={newest}": "#run-facts dl",
             f"/chat/runs?run={newest}&compare={older}": "#compared-rows tr", trace: "#steps table",
             shared: ".msg.assistant .sources"}

    violations, found, wide = {}, {}, {}

    def check(name: str) -> None:
        page.wait_for_load_state("networkidle")
        violations[name] = page.evaluate("window.__cspViolations")
        found[name] = axe_violations(page, axe)
        if page_width(page) > width:
            wide[name] = page_width(page)

    check("/chat answered, details open, shared")
    for address, selector in ready.items():
        page.goto(url + address)
        page.wait_for_selector(selector)
        check(address)

    assert violations == {name: [] for name in violations}
    # The browser's own request for an icon the pages do not declare is no page's error.
    assert [line for line in console if not line.endswith("/favicon.ico)")] == []
    assert found == {name: [] for name in found}
    assert wide == {}
    # The page and every script and style it loaded carried the policy.
    loaded = [address for address in headers if address.startswith(("/chat", "/static/"))]
    assert {"/chat", "/static/chat.js", "/static/transcript.js", "/static/runs.js", "/static/trace.js", "/static/shared.js",
            "/static/transcript.css", "/static/public.js"} <= {a.split("?")[0] for a in loaded}
    for address in loaded:
        assert "frame-ancestors 'none'" in headers[address]["content-security-policy"], address
        assert headers[address]["x-content-type-options"] == "nosniff", address

    # Enforced, not only sent: a script written into the page is refused, and reported.
    ran = page.evaluate("""() => { const s = document.createElement("script"); s.textContent = "window.__inlineRan = true";
                                   document.body.appendChild(s); return window.__inlineRan === true; }""")
    assert ran is False
    page.wait_for_function("() => window.__cspViolations.length > 0")
    assert page.evaluate("window.__cspViolations")[0].startswith("script-src-elem blocked inline")
    context.close()


def test_no_page_can_be_framed(browser, served):
    """frame-ancestors 'none': another site's page that frames ours gets nothing drawn in the frame."""
    env, url = served(rich_model())
    page = browser.new_page()
    page.goto(f"{url}/static/transcript.css")  # any page of the origin, to hold a frame of our own pages
    page.evaluate("""(src) => new Promise((done) => { const f = document.createElement("iframe"); f.src = src;
                       f.onload = () => done(); document.body.appendChild(f); setTimeout(done, 3000); })""", f"{url}/chat")
    frame = page.frames[-1]
    assert frame is not page.main_frame
    # Chromium replaces a refused frame by an error page of its own origin: nothing of ours is inside.
    assert frame.evaluate("document.getElementById('question') === null")
