"""Every tool this build defines, in the order they are offered, and what the page and the offline
answerer read of their facts: adding a tool is its module and one line in `all_tools()`."""
from __future__ import annotations

from functools import lru_cache

from groundchat.tools.base import Tool
from groundchat.tools.facts import OfflineTemplate


def all_tools() -> list[Tool]:
    from groundchat.tools.data_tools import DATA_TOOLS
    from groundchat.tools.docs_tools import search_docs
    from groundchat.tools.recall_tool import search_my_conversations
    from groundchat.tools.view_tool import show_view

    return [*DATA_TOOLS, search_docs, search_my_conversations, show_view]


@lru_cache(maxsize=1)
def page_drawers() -> dict[str, str]:
    """Tool name -> the page's drawer for it (tools/facts.py `Drawer`): the map the pages are served
    with, so the page's script draws each tool as the tool says. Every tool of the build is in it,
    offered or not, because a reopened or shared conversation shows the tools it called."""
    return {tool.name: tool.drawer.value for tool in all_tools()}


@lru_cache(maxsize=1)
def offline_templates() -> dict[str, OfflineTemplate]:
    """Tool name -> the offline answerer's template for its result."""
    return {tool.name: tool.offline_template for tool in all_tools()}
