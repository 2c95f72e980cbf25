"""`GET /api/runs`, the run list page's data: pages of runs newest first, the count of every run the
filter matches (from the runs' views, never by reading the runs), and `next` / `previous` tokens
that walk the whole list both ways at the cost of one page each."""
from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from groundchat.auth.callers import CHAT_USE, RUNS_READ
from groundchat_testkit.scripted import ScriptedModel, Step

from tests.chat_function.page_support import SLICE_TASKS as TASKS, import_runs, newest_first, sample_slice


@pytest.fixture(scope="module")
def lines() -> list[dict]:
    return sample_slice()


@pytest.fixture
def env(make_env, dynamo, lines):
    import_runs(dynamo, lines)
    return make_env(ScriptedModel([Step(text="unused")]), grants={"alice": [CHAT_USE, RUNS_READ], "carol": [CHAT_USE]})


def get(env, address: str, user: str = "alice"):
    async def go():
        async with env.client() as c:
            return await c.get(address, headers=env.token(user))

    return asyncio.run(go())


def walk(env, address: str) -> tuple[list[dict], list[str]]:
    """Every page from the first by `next`; returns the pages and the ids in order."""
    pages, ids = [], []
    page = get(env, address).json()
    while True:
        assert len(pages) < 40, "the pages never end"
        pages.append(page)
        ids += [r["run_id"] for r in page["runs"]]
        if not page["next"]:
            return pages, ids
        page = get(env, f"{address}&page={page['next']}").json()


def test_the_first_page_says_where_it_sits_in_the_whole_list(env, lines):
    r = get(env, "/api/runs?limit=20")
    assert r.status_code == 200
    page = r.json()
    expected = newest_first(lines)
    assert [row["run_id"] for row in page["runs"]] == expected[:20]
    assert (page["total"], page["start"], page["end"], page["count"]) == (120, 1, 20, 20)
    assert page["previous"] is None and page["next"] and page["more"] is True
    assert page["runs"][0]["link"] == f"/chat/runs?run={expected[0]}"
    assert page["values"]["task"] == sorted(TASKS) and "color-contrast" in page["values"]["rule"]


@pytest.mark.parametrize("flt", [{"context": "checklist"}, {"model": "atlas-small", "task": "nav-header"},
                                 {"rule": "color-contrast"}, {"rule": "color-contrast", "context": "none"}])
def test_next_walks_every_run_once_and_previous_walks_back(env, lines, flt):
    query = "&".join(f"{k}={v}" for k, v in flt.items())
    expected = newest_first(lines, **flt)
    assert len(expected) > 7  # more than one page of 7
    pages, ids = walk(env, f"/api/runs?limit=7&{query}")
    assert ids == expected
    assert all(p["total"] == len(expected) for p in pages)
    assert [(p["start"], p["end"]) for p in pages] == [(i + 1, min(i + 7, len(expected))) for i in range(0, len(expected), 7)]
    # Back from the last page to the first, by `previous`: the same pages, in reverse.
    page, back = pages[-1], []
    while page["previous"] and len(back) < 40:
        page = get(env, f"/api/runs?limit=7&{query}&page={page['previous']}").json()
        back.append((page["start"], [r["run_id"] for r in page["runs"]]))
    assert back == [(p["start"], [r["run_id"] for r in p["runs"]]) for p in reversed(pages[:-1])]
    assert page["previous"] is None and page["start"] == 1


def test_one_matching_run_is_one_page_with_no_next(env, lines):
    one = lines[0]
    r = get(env, f"/api/runs?model={one['model']}&context={one['context']}&task={one['task']}&label={one['label']}")
    page = r.json()
    assert [row["run_id"] for row in page["runs"]] == [one["id"]]
    assert (page["total"], page["start"], page["end"], page["next"], page["previous"]) == (1, 1, 1, None, None)


