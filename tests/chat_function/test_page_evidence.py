"""The transcript as evidence, in headless Chromium: tool results drawn as tables whose names link to
the run list (in a new tab), answers as safe Markdown with numbered citations, hostile text inert
wherever it comes from, no page wider than a 320 px screen, axe-core clean, and the run list's
filter, count and sign-in message.
"""
from __future__ import annotations

import pytest
from pydantic import BaseModel

from groundchat.auth.callers import CHAT_USE, DOCS_READ, RUNS_READ, TRACES_READ
from groundchat.tools.base import Tool
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.page_support import axe_violations as _axe_violations
from tests.chat_function.page_support import import_runs, newest_first, page_width as _page_width, sample_slice
from tests.chat_function.test_page_browser import CHROMIUM, _axe_source, ask, browser, served, sign_in  # noqa: F401

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")]

XSS = "<img src=x onerror=alert(1)>"
GRANTS = {"alice": [CHAT_USE, RUNS_READ, DOCS_READ, TRACES_READ]}


@pytest.fixture(scope="module")
def lines() -> list[dict]:
    return sample_slice()


@pytest.fixture(autouse=True)
def runs_in_store(dynamo, lines):
    """The run list the tools' links open reads the store: a slice of the sample is in it."""
    return import_runs(dynamo, lines)


# ---- tools with the real tools' shapes, and hostile text where only text may appear -------------

class Filter(BaseModel):
    model: str | None = None
    context: str | None = None
    task: str | None = None
    label: str | None = None
    rule: str | None = None
    limit: int = 20


class Query(BaseModel):
    query: str = ""
    source: str | None = None


def run_list(**params: str) -> str:
    from urllib.parse import urlencode

    return "/chat/runs?" + urlencode(params)


def run_row(n: int, context: str = "checklist", label: str = "round-1") -> dict:
    run_id = f"run-{n:04d}-with-a-rather-long-identifier"
    return {
        "run_id": run_id, "link": run_list(run=run_id), "model": "atlas-large", "model_link": run_list(model="atlas-large"),
        "context": context, "context_link": run_list(context=context), "task": "signup-form", "label": label,
        "started_at": "2025-03-14T09:26:53+00:00", "outcome": "completed", "graded": True, "violation_count": n % 7,
        "node_count": n % 11, "cost": "0.0126", "cost_text": "$0.0126",
    }


async def fake_compare(ctx, args: Filter):
    row = {"model": "atlas-large", "context": "checklist", "runs": 12, "completed": 11, "failed": 1, "timeout": 0,
           "completion_rate": 0.9167, "graded_runs": 11, "mean_violations": 3.5, "mean_cost": "0.0126",
           "mean_cost_text": "$0.0126", "total_cost": "0.1512", "total_cost_text": "$0.1512",
           "link": run_list(model="atlas-large", context="checklist"),
           "links": {"model": run_list(model="atlas-large"), "context": run_list(context="checklist"),
                     "failed": run_list(model="atlas-large", context="checklist", outcome="failed"), "timeout": None}}
    return {"filter": {}, "total_runs": 12, "by_context": [{**row, "model": "all models"}], "rows": [row]}


async def fake_list_runs(ctx, args: Filter):
    wanted = {k: v for k, v in args.model_dump(exclude={"limit"}).items() if v}
    if wanted.get("label") == "one":
        runs = [run_row(1, label="one")]
    else:
        runs = [run_row(n, context=wanted.get("context", "checklist"), label=XSS if n == 2 else "round-1") for n in range(1, 6)]
    return {"filter": wanted, "limit": args.limit, "count": len(runs), "more": wanted.get("label") != "one", "runs": runs}


