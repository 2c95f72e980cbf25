"""`search_docs` through the registry: permission, charging, debug for the trace, the three outcomes."""
from __future__ import annotations

import pytest

from groundchat.auth.callers import DOCS_READ, Caller
from groundchat.search.embedded import EmbeddedIndex
from groundchat.search.service import SearchService
from groundchat.tools.base import ToolContext, ToolRefused, ToolRegistry
from groundchat.tools.docs_tools import search_docs
from tests.corpus_support import WordHashEmbedder
from tests.search.test_embedded import _build


def _registry(granted: set[str]) -> ToolRegistry:
    async def can(permission, caller):
        return permission in granted

    return ToolRegistry([search_docs], can)


@pytest.fixture
def service(tmp_path):
    embedder = WordHashEmbedder()
    _build(tmp_path / "index.sqlite", embedder)
    return SearchService(EmbeddedIndex(tmp_path / "index.sqlite"), embedder)


async def test_hit_with_refs_charged_and_debug_recorded(service):
    charged = []

    async def charge(query):
        charged.append(query)

    ctx = ToolContext(caller=Caller(id="u"), docs=service, charge_search=charge)
    out = await _registry({DOCS_READ}).execute("search_docs", {"query": "contrast ratio of text", "source": "wcag22"}, ctx)
    assert out["outcome"] == "hit"
    first = out["excerpts"][0]
    assert (first["source"], first["section"]) == ("wcag22", "1.4.3")
    assert len(first["ref"]) == 8 and first["url"] == "https://x/#1.4.3"
    assert out["freshness"] == {"oldest_updated_at": "2024-12-12T00:00:00Z", "undated": 0}
    assert charged == ["contrast ratio of text"]  # charged by the query's own size, before it ran
    assert ctx.answer.debug["fusion"] == "scores+rrf"


async def test_unavailable_keeps_its_reason_and_has_no_excerpts(tmp_path):
    svc = SearchService(EmbeddedIndex(tmp_path / "missing.sqlite"), WordHashEmbedder())
    ctx = ToolContext(caller=Caller(id="u"), docs=svc)
    out = await _registry({DOCS_READ}).execute("search_docs", {"query": "contrast"}, ctx)
    # Every result says how fresh it is, even one that found nothing to date.
    assert out == {"outcome": "unavailable", "reason": "index_missing", "excerpts": [],
                   "freshness": {"oldest_updated_at": None, "undated": 0}}


async def test_denied_without_docs_read(service):
    ctx = ToolContext(caller=Caller(id="u"), docs=service)
    with pytest.raises(ToolRefused):
        await _registry(set()).execute("search_docs", {"query": "contrast"}, ctx)


def test_the_model_cannot_choose_the_index():
    props = search_docs.spec().input_schema["properties"]
    assert set(props) == {"query", "source"}
    assert search_docs.permission == DOCS_READ


async def test_a_weak_best_match_is_said_to_the_model(tmp_path):
    from groundchat.search.learned_rank import Ranking

    class Doubtful:
        threshold = 1.0

        def rank(self, query, fused, evidence, keep_first=0):
            return Ranking(fused, 0.2, True)

    embedder = WordHashEmbedder()
    _build(tmp_path / "index.sqlite", embedder)
    doubtful = SearchService(EmbeddedIndex(tmp_path / "index.sqlite"), embedder, ranker=Doubtful())
    out = await _registry({DOCS_READ}).execute("search_docs", {"query": "contrast ratio of text"},
                                               ToolContext(caller=Caller(id="u"), docs=doubtful))
    assert out["outcome"] == "hit" and out["best_match"] == "weak"
    plain = SearchService(EmbeddedIndex(tmp_path / "index.sqlite"), embedder, ranker=None)
    out = await _registry({DOCS_READ}).execute("search_docs", {"query": "contrast ratio of text"},
                                               ToolContext(caller=Caller(id="u"), docs=plain))
    assert "best_match" not in out
