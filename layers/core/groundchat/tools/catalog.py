"""Every tool this build defines, in the order they are offered."""
from __future__ import annotations

from groundchat.tools.base import Tool


def all_tools() -> list[Tool]:
    from groundchat.tools.data_tools import DATA_TOOLS
    from groundchat.tools.docs_tools import search_docs
    from groundchat.tools.recall_tool import search_my_conversations
    from groundchat.tools.view_tool import show_view

    return [*DATA_TOOLS, search_docs, search_my_conversations, show_view]