async def fake_search(ctx, args: Query):
    return {"outcome": "ok", "excerpts": [
        {"ref": "bbbb2222", "source": "wcag22", "section": "1.4.3", "title": "1.4.3 Contrast (Minimum)",
         "url": "https://www.w3.org/TR/WCAG22/#contrast-minimum", "updated_at": "2024-12-12",
         "text": "Body copy should stand out from its background by 4.5:1 or more. " + XSS},
        {"ref": "aaaa1111", "source": "wcag22", "section": "Understanding 1.4.3",
         "title": "Understanding 1.4.3 Contrast (Minimum) (informative)",
         "url": "https://www.w3.org/WAI/WCAG22/Understanding/contrast-minimum", "updated_at": "2024-12-12",
         "text": "The intent of this success criterion is to provide enough contrast."},
    ]}


TOOLS = [
    Tool(name="compare_contexts", grounding="figures", drawer="contexts", offline_template="contexts", description="compare", input_model=Filter, permission=RUNS_READ, handler=fake_compare),
    Tool(name="list_runs", grounding="figures", drawer="run-list", offline_template="run-list", description="runs", input_model=Filter, permission=RUNS_READ, handler=fake_list_runs),
    Tool(name="search_docs", grounding="text", drawer="excerpts", offline_template="excerpts", description="search", input_model=Query, permission=DOCS_READ, handler=fake_search),
]

ANSWER = (
    "**Contrast** matters: text needs *4.5:1* [bbbb2222], and the intent is enough contrast [aaaa1111].\n"
    "- first point with `code`\n"
    "- second point " + XSS + "\n\n"
    "A made-up source [deadbeef] and the first again [bbbb2222]."
)


def evidence_model() -> ScriptedModel:
    return ScriptedModel([
        Step(tool_calls=[("compare_contexts", {}), ("list_runs", {"context": "checklist", "limit": 5}),
                         ("search_docs", {"query": "contrast " + XSS})]),
        Step(text=ANSWER),
    ])


def answered_page(browser, served, width: int = 1280):
    env, url = served(evidence_model(), grants=GRANTS, tools=TOOLS)
    page = browser.new_page(viewport={"width": width, "height": 900})
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    sign_in(page, url, env, "alice")
    ask(page, "Why does contrast matter? " + XSS)
    return page, env, url, dialogs


# ---- the evidence ------------------------------------------------------------------------------

def test_tool_results_are_tables_whose_names_open_the_run_list_in_a_new_tab(browser, served):
    page, env, url, _ = answered_page(browser, served)
    tools = page.locator(".msg.assistant .tools")
    summary = tools.locator("summary").all_inner_texts()
    assert any("list_runs" in s and "context: checklist, limit: 5" in s and "→ 5 runs, more match" in s for s in summary)
    assert not any("{" in s for s in summary)  # arguments as key: value, never JSON
    runs_table = tools.locator("table", has_text="5 runs shown")
    assert runs_table.locator("tbody tr").count() == 5
    model_link = runs_table.locator("tbody tr").first.locator("a", has_text="atlas-large")
    assert model_link.get_attribute("href") == "/chat/runs?model=atlas-large"
    assert model_link.get_attribute("target") == "_blank"
    # The table scrolls in its own named, focusable box.
    box = runs_table.locator("xpath=..")
    assert box.get_attribute("role") == "region" and box.get_attribute("tabindex") == "0" and box.get_attribute("aria-label")
    by_model = tools.locator("table", has_text="By model and context level")
    assert "atlas-large" in by_model.inner_text()
    # A row's failed runs link to their list; a count of none is plain text.
    headers = by_model.locator("thead th").all_inner_texts()
    cells = by_model.locator("tbody tr").first.locator("th, td")
    failed = cells.nth(headers.index("Failed"))
    assert failed.locator("a").get_attribute("href") == "/chat/runs?model=atlas-large&context=checklist&outcome=failed"
    assert failed.inner_text() == "1"
    timed_out = cells.nth(headers.index("Timed out"))
    assert timed_out.inner_text() == "0" and timed_out.locator("a").count() == 0
    # Following a name opens the run list filtered to it, signed in through the chat's tab.
    with page.context.expect_page() as opened:
        model_link.click()
    runs = opened.value
    runs.wait_for_selector("#rows tr", timeout=10_000)
    assert runs.url.endswith("/chat/runs?model=atlas-large")
    assert runs.input_value("#f-model") == "atlas-large"
    assert "Filter: model = atlas-large" in runs.inner_text("#filter")
    assert page.url.split("?")[0].endswith("/chat")


