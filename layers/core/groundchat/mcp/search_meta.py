"""What an MCP host asks of the searches of one tool call, beside its arguments.

The chat's JSON API lets a request narrow its answer's searches (`sources`, `top_k`, the
`include_*` leg switches: tools/search_preferences.py). A host asks the same of one call in the
request's `_meta`, under `groundchat/search`, e.g. `{"top_k": 5}`: the tool's own arguments stay
the input schema every model is offered. As in the chat they only narrow: `top_k` is at most this
deployment's excerpt ceiling, a leg switched off stays off, `sources` a subset of the corpus's.
"""
from __future__ import annotations

import json
from typing import cast

from pydantic import ValidationError

from groundchat.search.preferences import SearchPreferences

SEARCH_META = "groundchat/search"


class SearchMetaInvalid(ValueError):
    """The host's `groundchat/search` is not a narrowing this deployment can run; says why."""


def search_preferences(meta: object, max_top_k: int) -> SearchPreferences:
    """The preferences in a call's `_meta` (none asked: the deployment's own)."""
    asked = cast("dict[str, object]", meta).get(SEARCH_META) if isinstance(meta, dict) else None
    if asked is None:
        return SearchPreferences()
    if not isinstance(asked, dict):
        raise SearchMetaInvalid(f"_meta {SEARCH_META} must be an object such as {{\"top_k\": 5}}")
    try:
        # JSON's types strictly: "5" is not a count and "no" is not false.
        preferences = SearchPreferences.model_validate_json(json.dumps(asked), strict=True)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors())
        raise SearchMetaInvalid(f"_meta {SEARCH_META}: {problems}") from None
    if preferences.top_k is not None and preferences.top_k > max_top_k:
        raise SearchMetaInvalid(f"_meta {SEARCH_META}: top_k is at most {max_top_k} excerpts per search here")
    return preferences
