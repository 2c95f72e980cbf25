"""What a tool says of itself beside its schema and permission, each a closed set so that a
misspelt value stops the tool's definition: whether its figures ground a view (`Grounding`, kept
with the checks that read it), how the page draws it (`Drawer`) and which template the offline
answerer writes from its result with (`OfflineTemplate`). Every `Tool` names all three
(tools/base.py); nothing else keeps a list of tool names for them."""
from __future__ import annotations

from enum import StrEnum

from groundchat.grounding.tool_grounding import Grounding


class Drawer(StrEnum):
    """How the page draws a tool's call and result: each value is a drawer of the page's script
    (DRAWERS in functions/pages/page_assets/transcript.js; a test keeps the two sets equal). The
    page learns which tool takes which drawer from the map the server fills into it."""

    CONTEXTS = "contexts"            # figures per model × context level, as tables
    RUN_LIST = "run-list"            # a list of runs, as a table, with a link to the run list
    RUN = "run"                      # one run's facts and the rules it broke
    RULE_COUNTS = "rule-counts"      # rules with how often they were broken
    RULE = "rule"                    # one axe rule and its WCAG criteria
    EXCERPTS = "excerpts"            # passages of the corpus, each with its source
    PAST_EXCHANGES = "past-exchanges"  # the caller's earlier exchanges: counted, drawn plainly
    VIEW = "view"                    # a view the model composed: drawn by its own frame, no body here
    PLAIN = "plain"                  # the result's plain fields as a list of facts


class OfflineTemplate(StrEnum):
    """Which template of offline/templates.py (TEMPLATES) writes the offline answer from a tool's
    result; a test keeps every value backed by a template."""

    CONTEXTS = "contexts"            # leads with what the question asks of the figures
    RUN_LIST = "run-list"
    RUN = "run"
    RULE_COUNTS = "rule-counts"
    RULE = "rule"
    EXCERPTS = "excerpts"            # leads with the best passage's sentence that answers
    PAST_EXCHANGES = "past-exchanges"
    VIEW = "view"                    # writes nothing: the view speaks for itself
    GENERIC = "generic"              # the result as it is, shortened


__all__ = ["Drawer", "Grounding", "OfflineTemplate"]