def test_markdown_renders_and_hostile_text_stays_text_everywhere(browser, served):
    page, env, url, dialogs = answered_page(browser, served)
    answer = page.locator(".msg.assistant .body")
    assert answer.locator("strong").first.inner_text() == "Contrast"
    assert answer.locator("em").first.inner_text() == "4.5:1"
    assert answer.locator("li").count() == 2 and answer.locator("li code").inner_text() == "code"
    assert "**" not in answer.inner_text()
    # From the model, a tool result (a run's label), the question and corpus text: shown, never run.
    assert XSS in answer.inner_text()
    assert XSS in page.locator("table", has_text="5 runs shown").inner_text()
    assert XSS in page.locator(".excerpts").inner_text()
    assert XSS in page.inner_text(".msg.user")
    assert page.locator("#transcript img").count() == 0
    page.wait_for_timeout(300)
    assert dialogs == []


def test_citations_are_numbered_marks_leading_to_the_sources(browser, served):
    page, env, url, _ = answered_page(browser, served)
    a = page.locator(".msg.assistant").first
    marks = a.locator(".body sup.cite a")
    assert marks.count() == 3  # [bbbb2222] twice, [aaaa1111] once
    assert [m.text_content() for m in marks.all()] == ["source 1", "source 2", "source 1"]
    target = marks.first.get_attribute("href")
    source = a.locator(target)
    assert "1.4.3 Contrast (Minimum)" in source.inner_text() and "normative" in source.inner_text()
    assert source.locator("a").get_attribute("href") == "https://www.w3.org/TR/WCAG22/#contrast-minimum"
    assert "Understanding WCAG (informative)" in a.locator(".sources li").nth(1).inner_text()
    assert "[deadbeef: unverified source]" in a.locator(".body").inner_text()
    assert "[deadbeef] unverified" in a.locator(".sources").inner_text()
    # Reopened from the list and on a shared page: drawn by the same renderer, the same marks.
    page.click("#new")
    page.click("#past li .entry button")
    page.wait_for_selector(".msg.assistant .sources", timeout=5_000)
    assert page.locator(".msg.assistant .body sup.cite a").count() == 3
    assert page.locator(".msg.assistant table", has_text="5 runs shown").count() == 1
    page.click("#share")
    page.wait_for_selector("#share-box:not([hidden]) #share-link", timeout=5_000)
    reader = browser.new_page()
    reader.goto(url + page.get_attribute("#share-link", "href"))
    reader.wait_for_selector(".msg.assistant .sources")
    assert reader.locator(".msg.assistant .body sup.cite a").count() == 3
    assert "[deadbeef: unverified source]" in reader.inner_text(".msg.assistant .body")


# ---- layout and accessibility ------------------------------------------------------------------

def test_no_page_is_wider_than_a_320_px_screen(browser, served, lines):
    page, env, url, _ = answered_page(browser, served, width=320)
    assert _page_width(page) <= 320
    page.click("#share")
    page.wait_for_selector("#share-box:not([hidden]) #share-link", timeout=5_000)
    assert _page_width(page) <= 320
    shared = page.get_attribute("#share-link", "href")
    newest, older = newest_first(lines)[:2]
    for address in ("/chat/runs?context=checklist", f"/chat/runs?run={newest}", f"/chat/runs?run={newest}&compare={older}", shared):
        page.goto(url + address)
        page.wait_for_load_state("networkidle")
        assert _page_width(page) <= 320, address
    signed_out = browser.new_page(viewport={"width": 320, "height": 700})
    for address in ("/chat", "/chat/runs"):
        signed_out.goto(url + address)
        signed_out.wait_for_load_state("networkidle")
        assert _page_width(signed_out) <= 320, address


