"""A reopened answer shows what it showed live: "This answer cost $…" (the done frame's figure,
stored with the answer) and "Details" (how its searches ran). The owner's conversation API returns
them; answers stored before they were kept, and the shared page, show none."""
from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from groundchat.store.tables import MESSAGES
from groundchat.tools.docs_tools import search_docs
from tests.chat_function.conftest import parse_sse
from tests.chat_function.page_support import axe_violations, page_width
from tests.chat_function.test_page_answer_details import GRANTS, SECRET, FakeDocs, _usage_total, priced, searching_model  # noqa: F401
from tests.chat_function.test_page_browser import CHROMIUM, _axe_source, ask, browser, served, sign_in  # noqa: F401

SCREENSHOT = Path("/tmp/work/b2_reopened.png")


def _last_answer(messages: list[dict]) -> dict:
    return [m for m in messages if m["role"] == "assistant"][-1]


def test_the_conversation_api_returns_each_answers_cost_and_details(priced, make_env, dynamo):
    from share_function.app import add_share_routes

    env = make_env(searching_model(), grants=GRANTS, tools=[search_docs])
    env.services.docs_override = FakeDocs()
    add_share_routes(env.app, env.services)  # as the local stack serves them, side by side

    async def go():
        async with env.client() as c:
            asked = await c.post("/api/chat", json={"stream": True, "message": "Why contrast?"}, headers=env.token("alice"))
            cid = parse_sse(asked.text)[0][1]["conversation_id"]
            await c.post(f"/api/conversations/{cid}/share", headers=env.token("alice"))
            return asked, (await c.get(f"/api/conversations/{cid}", headers=env.token("alice"))).json(), \
                (await c.get(f"/api/shared/{cid}")).json()

    asked, read, shared = asyncio.run(go())
    frames = parse_sse(asked.text)
    done = frames[-1][1]
    live_debug = next(data for kind, data in frames if kind == "tool-result")["debug"]
    answer = _last_answer(read["messages"])
    # The same figure as the done frame, which equals the run's usage rows.
    assert (answer["cost"], answer["cost_text"]) == (done["cost"], done["cost_text"]) == ("0.00995", "$0.00995")
    assert Decimal(answer["cost"]) == _usage_total(dynamo, done["run_id"]) and answer["run_id"] == done["run_id"]
    assert answer["details"] == {"reason": "complete", "searches": [{"query": "contrast of text", "debug": live_debug}],
                                 "recall": done["recall"]}
    assert SECRET not in json.dumps(read)
    # Only the answer's last assistant message carries them; the question and tool turns do not.
    assert [("cost" in m) for m in read["messages"]] == [False, False, False, True]
    # The shared page is the conversation, not its spending.
    assert not any("cost" in m or "details" in m for m in shared["messages"])

    # An answer stored before costs were kept: no cost, no details, nothing else changed.
    dynamo.table(MESSAGES).update_item(Key={"conversation_id": read["conversation"]["conversation_id"], "seq": 3},
                                       UpdateExpression="REMOVE cost, details")

    async def reread():
        async with env.client() as c:
            return (await c.get(f"/api/conversations/{read['conversation']['conversation_id']}", headers=env.token("alice"))).json()

    old = _last_answer(asyncio.run(reread())["messages"])
    assert not {"cost", "cost_text", "details"} & set(old) and old["content"] == answer["content"]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")
def test_a_reopened_answer_shows_its_cost_and_details_as_it_did_live(priced, browser, served, corpus_dir):
    env, url = served(searching_model(answers=2), grants=GRANTS, tools=[search_docs])
    env.services.docs_override = FakeDocs()
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, url, env, "alice")
    ask(page, "Why contrast?")
    ask(page, "And for large text?", answers=2)

    def shown(answer) -> tuple[str, str]:
        answer.locator(".answer-details summary").click()
        answer.locator(".answer-details .search-debug").wait_for()
        return answer.locator(".answer-cost").inner_text(), answer.locator(".answer-details-body").inner_text()

    page.wait_for_function("() => document.querySelectorAll('.msg.assistant .trace-link a').length === 2")
    live = [shown(page.locator(".msg.assistant").nth(i)) for i in range(2)]
    conversation = httpx.get(f"{url}/api/conversations", headers=env.token("alice")).json()["conversations"][0]["conversation_id"]

    page.goto(f"{url}/chat?conversation={conversation}")  # reload: nothing of the live page is left
    page.wait_for_selector(".msg.assistant .answer-cost")
    answers = page.locator(".msg.assistant")
    assert answers.count() == 2 and page.locator(".msg.assistant[data-done]").count() == 0
    page.wait_for_function("() => document.querySelectorAll('.msg.assistant .trace-link a').length === 2")
    reopened = [shown(answers.nth(i)) for i in range(2)]
    assert reopened == live
    cost, details = reopened[0]
    assert cost == "This answer cost $0.00995"
    assert "bm25: 12 hits (first bbbb2222); vector: 30 hits (first bbbb2222, cccc3333)" in details
    assert "embed 3.5 ms, legs 1.25 ms, fuse 0.1 ms, rerank 0 ms, total 5 ms" in details
    assert "Open this answer's trace" in details and SECRET not in page.content()

    # On a phone, with Details open: nothing scrolls sideways, and axe finds nothing.
    page.set_viewport_size({"width": 390, "height": 844})
    assert page_width(page) <= 390
    assert axe_violations(page, _axe_source(corpus_dir)) == []
    answers.nth(0).locator(".answer-foot").scroll_into_view_if_needed()
    if SCREENSHOT.parent.is_dir():
        page.screenshot(path=str(SCREENSHOT), full_page=True)

    # Details stored with searches left out (past the bound) say so.
    item = env.services.dynamo.table(MESSAGES).get_item(Key={"conversation_id": conversation, "seq": 3})["Item"]
    details = json.loads(item["details"]) | {"searches_omitted": 3}
    env.services.dynamo.table(MESSAGES).update_item(Key={"conversation_id": conversation, "seq": 3}, UpdateExpression="SET details = :d",
                                                    ExpressionAttributeValues={":d": json.dumps(details)})
    page.reload()
    page.wait_for_selector(".msg.assistant .answer-cost")
    _, first = shown(page.locator(".msg.assistant").nth(0))
    assert "Search 1 “contrast of text”" in first
    assert "3 more searches ran for this answer than were kept with it (the first is above). The trace has them all." in first
