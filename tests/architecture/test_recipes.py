"""docs/architecture/add-a-tool.md, followed step by step: a tool defined as the page shows is
offered to a caller with its permission, refused to one without (with the words an unknown tool
gets), validated by its input model, and returns its output model as JSON."""
from __future__ import annotations

import re

import pytest
from pydantic import BaseModel, Field

from groundchat.auth.callers import RUNS_READ, Caller
from groundchat.tools.base import ToolContext, ToolDefinitionError, ToolError, ToolRefused, ToolRegistry, define_tool
from groundchat.tools.catalog import all_tools
from tests.conftest import REPO_ROOT

RECIPE = REPO_ROOT / "docs" / "architecture" / "add-a-tool.md"


class SlowestRunsArgs(BaseModel):
    model: str | None = Field(default=None, description="a model name, as in list_runs")
    limit: int = Field(default=5, ge=1, le=20)


class SlowestRunsResult(BaseModel):
    runs: list[str]


@define_tool(
    name="slowest_runs",
    description="The runs that took longest, slowest first, under an optional model.",
    input_model=SlowestRunsArgs,
    permission=RUNS_READ,
    output_model=SlowestRunsResult,
)
async def slowest_runs(ctx: ToolContext, args: SlowestRunsArgs) -> SlowestRunsResult:
    return SlowestRunsResult(runs=[f"run-{i}" for i in range(args.limit)])


def grants(caller_id: str) -> set[str]:
    return {"reader": {RUNS_READ}}.get(caller_id, set())


async def can(permission: str, caller: Caller) -> bool:
    return permission in grants(caller.id)


def test_the_recipe_shows_the_steps_this_test_takes():
    text = RECIPE.read_text(encoding="utf-8")
    for step in ("@define_tool(", "permission=RUNS_READ", "all_tools()", "ToolContext"):
        assert step in text, step
    # Every module path the page names exists, so the recipe follows the code as it is.
    for path in re.findall(r"`([a-z_]+/[a-z_/]+\.(?:py|js))`", text):
        roots = (REPO_ROOT, REPO_ROOT / "layers" / "core", REPO_ROOT / "layers" / "core" / "groundchat")
        assert any((root / path).exists() for root in roots), path


async def test_a_tool_made_by_the_recipe_is_offered_refused_and_run():
    registry = ToolRegistry([*all_tools(), slowest_runs], can)
    reader, stranger = Caller(id="reader"), Caller(id="stranger")
    assert "slowest_runs" in [t.name for t in await registry.offered(reader)]
    assert "slowest_runs" not in [t.name for t in await registry.offered(stranger)]
    result = await registry.execute("slowest_runs", {"limit": 2}, ToolContext(caller=reader))
    assert result == {"runs": ["run-0", "run-1"]}
    with pytest.raises(ToolRefused) as denied:
        await registry.execute("slowest_runs", {}, ToolContext(caller=stranger))
    with pytest.raises(ToolRefused) as unknown:
        await registry.execute("no_such_tool", {}, ToolContext(caller=stranger))
    assert str(denied.value).replace("slowest_runs", "X") == str(unknown.value).replace("no_such_tool", "X")
    with pytest.raises(ToolError, match="limit"):
        await registry.execute("slowest_runs", {"limit": 99}, ToolContext(caller=reader))


def test_a_tool_without_a_permission_is_refused_at_definition():
    with pytest.raises(ToolDefinitionError):
        define_tool(name="x", description="x", input_model=SlowestRunsArgs)(slowest_runs.handler)