def test_axe_finds_nothing_on_the_chat_signed_out_and_signed_in_at_390_px(browser, served, corpus_dir):
    axe = _axe_source(corpus_dir)
    env, url = served(evidence_model(), grants=GRANTS, tools=TOOLS)
    found = {}
    out = browser.new_page(viewport={"width": 390, "height": 844})
    out.goto(f"{url}/chat")
    out.wait_for_selector("#dev-sign-in:not([hidden])")
    found["/chat signed out"] = _axe_violations(out, axe)
    out.goto(f"{url}/chat/runs")
    out.wait_for_selector("#sign-in:not([hidden])")
    found["/chat/runs signed out"] = _axe_violations(out, axe)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    sign_in(page, url, env, "alice")
    found["/chat signed in"] = _axe_violations(page, axe)
    page.goto(f"{url}/chat")
    page.wait_for_selector("#signed-in:not([hidden])")
    ask(page, "Why does contrast matter?")
    page.wait_for_load_state("networkidle")
    found["/chat with an answer"] = _axe_violations(page, axe)
    page.goto(f"{url}/chat/runs?context=checklist")
    page.wait_for_selector("#rows tr")
    found["/chat/runs signed in"] = _axe_violations(page, axe)
    assert found == {name: [] for name in found}


# ---- the run list ------------------------------------------------------------------------------

def test_the_run_list_filters_counts_and_asks_to_sign_in(browser, served, lines):
    env, url = served(evidence_model(), grants=GRANTS, tools=TOOLS)
    visitor = browser.new_page()
    visitor.goto(f"{url}/chat/runs?context=checklist")
    visitor.wait_for_selector("#sign-in:not([hidden])")
    assert "Sign in to see the runs" in visitor.inner_text("main")
    assert visitor.get_attribute("#sign-in a", "href") == "../chat"  # relative: works under a stage too
    assert visitor.locator("#rows tr").count() == 0

    page = browser.new_page()
    sign_in(page, url, env, "alice")
    page.goto(f"{url}/chat/runs")
    page.wait_for_selector("#rows tr")
    assert page.inner_text("#message") == f"Runs 1–20 of {len(lines)}"
    one = lines[0]
    for name in ("model", "context", "task", "label"):
        page.select_option(f"#f-{name}", one[name])
    page.click("#filters button[type=submit]")
    page.wait_for_url(f"**/chat/runs?model={one['model']}&context={one['context']}&task={one['task']}&label={one['label']}")
    page.wait_for_function("() => document.getElementById('message').textContent.length > 0")
    assert page.inner_text("#message") == "1 run"
    assert page.locator("#rows tr").count() == 1 and page.locator("#pages").is_hidden()
    # A filter submitted without script (empty fields) is the same address once the page reads it.
    page.goto(f"{url}/chat/runs?model=&context=checklist&task=&label=&rule=")
    page.wait_for_selector("#rows tr")
    assert page.url.endswith("/chat/runs?context=checklist")


def test_an_example_question_asks_when_clicked(browser, served):
    model = ScriptedModel([Step(text="Context level **guidelines-axe** is best.")])
    env, url = served(model, grants=GRANTS, tools=TOOLS)
    page = browser.new_page()
    sign_in(page, url, env, "alice")
    assert page.is_visible("#start")
    page.click(".examples button >> nth=1")
    page.wait_for_selector(".msg.assistant[data-done='complete']")
    assert page.inner_text(".msg.user .question") == "What do agents get wrong most often?"
    assert page.inner_text(".msg.assistant .body strong") == "guidelines-axe"
    assert not page.is_visible("#start")
    page.click("#new")
    assert page.is_visible("#start")
