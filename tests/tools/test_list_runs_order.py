"""`list_runs` by violations: `order` is one of three words (anything else refused in one line naming
them), echoed in the result and in its link; graded runs only; what the views cannot order is
refused in one line that says what they can."""
from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from groundchat.benchmark.runs import RunFilter
from groundchat.tools import ToolError

from tests.benchmark.conftest import (  # noqa: F401  (fixtures)
    ctx,
    loaded,
    queries,
    registry,
    sample_lines,
    writer,
)
from tests.benchmark.test_rule_lists import summaries
from tests.store.test_violation_order import brute


def query(link: str) -> dict[str, str]:
    parsed = urlparse(link)
    assert parsed.path == "/chat/runs"
    return {k: v[0] for k, v in parse_qs(parsed.query).items()}


@pytest.mark.parametrize("order", ["most_violations", "fewest_violations"])
async def test_the_order_is_served_echoed_and_linked(loaded, registry, ctx, order):  # noqa: F811
    result = await registry.execute("list_runs", {"model": "birch-pro", "order": order, "limit": 3}, ctx)
    want = brute(summaries(loaded), RunFilter(model="birch-pro"), order)
    assert [r["run_id"] for r in result["runs"]] == want[:3] and result["more"] is True
    assert result["order"] == order and result["filter"] == {"model": "birch-pro"}
    assert query(result["link"]) == {"model": "birch-pro", "order": order}
    counts = [r["violation_count"] for r in result["runs"]]
    assert counts == sorted(counts, reverse=order == "most_violations")
    assert all(r["graded"] for r in result["runs"])


async def test_the_default_order_is_newest_and_its_link_is_unchanged(loaded, registry, ctx):  # noqa: F811
    result = await registry.execute("list_runs", {"context": "none", "limit": 2}, ctx)
    assert result["order"] == "newest" and query(result["link"]) == {"context": "none"}


async def test_an_unknown_order_is_refused_in_one_line_naming_the_three(loaded, registry, ctx):  # noqa: F811
    with pytest.raises(ToolError) as exc:
        await registry.execute("list_runs", {"order": "worst"}, ctx)
    assert str(exc.value) == ("invalid arguments: order: Input should be 'newest', 'most_violations' or "
                              "'fewest_violations'")


@pytest.mark.parametrize("args", [{"outcome": "completed"}, {"rule": "image-alt", "context": "none"}])
async def test_an_order_the_views_cannot_serve_is_refused_in_one_line(loaded, registry, ctx, args):  # noqa: F811
    with pytest.raises(ToolError) as exc:
        await registry.execute("list_runs", {**args, "order": "most_violations"}, ctx)
    message = str(exc.value)
    assert "\n" not in message and "order most_violations" in message and "order by newest" in message