def test_a_deep_page_costs_what_the_first_costs(env, monkeypatch):
    """Counted from the views and started at a key: the tenth page reads no more than the first."""
    views = env.services.runs._views
    calls: Counter = Counter()
    real_query = views.query

    def counted(**kwargs):
        calls[kwargs.get("ExclusiveStartKey") is not None] += 1
        page = real_query(**kwargs)
        calls["items"] += len(page.get("Items", []))
        return page

    monkeypatch.setattr(views, "query", counted)
    monkeypatch.setattr(views, "scan", lambda **kw: pytest.fail("the run list never scans"))
    first = get(env, "/api/runs?limit=5").json()
    read_first = calls["items"]
    pages, _ = walk(env, "/api/runs?limit=5")
    calls.clear()
    get(env, f"/api/runs?limit=5&page={pages[9]['next']}")
    assert calls[True] == 1 and calls["items"] <= read_first
    assert first["total"] == 120


@pytest.mark.parametrize("address, says", [
    ("/api/runs?page=not-a-token", "page: not a page of this run list; start again from the first page"),
    ("/api/runs?limit=0", "invalid filter: limit: Input should be greater than or equal to 1"),
    ("/api/runs?colour=blue", "invalid filter: colour: Extra inputs are not permitted"),
])
def test_bad_input_is_one_line_naming_it(env, address, says):
    r = get(env, address)
    assert r.status_code == 400
    assert r.json()["error"]["message"] == says


def test_an_unknown_value_names_the_valid_ones(env):
    r = get(env, "/api/runs?context=everything")
    assert r.status_code == 400
    assert "unknown context 'everything'; valid values: " in r.json()["error"]["message"]


def test_the_run_list_needs_a_sign_in_and_runs_read(env):
    async def anonymous():
        async with env.client() as c:
            return await c.get("/api/runs")

    assert asyncio.run(anonymous()).status_code == 401
    denied = get(env, "/api/runs", user="carol")
    assert denied.status_code == 403 and "runs.read" in denied.json()["error"]["message"]


def test_an_outcome_lists_only_those_runs_with_their_count_and_pages(env, lines):
    expected = newest_first(lines, outcome="timeout")
    assert 4 < len(expected) < len(lines)
    pages, ids = walk(env, "/api/runs?limit=2&outcome=timeout")
    assert ids == expected
    assert all(p["total"] == len(expected) and p["filter"] == {"outcome": "timeout"} for p in pages)
    assert {r["outcome"] for p in pages for r in p["runs"]} == {"timeout"}
    assert [(p["start"], p["end"]) for p in pages] == [(i + 1, min(i + 2, len(expected))) for i in range(0, len(expected), 2)]
    back = get(env, f"/api/runs?limit=2&outcome=timeout&page={pages[1]['previous']}").json()
    assert [r["run_id"] for r in back["runs"]] == expected[:2] and back["start"] == 1
    # With the other filters, as they are.
    one = next(x for x in lines if x["outcome"] == "failed")
    page = get(env, f"/api/runs?outcome=failed&model={one['model']}&task={one['task']}").json()
    assert [r["run_id"] for r in page["runs"]] == newest_first(lines, outcome="failed", model=one["model"], task=one["task"])
    assert page["total"] == len(page["runs"]) and page["filter"] == {"model": one["model"], "task": one["task"], "outcome": "failed"}


def test_a_bad_outcome_is_refused_like_a_bad_model(env):
    bad_outcome, bad_model = get(env, "/api/runs?outcome=crashed"), get(env, "/api/runs?model=nobody")
    assert bad_outcome.status_code == bad_model.status_code == 400
    assert bad_outcome.json().keys() == bad_model.json().keys()
    assert bad_outcome.json()["error"]["code"] == bad_model.json()["error"]["code"]
    assert bad_outcome.json()["error"]["message"] == (
        "invalid filter: outcome: Input should be 'completed', 'failed' or 'timeout'")
