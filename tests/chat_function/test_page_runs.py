"""The run list as a page of its own, in headless Chromium: pages with their place in the whole list
("Runs 21–40 of 120"), next and previous, "1 run"; filter fields that build the addresses the
actions and the tools' links build; a run's page with its violations; two runs compared; and what
a reader without a sign-in, or without runs.read, is told instead of an empty table."""
from __future__ import annotations

import pytest

from groundchat.auth.callers import CHAT_USE, RUNS_READ
from groundchat.tools.data_shapes import RUN_LINKS
from groundchat.tools.data_tools import DATA_TOOLS
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.page_support import import_runs, newest_first, sample_slice
from tests.chat_function.test_page_browser import CHROMIUM, ask, browser, served, sign_in  # noqa: F401

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")

GRANTS = {"alice": [CHAT_USE, RUNS_READ], "carol": [CHAT_USE]}


@pytest.fixture(scope="module")
def lines() -> list[dict]:
    return sample_slice()


@pytest.fixture
def site(served, dynamo, lines):
    import_runs(dynamo, lines)
    model = ScriptedModel([Step(tool_calls=[("list_runs", {"context": "checklist", "limit": 3})]), Step(text="Three runs.")])
    return served(model, grants=GRANTS, tools=DATA_TOOLS)


def shown_ids(page) -> list[str]:
    return [row.split("\t")[0] for row in page.locator("#rows tr").all_inner_texts()]


def test_pages_of_runs_say_where_they_are_and_walk_both_ways(browser, site, lines):
    env, url = site
    page = browser.new_page()
    sign_in(page, url, env, "alice")
    page.goto(f"{url}/chat/runs?context=none")
    page.wait_for_selector("#rows tr")
    expected = newest_first(lines, context="none")
    assert page.inner_text("#message") == f"Runs 1–20 of {len(expected)}"
    assert shown_ids(page) == expected[:20]
    assert page.locator("#pages a").all_inner_texts() == ["Next page: older runs"]
    page.click("#pages a[rel=next]")
    page.wait_for_function("() => document.getElementById('message').textContent.startsWith('Runs 21')")
    assert page.inner_text("#message") == f"Runs 21–{min(40, len(expected))} of {len(expected)}"
    assert shown_ids(page) == expected[20:40]
    assert "context=none" in page.url and "page=" in page.url  # the filter stays on every page
    assert page.input_value("#f-context") == "none"
    page.click("#pages a[rel=prev]")
    page.wait_for_function("() => document.getElementById('message').textContent.startsWith('Runs 1–')")
    assert shown_ids(page) == expected[:20] and page.locator("#pages a[rel=prev]").count() == 0
    one = lines[0]
    page.goto(f"{url}{RUN_LINKS.run_list(model=one['model'], context=one['context'], task=one['task'], label=one['label'])}")
    page.wait_for_selector("#rows tr")
    assert page.inner_text("#message") == "1 run" and page.locator("#pages").is_hidden()


def test_the_filter_fields_build_the_addresses_the_actions_and_links_build(browser, site, lines):
    env, url = site
    page = browser.new_page()
    sign_in(page, url, env, "alice")
    page.goto(f"{url}/chat/runs")
    page.wait_for_selector("#rows tr")
    values = {"model": "cedar-mini", "context": "guidelines", "task": "nav-header", "label": "round-2"}
    for name, value in values.items():
        page.select_option(f"#f-{name}", value)
    page.click("#filters button[type=submit]")
    page.wait_for_selector("#rows tr")
    built = page.url[len(url):]
    assert built == page.evaluate("(v) => GroundchatTranscript.actionAddress('open-runs', v)", values)
    assert built == RUN_LINKS.run_list(**values)
    assert shown_ids(page) == newest_first(lines, **values)
    # The rule field names a filter the tools' rule links use.
    page.select_option("#f-rule", "color-contrast")
    page.click("#filters button[type=submit]")
    page.wait_for_url("**rule=color-contrast")
    page.wait_for_function("() => document.getElementById('message').textContent.length > 0")
    assert page.url[len(url):] == RUN_LINKS.run_list(**values, rule="color-contrast")
    assert shown_ids(page) == newest_first(lines, **values, rule="color-contrast")


