"""A tool owns its facts: its grounding class, the page's drawer for it and the offline answerer's
template, all on the `Tool` (tools/facts.py). A registered tool lacking one, or naming one that does
not exist, fails; the page and the offline answerer know every value a tool may name."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from importlib import resources

import pytest
from pydantic import BaseModel

from groundchat.auth.callers import Caller
from groundchat.chat.loop import run_exchange
from groundchat.offline.templates import TEMPLATES, NoTemplate, compose, compose_view
from groundchat.tools.base import Tool, ToolDefinitionError, ToolRegistry, define_tool
from groundchat.tools.catalog import all_tools, offline_templates, page_drawers
from groundchat.tools.facts import Drawer, Grounding, OfflineTemplate
from groundchat.tools.view_tool import show_view
from groundchat_testkit.answer_runs import kept_run
from groundchat_testkit.scripted import ScriptedModel, Step

FACTS = {"grounding": Grounding, "drawer": Drawer, "offline_template": OfflineTemplate}


class NoArgs(BaseModel):
    pass


async def handler(ctx, args):
    return {"mean_violations": 4.41}


def page_script() -> str:
    return resources.files("page_assets").joinpath("transcript.js").read_text(encoding="utf-8")


def page_drawer_names() -> set[str]:
    """The keys of DRAWERS in the page's script, read from its source."""
    body = page_script().split("const DRAWERS = {\n", 1)[1].split("\n  };\n", 1)[0]
    return set(re.findall(r'^    "?([a-z-]+)"?: \{', body, re.MULTILINE))


def test_every_registered_tool_names_each_of_its_facts():
    tools = all_tools()
    assert tools
    for tool in tools:
        for fact, kind in FACTS.items():
            assert isinstance(getattr(tool, fact), kind), (tool.name, fact)


def test_the_facts_of_the_tools_are_the_ones_they_had_by_name():
    facts = {t.name: (t.grounding.value, t.drawer.value, t.offline_template.value) for t in all_tools()}
    # What the checks, the page and the offline answerer once listed by name (a new tool adds its own).
    assert facts.items() >= {
        "compare_contexts": ("figures", "contexts", "contexts"),
        "list_runs": ("figures", "run-list", "run-list"),
        "get_run": ("figures", "run", "run"),
        "top_rules": ("figures", "rule-counts", "rule-counts"),
        "explain_rule": ("text", "rule", "rule"),
        "search_docs": ("text", "excerpts", "excerpts"),
        "search_my_conversations": ("text", "past-exchanges", "past-exchanges"),
        "show_view": ("none", "view", "view"),
    }.items()


def test_the_page_has_a_drawer_for_every_value_a_tool_may_name_and_no_other():
    names = page_drawer_names()
    assert "run-list" in names and "plain" in names
    assert names == {d.value for d in Drawer}


def test_the_offline_answerer_has_a_template_for_every_value_a_tool_may_name():
    assert set(TEMPLATES) == set(OfflineTemplate)


def test_the_maps_the_page_and_the_offline_answerer_read_come_from_the_tools():
    assert page_drawers() == {t.name: t.drawer.value for t in all_tools()}
    assert offline_templates() == {t.name: t.offline_template for t in all_tools()}


@pytest.mark.parametrize("fact", list(FACTS))
def test_a_tool_lacking_a_fact_is_refused_at_definition(fact):
    given = {"grounding": "figures", "drawer": "plain", "offline_template": "generic"}
    del given[fact]
    with pytest.raises(ToolDefinitionError, match=f"tool 'slowest_runs' has no {fact} "):
        define_tool(name="slowest_runs", description="d", input_model=NoArgs, permission="runs.read", **given)(handler)


@pytest.mark.parametrize(("fact", "misspelt"), [("grounding", "figure"), ("drawer", "run_list"),
                                                ("offline_template", "top_rules")])
def test_a_misspelt_fact_is_refused_at_definition_naming_the_choices(fact, misspelt):
    given = {"grounding": "figures", "drawer": "plain", "offline_template": "generic", fact: misspelt}
    with pytest.raises(ToolDefinitionError) as refused:
        Tool(name="slowest_runs", description="d", input_model=NoArgs, permission="runs.read", handler=handler, **given)
    choices = ", ".join(member.value for member in FACTS[fact])
    assert str(refused.value) == f"tool 'slowest_runs': {fact} {misspelt!r} is not one of {choices}"


