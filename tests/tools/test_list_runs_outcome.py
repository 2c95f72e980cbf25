"""The data tools and outcomes: `list_runs` takes an outcome (one of three words, anything else refused
in one line naming them), echoes it in its filter and its link; `compare_contexts` rows link their
failed and timed-out runs."""
from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from groundchat.tools import ToolError
from tests.benchmark.conftest import ctx, loaded, queries, registry, sample_lines, writer  # noqa: F401  (fixtures)
from tests.chat_function.page_support import newest_first


def query(link: str) -> dict[str, str]:
    parsed = urlparse(link)
    assert parsed.path == "/chat/runs"
    return {k: v[0] for k, v in parse_qs(parsed.query).items()}


async def test_list_runs_by_outcome_echoes_it_and_links_the_same_list(loaded, registry, ctx):  # noqa: F811
    result = await registry.execute("list_runs", {"model": "birch-pro", "outcome": "timeout", "limit": 2}, ctx)
    want = newest_first(loaded, model="birch-pro", outcome="timeout")
    assert len(want) > 2
    assert [r["run_id"] for r in result["runs"]] == want[:2] and result["more"] is True
    assert {r["outcome"] for r in result["runs"]} == {"timeout"}
    assert result["filter"] == {"model": "birch-pro", "outcome": "timeout"}
    assert query(result["link"]) == {"model": "birch-pro", "outcome": "timeout"}
    every = await registry.execute("list_runs", {"outcome": "failed", "limit": 100}, ctx)
    assert [r["run_id"] for r in every["runs"]] == newest_first(loaded, outcome="failed")


async def test_an_unknown_outcome_is_refused_in_one_line_naming_the_three(loaded, registry, ctx):  # noqa: F811
    with pytest.raises(ToolError) as exc:
        await registry.execute("list_runs", {"outcome": "crashed"}, ctx)
    message = str(exc.value)
    assert message == "invalid arguments: outcome: Input should be 'completed', 'failed' or 'timeout'"
    assert "\n" not in message


async def test_a_list_without_an_outcome_is_unchanged(loaded, registry, ctx):  # noqa: F811
    result = await registry.execute("list_runs", {"context": "none", "limit": 2}, ctx)
    assert result["filter"] == {"context": "none"} and query(result["link"]) == {"context": "none"}
    assert [r["run_id"] for r in result["runs"]] == newest_first(loaded, context="none")[:2]


async def test_compare_contexts_rows_link_their_failed_and_timed_out_runs(loaded, registry, ctx):  # noqa: F811
    result = await registry.execute("compare_contexts", {"task": "nav-header"}, ctx)
    linked = 0
    for row in result["rows"]:
        for outcome in ("failed", "timeout"):
            link = row["links"][outcome]
            if row[outcome] == 0:
                assert link is None
                continue
            linked += 1
            params = query(link)
            assert params == {"task": "nav-header", "model": row["model"], "context": row["context"], "outcome": outcome}
            # The link opens exactly the runs the count counts.
            listed = await registry.execute("list_runs", {**params, "limit": 100}, ctx)
            assert listed["count"] == row[outcome]
    assert linked >= 3
    for row in result["by_context"]:  # over every model: the context and the tool's filter only
        if row["timeout"]:
            assert query(row["links"]["timeout"]) == {"task": "nav-header", "context": row["context"], "outcome": "timeout"}
    # Additive: the links the rows had are as they were.
    assert set(result["rows"][0]["links"]) == {"model", "context", "failed", "timeout"}


def test_the_list_runs_schema_offers_the_three_outcomes():
    from groundchat.tools.data_tools import list_runs

    spec = list_runs.spec().model_dump()
    assert spec["input_schema"]["properties"]["outcome"] == {"enum": ["completed", "failed", "timeout"], "type": "string"}
    assert "outcome" in spec["description"]
