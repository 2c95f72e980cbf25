"""Every search result says how old its oldest excerpt is and how many excerpts have no date."""
from __future__ import annotations

import pytest

from groundchat.auth.callers import DOCS_READ, Caller
from groundchat.search.embedded import EmbeddedIndex
from groundchat.search.excerpts import freshness as _freshness
from groundchat.search.service import SearchService
from groundchat.search.types import Passage
from groundchat.tools.base import ToolContext, ToolRegistry
from groundchat.tools.docs_tools import search_docs
from tests.corpus_support import WordHashEmbedder
from tests.search.test_embedded import _build


def passage(updated_at):
    return Passage(ref="0" * 8, source="docs", section="s", title="t", url="u", text="x", updated_at=updated_at, score=1.0)


def test_the_oldest_is_the_earliest_moment_and_undated_are_counted():
    fresh = _freshness([passage("2024-12-12T00:00:00Z"), passage(None), passage("2019-06-07T00:00:00Z"), passage(None)])
    assert (fresh.oldest_updated_at, fresh.undated) == ("2019-06-07T00:00:00Z", 2)
    # A date an older index kept in another form is not guessed at: it counts as undated.
    odd = _freshness([passage("2019-06-07T02:00:00+02:00"), passage("2024-12-12T00:00:00Z")])
    assert (odd.oldest_updated_at, odd.undated) == ("2024-12-12T00:00:00Z", 1)
    assert _freshness([]).model_dump() == {"oldest_updated_at": None, "undated": 0}


@pytest.mark.parametrize("query, outcome", [("member states economic operators products", "hit"), ("zzzz qqqq", None)])
async def test_every_search_docs_result_carries_its_freshness(tmp_path, query, outcome):
    embedder = WordHashEmbedder()
    _build(tmp_path / "index.sqlite", embedder)
    service = SearchService(EmbeddedIndex(tmp_path / "index.sqlite"), embedder, max_excerpts=8)
    registry = ToolRegistry([search_docs], lambda permission, caller: _allow())
    out = await registry.execute("search_docs", {"query": query}, ToolContext(caller=Caller(id="u"), docs=service))
    dates = [e["updated_at"] for e in out["excerpts"] if e["updated_at"]]
    assert out["freshness"] == {"oldest_updated_at": min(dates) if dates else None,
                                "undated": sum(1 for e in out["excerpts"] if e["updated_at"] is None)}
    if outcome:
        assert out["outcome"] == outcome and out["freshness"]["oldest_updated_at"] == "2019-06-07T00:00:00Z"


async def _allow() -> bool:
    return True