def test_an_outcome_is_a_filter_shown_like_the_others_and_removed_like_them(browser, site, lines):
    env, url = site
    page = browser.new_page()
    sign_in(page, url, env, "alice")
    page.goto(f"{url}{RUN_LINKS.run_list(outcome='timeout')}")
    page.wait_for_selector("#rows tr")
    expected = newest_first(lines, outcome="timeout")
    assert 0 < len(expected) < 20
    assert shown_ids(page) == expected
    assert page.inner_text("#message") == f"Runs 1–{len(expected)} of {len(expected)}"
    assert page.inner_text("#filter") == "Filter: outcome = timeout"
    assert page.input_value("#f-outcome") == "timeout"
    outcomes = page.locator("#rows tr td[data-label=Outcome]").all_inner_texts()
    assert set(outcomes) == {"timeout"}
    # With another field: the address the tools' links build.
    page.select_option("#f-model", "birch-pro")
    page.click("#filters button[type=submit]")
    page.wait_for_url("**model=birch-pro**")
    page.wait_for_function("() => document.getElementById('message').textContent.length > 0")
    assert page.url[len(url):] == RUN_LINKS.run_list(model="birch-pro", outcome="timeout")
    assert shown_ids(page) == newest_first(lines, model="birch-pro", outcome="timeout")
    assert page.inner_text("#filter") == "Filter: model = birch-pro, outcome = timeout"
    # Removed by choosing any outcome, as a model or a rule is.
    page.select_option("#f-outcome", "")
    page.click("#filters button[type=submit]")
    page.wait_for_url(f"**{RUN_LINKS.run_list(model='birch-pro')}")
    page.wait_for_function("() => document.getElementById('message').textContent.startsWith('Runs 1–')")
    assert page.inner_text("#filter") == "Filter: model = birch-pro"
    assert page.inner_text("#message") == f"Runs 1–20 of {len(newest_first(lines, model='birch-pro'))}"
    # A bad value is said as a bad model is.
    page.goto(f"{url}/chat/runs?outcome=crashed")
    page.wait_for_function("() => document.getElementById('message').className === 'error'")
    assert page.inner_text("#message") == "invalid filter: outcome: Input should be 'completed', 'failed' or 'timeout'"
    assert page.locator("#rows tr").count() == 0


def test_a_run_shows_its_violations_and_two_runs_compare(browser, site, lines):
    env, url = site
    page = browser.new_page()
    sign_in(page, url, env, "alice")
    broken = next(x for x in lines if len((x.get("axe") or {}).get("violations") or []) >= 2)
    page.goto(f"{url}/chat/runs?run={broken['id']}")
    page.wait_for_selector("#list-box table")
    assert page.inner_text("h1") == f"Run {broken['id']}"
    rules = [row.split("\t")[0] for row in page.locator("#list-box tbody tr").all_inner_texts()]
    assert sorted(rules) == sorted(v["id"] for v in broken["axe"]["violations"])
    assert page.inner_text("#message") == f"{len(rules)} rules broken"
    other = next(x for x in lines if x["id"] != broken["id"])
    page.goto(f"{url}/chat/runs?run={broken['id']}&compare={other['id']}")
    page.wait_for_selector("#compared-rows tr")
    assert page.locator("#compared thead th").all_inner_texts() == [broken["id"], other["id"]]
    model_row = page.locator("#compared-rows tr", has_text="Model").first.inner_text().split("\t")
    assert model_row == ["Model", broken["model"], other["model"]]
    assert page.inner_text("#message") == "2 runs compared"


def test_from_a_shared_page_a_visitor_is_told_to_sign_in_and_a_reader_without_runs_read_why(browser, site):
    env, url = site
    page = browser.new_page()
    sign_in(page, url, env, "alice")
    ask(page, "Which checklist runs are newest?")
    page.click("#share")
    page.wait_for_selector("#share-box:not([hidden])")
    visitor = browser.new_context().new_page()
    visitor.goto(url + page.get_attribute("#share-link", "href"))
    link = visitor.locator(".msg.assistant table a[href*='context=checklist']").first
    assert link.get_attribute("target") == "_blank"
    with visitor.context.expect_page() as opened:
        link.click()
    runs = opened.value
    runs.wait_for_selector("#sign-in:not([hidden])")
    assert "Sign in to see the runs." in runs.inner_text("#sign-in")
    assert runs.locator("#rows tr").count() == 0 and runs.is_hidden("#filters")
    carol = browser.new_page()
    sign_in(carol, url, env, "carol")
    carol.goto(f"{url}/chat/runs?context=checklist")
    carol.wait_for_selector("#no-permission:not([hidden])")
    assert "Your account may not read the runs." in carol.inner_text("#no-permission")
    assert "groundchat users grant carol runs.read" in carol.inner_text("#no-permission")


def test_on_a_phone_each_run_is_a_card_that_keeps_the_tables_roles(browser, site, lines):
    env, url = site
    page = browser.new_page(viewport={"width": 320, "height": 640})
    sign_in(page, url, env, "alice")
    page.goto(f"{url}/chat/runs?context=none")
    page.wait_for_selector("#rows tr")
    first = page.locator("#rows tr").first
    assert page.evaluate("getComputedStyle(document.querySelector('#rows tr')).display") == "block"
    # Each fact is named by its column, and nothing runs past the screen's edge.
    label = first.locator("td").first
    assert label.get_attribute("data-label") == "Model" and label.get_attribute("role") == "cell"
    assert first.get_attribute("role") == "row" and page.get_attribute("#list", "role") == "table"
    assert first.locator("th").get_attribute("role") == "rowheader"
    assert page.evaluate("document.documentElement.scrollWidth") <= 320
    box = first.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 320
    # At desktop width it is the table again.
    page.set_viewport_size({"width": 1280, "height": 900})
    assert page.evaluate("getComputedStyle(document.querySelector('#rows tr')).display") == "table-row"
