"""What is kept with a committed answer so that, reopened, it shows what it showed live: the cost
line ("This answer cost $…") and "Details" (how it ended, each search's legs, fusion, rerank,
timings).

The cost is the `done` frame's figure (`loop.answer_cost`: every model step and search of the
answer, equal to its usage rows), as Decimal text. The details are the reader's view of each
search's debug record (`reader_debug.for_reader`, the same the live `tool-result` frame carries,
never an error's text) and only the query of its arguments, which is all "Details" shows of them.

A message item must stay under DynamoDB's 400 KB beside the answer's words and annotations, so the
details are bounded: at most MAX_SEARCHES searches and MAX_DETAILS_CHARS characters of JSON (a few
hundred bytes a search is usual). Searches past either bound are left out, counted in
`searches_omitted`, and the page says so under "Details".
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from groundchat.chat.answer_run import Exchange, answer_cost
from groundchat.chat.reader_debug import for_reader
from groundchat.chat.steps import ToolStep
from groundchat.money import money_text

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonList, JsonObject

MAX_SEARCHES = 12
MAX_DETAILS_CHARS = 12_000
MAX_QUERY_CHARS = 500  # what the search tools accept: kept whole


def answer_record(ex: Exchange, recall: JsonObject | None = None) -> JsonObject:
    """`{"cost": "0.00825", "details": {"reason", "searches", ["searches_omitted"], ["recall"]}}` for
    `ex`; `recall` is the reader's view of its recall plan (whether past conversations were searched, and why)."""
    searches = [_search(step) for step in ex.steps
                if isinstance(step, ToolStep) and step.outcome == "ok" and for_reader(step.debug)]
    kept: JsonList = []
    details: JsonObject = {"reason": ex.done_reason, "searches": kept}
    for search in searches:
        if len(kept) == MAX_SEARCHES or _size(details, kept, search) > MAX_DETAILS_CHARS:
            break
        kept.append(search)
    if len(kept) < len(searches):
        details["searches_omitted"] = len(searches) - len(kept)
    if recall is not None:
        details["recall"] = recall
    return {"cost": money_text(answer_cost(ex)), "details": details}


def _search(step: ToolStep) -> JsonObject:
    query = step.args.get("query")
    return {"query": str(query)[:MAX_QUERY_CHARS] if query else None, "debug": for_reader(step.debug)}


def _size(details: JsonObject, kept: JsonList, search: JsonObject) -> int:
    return len(json.dumps({**details, "searches": [*kept, search]}, separators=(",", ":"), default=str))