def test_a_fact_given_as_its_value_is_held_as_its_enum_member():
    tool = Tool(name="t", description="d", input_model=NoArgs, permission="runs.read", handler=handler,
                grounding="figures", drawer="run-list", offline_template=OfflineTemplate.RUN_LIST)
    assert (tool.grounding, tool.drawer, tool.offline_template) == (Grounding.FIGURES, Drawer.RUN_LIST, OfflineTemplate.RUN_LIST)


# ---- the grounding class decides, through the loop, whose numbers a view may show ----------------

def table_view(value: float) -> dict:
    return {"title": "t", "parts": [{"type": "table", "caption": "c", "columns": ["Context", "Violations"], "rows": [["none", value]]}]}


@pytest.mark.parametrize(("grounding", "accepted"), [("figures", True), ("text", False)])
async def test_a_views_numbers_are_grounded_by_the_class_the_tool_names_not_its_name(grounding, accepted):
    # A tool the checks have never heard of: what it says of itself is all they go by.
    figures = Tool(name="slowest_runs", description="d", input_model=NoArgs, permission="runs.read", handler=handler,
                   grounding=grounding, drawer="run-list", offline_template="run-list")

    async def allow(permission, caller):
        return True

    model = ScriptedModel([Step(tool_calls=[("slowest_runs", {})]), Step(tool_calls=[("show_view", table_view(4.41))]),
                           Step(text="done")])
    run = await kept_run(model, ToolRegistry([figures, show_view], allow))
    frames = [f async for f in run_exchange(run)]
    results = [f.data for f in frames if f.type == "tool-result"]
    assert results[0]["result"] == {"mean_violations": 4.41}
    if accepted:
        assert results[1]["result"] == {"accepted": True}
        assert [f.type for f in frames].count("view") == 1
    else:
        assert "4.41 is not a number a data tool returned in this answer" in results[1]["error"]
        assert [f.type for f in frames].count("view") == 0


# ---- the offline answerer writes by the template the tool names ----------------------------------

def test_the_offline_answer_is_written_by_the_template_a_tool_names():
    run = {"run_id": "run-a", "model": "birch-pro", "context": "none", "outcome": "completed"}
    templates = {"slowest_runs": OfflineTemplate.RUN_LIST}
    as_run_list = compose("slowest runs", [("slowest_runs", {"filter": {}, "runs": [run]}, False)], templates)
    as_list_runs = compose("slowest runs", [("list_runs", {"filter": {}, "runs": [run]}, False)])
    # The same template wrote both (its words still name the tool it was written for).
    assert as_run_list == as_list_runs
    assert as_run_list.startswith("The latest runs") and "run-a: birch-pro" in as_run_list
    assert compose("q", [("slowest_runs", {"x": 1}, False)], {"slowest_runs": OfflineTemplate.GENERIC}) == '{"x": 1}'


def test_a_tool_the_offline_answerer_has_no_template_for_is_an_error_not_a_generic_line():
    with pytest.raises(NoTemplate, match="no offline template for tool 'slowest_run'"):
        compose("q", [("slowest_run", {"runs": []}, False)])
    with pytest.raises(NoTemplate):
        compose_view([("slowest_run", {"by_context": []}, False)])


# ---- the page draws a tool by the drawer the server names ----------------------------------------

@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_page_picks_a_tools_drawer_from_the_map_it_was_served():
    served = json.dumps({**page_drawers(), "slowest_runs": "run-list", "odd": "no-such-drawer"})
    probe = f"""
var served = {json.dumps(served)};
var window = {{}};
var document = {{ getElementById: (id) => (id === "tool-drawers" ? {{ textContent: served }} : null) }};
window.document = document;
""" + page_script() + """
const { DRAWERS, drawerFor } = window.GroundchatTranscript;
const name = (drawer) => Object.keys(DRAWERS).find((key) => DRAWERS[key] === drawer);
console.log(JSON.stringify({
  slowest: name(drawerFor("slowest_runs")),
  listRuns: name(drawerFor("list_runs")),
  view: name(drawerFor("show_view")),
  unknownTool: name(drawerFor("never_registered")),
  unknownDrawer: name(drawerFor("odd")),
  summary: drawerFor("slowest_runs").summary({ runs: [{}, {}], more: true }),
}));"""
    out = subprocess.run(["node", "-e", probe], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == {"slowest": "run-list", "listRuns": "run-list", "view": "view",
                               "unknownTool": "plain", "unknownDrawer": "plain", "summary": "2 runs, more match"}
