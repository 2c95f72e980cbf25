"""The run list by violations: `GET /api/runs?order=…` pages graded runs most (or fewest) violations
first and walks both ways with tokens that carry the violations index's key; the page's "Order"
field builds that address and shows the runs in that order."""
from __future__ import annotations

import asyncio

import pytest
from groundchat.auth.callers import CHAT_USE, RUNS_READ
from groundchat.tools.data_tools import DATA_TOOLS
from groundchat_testkit.scripted import ScriptedModel, Step

from tests.chat_function.page_support import import_runs, sample_slice
from tests.chat_function.test_page_browser import CHROMIUM, browser, served, sign_in  # noqa: F401


@pytest.fixture(scope="module")
def lines() -> list[dict]:
    return sample_slice()


def by_violations(lines: list[dict], order: str, **flt: str) -> list[str]:
    """The brute force: graded runs (those with an axe result) by violation count, then by start
    time and id, most first or the reverse."""
    graded = [x for x in lines if x.get("axe") and all(x[k] == v for k, v in flt.items())]
    key = lambda x: (len(x["axe"]["violations"]), x["started_at"].replace("+00:00", "Z"), x["id"])  # noqa: E731
    return [x["id"] for x in sorted(graded, key=key, reverse=order == "most_violations")]


@pytest.fixture
def env(make_env, dynamo, lines):
    import_runs(dynamo, lines)
    return make_env(ScriptedModel([Step(text="unused")]), grants={"alice": [CHAT_USE, RUNS_READ]})


def get(env, address: str):
    async def go():
        async with env.client() as c:
            return await c.get(address, headers=env.token("alice"))

    return asyncio.run(go())


@pytest.mark.parametrize("order", ["most_violations", "fewest_violations"])
@pytest.mark.parametrize("flt", ["", "&context=none", "&model=birch-pro&task=nav-header"])
def test_the_api_pages_by_violations_both_ways(env, lines, order, flt):
    flt_dict = dict(p.split("=") for p in flt.split("&") if p)
    expected = by_violations(lines, order, **flt_dict)
    assert len(expected) > 5
    address = f"/api/runs?limit=5&order={order}{flt}"
    pages, page = [], get(env, address).json()
    while True:
        assert page["order"] == order and page["total"] == len(expected)
        pages.append(page)
        if not page["next"]:
            break
        page = get(env, f"{address}&page={page['next']}").json()
    assert [r["run_id"] for p in pages for r in p["runs"]] == expected
    back = get(env, f"{address}&page={pages[-1]['previous']}").json()
    assert back["runs"] == pages[-2]["runs"] and (back["start"], back["end"]) == (pages[-2]["start"], pages[-2]["end"])
    # A token of one order is not a key of another's list.
    wrong = get(env, f"/api/runs?limit=5{flt}&page={pages[0]['next']}")
    assert wrong.status_code == 400 and "not a page of this run list" in wrong.json()["error"]["message"]


def test_the_api_refuses_an_order_it_cannot_serve_in_one_line(env):
    r = get(env, "/api/runs?order=most_violations&outcome=failed")
    assert r.status_code == 400
    assert r.json()["error"]["message"].startswith("order most_violations lists graded runs by violation count")
    r = get(env, "/api/runs?order=worst")
    assert r.status_code == 400 and "'newest', 'most_violations' or 'fewest_violations'" in r.json()["error"]["message"]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")
def test_the_page_orders_by_most_violations_and_its_field_builds_the_address(browser, served, dynamo, lines):  # noqa: F811
    import_runs(dynamo, lines)
    env, url = served(ScriptedModel([Step(text="unused")]), grants={"alice": [CHAT_USE, RUNS_READ]}, tools=DATA_TOOLS)
    page = browser.new_page()
    sign_in(page, url, env, "alice")
    page.goto(f"{url}/chat/runs?order=most_violations")
    page.wait_for_selector("#rows tr")
    expected = by_violations(lines, "most_violations")
    shown = [row.split("\t")[0] for row in page.locator("#rows tr").all_inner_texts()]
    assert shown == expected[:20]
    counts = [int(c) for c in page.locator("#rows tr td[data-label=Violations]").all_inner_texts()]
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1]
    assert page.input_value("#f-order") == "most_violations"
    assert page.inner_text("#filter") == "graded runs, most violations first"
    assert page.inner_text("#message") == f"Runs 1–20 of {len(expected)}"
    assert page.locator("#pages a").all_inner_texts() == ["Next page: fewer violations"]
    page.click("#pages a[rel=next]")
    page.wait_for_function("() => document.getElementById('message').textContent.startsWith('Runs 21')")
    assert [row.split("\t")[0] for row in page.locator("#rows tr").all_inner_texts()] == expected[20:40]
    assert "order=most_violations" in page.url
    # The field behaves like the filters: chosen with another field, it builds the address.
    page.select_option("#f-context", "none")
    page.select_option("#f-order", "fewest_violations")
    page.click("#filters button[type=submit]")
    page.wait_for_url("**order=fewest_violations")
    page.wait_for_function("() => document.getElementById('message').textContent.startsWith('Runs 1–')")
    assert page.url[len(url):] == "/chat/runs?context=none&order=fewest_violations"
    shown = [row.split("\t")[0] for row in page.locator("#rows tr").all_inner_texts()]
    assert shown == by_violations(lines, "fewest_violations", context="none")[:20]
    assert page.inner_text("#filter") == "Filter: context = none; graded runs, fewest violations first"
    # Back to newest first: no order in the address.
    page.select_option("#f-order", "")
    page.click("#filters button[type=submit]")
    page.wait_for_url("**/chat/runs?context=none")
