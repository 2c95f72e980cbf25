"""A search that could not run (the model missing, the index down) is said so on the page's tool
summary line, never summarised as "0 excerpts" as if it had looked and found nothing."""
from __future__ import annotations

import pytest
from pydantic import BaseModel

from groundchat.auth.callers import CHAT_USE, DOCS_READ
from groundchat.tools.base import Tool
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.test_page_browser import CHROMIUM, ask, browser, served, sign_in  # noqa: F401

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")]


class Query(BaseModel):
    query: str = ""


async def search_that_could_not_run(ctx, args: Query):
    # The search tool's own shape for its third outcome (tools/docs_tools.py).
    return {"outcome": "unavailable", "reason": "embedding_unavailable", "excerpts": [],
            "freshness": {"oldest_updated_at": None, "undated": 0}}


def test_an_unavailable_search_is_summarised_as_could_not_run(browser, served):
    tools = [Tool(name="search_docs", grounding="text", drawer="excerpts", offline_template="excerpts", description="search", input_model=Query, permission=DOCS_READ,
                  handler=search_that_could_not_run)]
    model = ScriptedModel([Step(tool_calls=[("search_docs", {"query": "contrast"})]),
                           Step(text="I could not search the documents just now.")])
    env, url = served(model, grants={"alice": [CHAT_USE, DOCS_READ]}, tools=tools)
    page = browser.new_page()
    sign_in(page, url, env, "alice")
    ask(page, "Why does contrast matter?")
    summary = " ".join(page.locator(".msg.assistant .tools summary").all_inner_texts())
    assert "the search could not run (embedding_unavailable)" in summary
    assert "0 excerpts" not in summary
