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
from groundchat.tools.facts import Drawer, Grounding, OfflineTemplate
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
    grounding=Grounding.FIGURES,
    drawer=Drawer.RUN_LIST,
    offline_template=OfflineTemplate.RUN_LIST,
)
async def slowest_runs(ctx: ToolContext, args: SlowestRunsArgs) -> SlowestRunsResult:
    return SlowestRunsResult(runs=[f"run-{i}" for i in range(args.limit)])


def grants(caller_id: str) -> set[str]:
    return {"reader": {RUNS_READ}}.get(caller_id, set())


async def can(permission: str, caller: Caller) -> bool:
    return permission in grants(caller.id)


def test_the_recipe_shows_the_steps_this_test_takes():
    text = RECIPE.read_text(encoding="utf-8")
    for step in ("@define_tool(", "permission=RUNS_READ", "all_tools()", "ToolContext", "grounding=Grounding.FIGURES",
                 "drawer=Drawer.RUN_LIST", "offline_template=OfflineTemplate.RUN_LIST"):
        assert step in text, step


def test_every_module_an_architecture_page_names_exists():
    """The recipes follow the code as it is: a page that names a module that moved or went fails."""
    roots = (REPO_ROOT, REPO_ROOT / "layers" / "core", REPO_ROOT / "layers" / "core" / "groundchat")
    for page in sorted((REPO_ROOT / "docs" / "architecture").glob("*.md")):
        for path in re.findall(r"`([a-z_]+/[a-z_/]+\.(?:py|js))`", page.read_text(encoding="utf-8")):
            assert any((root / path).exists() for root in roots), (page.name, path)


def test_a_derived_leg_as_the_leg_recipe_describes_it():
    """docs/architecture/add-a-search-leg.md: a derived leg is a module with a pure function from the
    other legs' hits to its own ranked list and a small class that meets `Leg`; one line in the
    pipeline's `LEGS` runs it. The criterion leg is the model; a leg written here by the recipe
    votes in a real search and the debug record names it."""
    from dataclasses import dataclass

    from groundchat.corpus.chunk import make_chunk
    from groundchat.search import criterion_leg as leg
    from groundchat.search import pipeline
    from groundchat.search.leg import Found, Joins, Leg, LegRun, SearchPlan
    from groundchat.search.service import SearchService
    from groundchat.search.types import LegHit
    from tests.search.test_graph_leg import BY_SECTION, _Backend, _Embedder, _legs

    recipe = (REPO_ROOT / "docs" / "architecture" / "add-a-search-leg.md").read_text(encoding="utf-8")
    for step in ("criterion_leg.py", "LegHit", "LEGS", "search/pipeline.py", "search/leg.py", "LegRun", "enabled(plan)"):
        assert step in recipe, step
    assert (leg.CRITERION_LEG, leg.CRITERION_WEIGHT) == ("criterion", 0.5)

    def hit(section: str, i: int, score: float) -> LegHit:
        return LegHit(make_chunk(source="wcag22", section=section, title=section, text=f"{section} passage {i}",
                                 url="https://example.test/", updated_at=None), score)

    vector = [hit("2.4.13", 0, 0.9), hit("2.4.7", 0, 0.8), hit("2.4.7", 1, 0.79), hit("2.4.13", 1, 0.2)]
    ranked = leg.criterion_leg(vector)
    # 2.4.7 matches better over its two best passages taken together, though 2.4.13 has the best one.
    assert [h.chunk.section for h in ranked][:1] == ["2.4.7"]

    # A leg by the recipe: recitals first, from the BM25 leg's own candidates, at a large weight.
    def recitals_first(bm25: list[LegHit]) -> list[LegHit]:
        return [LegHit(h.chunk, 1.0) for h in bm25 if h.chunk.section.startswith("Recital ")]

    @dataclass(frozen=True)
    class RecitalLeg:
        name: str = "recitals"
        joins: Joins = "votes"
        asks: frozenset[str] = frozenset()
        needs_vector: bool = False

        def enabled(self, plan: SearchPlan) -> bool:
            return plan.hybrid

        def run(self, plan: SearchPlan, found: Found) -> LegRun | None:
            return LegRun(recitals_first(found.legs.get("bm25", [])), weight=5.0)

    service = SearchService(_Backend(*_legs()), _Embedder(), max_excerpts=8)
    before = service.search("who counts as the maker?", k=8, include_graph=False)
    service.legs = (*pipeline.LEGS[:2], RecitalLeg(), *pipeline.LEGS[2:])  # the one line in LEGS
    after = service.search("who counts as the maker?", k=8, include_graph=False)
    record = after.debug.record()
    assert record["legs"]["recitals"] == {"hits": 1, "top": [BY_SECTION["Recital 41"].ref]}
    assert record["legs_enabled"]["recitals"] is True and "recitals" in record["legs_ran"]
    assert after.passages[0].section == "Recital 41" != before.passages[0].section
    assert "recitals" not in service.search("maker", leg="bm25").debug.record()["legs"]  # hybrid only
    assert all(isinstance(one, Leg) for one in (*pipeline.LEGS, RecitalLeg()))


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


def test_a_tool_without_its_facts_or_with_a_misspelt_one_is_refused_at_definition():
    with pytest.raises(ToolDefinitionError, match="has no grounding"):
        define_tool(name="x", description="x", input_model=SlowestRunsArgs, permission=RUNS_READ,
                    drawer=Drawer.RUN_LIST, offline_template=OfflineTemplate.RUN_LIST)(slowest_runs.handler)
    with pytest.raises(ToolDefinitionError, match="drawer 'run_list' is not one of"):
        define_tool(name="x", description="x", input_model=SlowestRunsArgs, permission=RUNS_READ, grounding="figures",
                    drawer="run_list", offline_template=OfflineTemplate.RUN_LIST)(slowest_runs.handler)


def test_one_line_in_the_catalog_takes_the_tools_facts_to_the_page_and_the_offline_answerer(monkeypatch):
    from groundchat.offline.templates import compose
    from groundchat.tools import catalog

    listed = catalog.all_tools
    monkeypatch.setattr(catalog, "all_tools", lambda: [*listed(), slowest_runs])  # the one line
    catalog.page_drawers.cache_clear()
    catalog.offline_templates.cache_clear()
    try:
        assert catalog.page_drawers()["slowest_runs"] == "run-list"
        written = compose("slowest runs", [("slowest_runs", {"filter": {}, "runs": [{"run_id": "run-9", "model": "m"}]}, False)])
        assert written.startswith("The latest runs") and "run-9: m" in written
    finally:
        catalog.page_drawers.cache_clear()
        catalog.offline_templates.cache_clear()
