"""show_view through the loop, on the sample runs: accepted views are shown and committed, refused
ones come back with what to fix, and two refusals end in words."""
import re
from decimal import Decimal

import pytest

from groundchat.auth.callers import ALL_PERMISSIONS, Caller, VIEWS_SHOW
from groundchat_testkit.scripted import ScriptedModel, Step
from groundchat.tools.base import ToolRegistry
from groundchat.tools.catalog import all_tools
from groundchat.grounding.view_numbers import returned_numbers


@pytest.fixture
async def figures(sample):
    """compare_contexts on the sample, as the loop will see it (the same query, the same data)."""

    async def allow(permission, caller):
        return True

    return await ToolRegistry(all_tools(), allow).execute("compare_contexts", {}, sample.tool_context(Caller(id="u")))


def table_view(rows, columns=("Context", "Violations per run"), form=None):
    parts = [{"type": "table", "caption": "By context", "columns": list(columns), "rows": rows}]
    return {"title": "Context levels", "parts": parts + ([form] if form else [])}


def script(*views, text="In words."):
    return ScriptedModel([Step(tool_calls=[("compare_contexts", {})]), *[Step(tool_calls=[("show_view", v)]) for v in views], Step(text=text)])


async def test_a_grounded_view_is_accepted_shown_after_its_result_and_committed(ask, sample, figures):
    none = figures["by_context"][0]
    view = table_view([[none["context"], none["mean_violations"], none["mean_cost_text"]]],
                      columns=("Context", "Violations per run", "Cost per run"))
    answer = await ask(script(view))
    assert answer.results("show_view")[0]["result"] == {"accepted": True}
    types = [f.type for f in answer.frames]
    assert types[types.index("tool-result", types.index("tool-call", types.index("tool-call") + 1)) + 1] == "view"
    shown = answer.of("view")[0]
    assert shown["parts"][0]["rows"] == [[none["context"], none["mean_violations"], none["mean_cost_text"]]]
    assert answer.exchange.annotations["views"] == [shown]
    assert answer.frames[-1].data["reason"] == "complete"
    stored = await sample.conversations.read_items(answer.conversation_id)
    import json

    last_answer = [i for i in stored if i["role"] == "assistant"][-1]
    assert json.loads(last_answer["annotations"])["views"] == [shown]


async def test_an_invented_number_is_refused_with_where_it_is(ask, figures):
    none = figures["by_context"][0]
    answer = await ask(script(table_view([[none["context"], 1234.5]])))
    error = answer.results("show_view")[0]["error"]
    assert "parts[0] (table).rows[0][1]: 1234.5 is not a number a data tool returned in this answer" in error
    assert answer.of("view") == []
    assert "views" not in answer.exchange.annotations


async def test_a_sum_of_two_returned_numbers_is_refused(ask, figures):
    a, b = figures["by_context"][0], figures["by_context"][1]
    total = round(a["mean_violations"] + b["mean_violations"], 2)
    assert Decimal(str(total)) not in returned_numbers([{"name": "compare_contexts", "grounding": "figures", "result": figures}])
    answer = await ask(script(table_view([["none + checklist", total]])))
    assert f"rows[0][1]: {total!r} is not a number" in answer.results("show_view")[0]["error"]


async def test_a_percentage_of_a_returned_fraction_is_accepted(ask, figures):
    rate = figures["by_context"][0]["completion_rate"]  # e.g. 0.8833
    pct_1 = f"{rate * 100:.1f}%"
    pct_0 = f"{rate * 100:.0f}%"
    view = {"title": "Completion", "parts": [
        {"type": "stats", "items": [{"label": "Completion, none", "value": pct_1},
                                    {"label": "Completion, rounded", "value": int(pct_0[:-1]), "unit": "%"}]},
        {"type": "bar_chart", "title": "Completion by context", "unit": "%",
         "bars": [{"label": r["context"], "value": round(r["completion_rate"] * 100, 1)} for r in figures["by_context"]]},
    ]}
    answer = await ask(script(view))
    assert answer.results("show_view")[0]["result"] == {"accepted": True}
    # The same figure without the percent sign is a number no tool returned.
    answer = await ask(script({"title": "Completion", "parts": [
        {"type": "stats", "items": [{"label": "Completion, none", "value": float(pct_1[:-1])}]}]}))
    assert "items[0].value" in answer.results("show_view")[0]["error"]


async def test_a_number_rounded_to_the_places_shown_is_accepted(ask, figures):
    none = figures["by_context"][0]
    cost = Decimal(none["mean_cost"])  # e.g. "0.02949117"
    shown = f"${cost.quantize(Decimal('0.001'))}"
    view = table_view([[none["context"], round(none["mean_violations"], 1), shown]], columns=("Context", "Violations", "Cost"))
    answer = await ask(script(view))
    assert answer.results("show_view")[0]["result"] == {"accepted": True}
    assert answer.of("view")[0]["parts"][0]["rows"][0][2] == shown


async def test_schema_problems_are_listed_with_their_place(ask, figures):
    view = {"title": "Broken", "colour": "red", "parts": [
        {"type": "table", "caption": "x", "columns": ["A", "B"], "rows": [["only one cell"]]},
        {"type": "pie", "slices": []},
        {"type": "alert", "level": "loud", "text": "careful"},
    ]}
    answer = await ask(script(view))
    error = answer.results("show_view")[0]["error"]
    assert "colour: unknown key (not in the catalog)" in error
    assert "parts[0].table: Value error, rows[0] has 1 cells but the table has 2 columns" in error
    assert "parts[1]: Input tag 'pie' found using 'type' does not match any of the expected tags" in error
    assert "parts[2].alert.level: Input should be 'info', 'warning' or 'error'" in error
    assert answer.of("view") == []


async def test_after_the_second_refusal_the_model_is_told_to_answer_in_words(ask, figures):
    bad = table_view([["none", 999.25]])
    good = table_view([[figures["by_context"][0]["context"], figures["by_context"][0]["mean_violations"]]])
    answer = await ask(script(bad, bad, good))
    first, second, third = (r["error"] for r in answer.results("show_view"))
    assert "Fix these and call show_view again" in first
    assert "That was the last try: answer in words instead." in second
    assert third == "view refused: 2 views were already refused in this answer; answer in words instead."
    assert answer.of("view") == []
    assert answer.frames[-1].data["reason"] == "complete"


async def test_a_form_must_name_a_registered_action_and_its_fields(ask, figures):
    context = figures["by_context"][0]["context"]
    option = [{"label": context, "value": context}]
    unknown = table_view([[context, figures["by_context"][0]["mean_violations"]]],
                         form={"type": "form", "action": "delete-runs", "fields": [{"name": "context", "label": "Context", "options": option}]})
    wrong_field = table_view([[context, figures["by_context"][0]["mean_violations"]]],
                             form={"type": "form", "action": "open-runs", "fields": [
                                 {"name": "url", "label": "Address", "options": [{"label": "x", "value": "/chat/runs?context=none"}]},
                                 {"name": "context", "label": "Context", "options": [{"label": "made up", "value": "everything"}]}]})
    answer = await ask(script(unknown, wrong_field))
    first, second = (r["error"] for r in answer.results("show_view"))
    assert "parts[1] (form).action: 'delete-runs' is not a registered action; use one of: open-runs, compare-runs" in first
    assert "parts[1] (form).fields[0].name: 'url' is not a field of open-runs; its fields are: model, context, task, label" in second
    assert "parts[1] (form).fields[1].options[0].value: 'everything' is not a context a data tool returned in this answer" in second


async def test_a_form_with_returned_values_is_accepted(ask, figures):
    contexts = [r["context"] for r in figures["by_context"]]
    view = table_view([[contexts[0], figures["by_context"][0]["mean_violations"]]],
                      form={"type": "form", "action": "open-runs", "fields": [{"name": "context", "label": "Context", "values": contexts}]})
    answer = await ask(script(view))
    form = answer.of("view")[0]["parts"][-1]
    assert form["action"] == "open-runs"
    assert [o["value"] for o in form["fields"][0]["options"]] == contexts


async def test_show_view_is_not_offered_without_views_show(ask):
    model = ScriptedModel([Step(tool_calls=[("show_view", table_view([["none", 1]]))]), Step(text="ok")])
    answer = await ask(model, grants=[p for p in ALL_PERMISSIONS if p != VIEWS_SHOW])
    assert "show_view" not in [t.name for t in model.requests[0].tools]
    assert "compare_contexts" in [t.name for t in model.requests[0].tools]
    assert answer.results("show_view")[0]["error"] == "tool 'show_view' is not available to this caller"
    assert answer.of("view") == []


async def test_compare_runs_takes_two_run_ids_a_data_tool_returned(ask):
    async def allow(permission, caller):
        return True

    view = lambda run_ids: {"title": "Two runs", "parts": [{"type": "form", "action": "compare-runs", "fields": [
        {"name": "run_a", "label": "First run", "values": run_ids[:1]},
        {"name": "run_b", "label": "Second run", "values": run_ids[1:2]}]}]}
    first = await ask(ScriptedModel([Step(tool_calls=[("list_runs", {"limit": 2})]), Step(tool_calls=[("show_view", view(["?"]))]), Step(text="x")]))
    run_ids = [r["run_id"] for r in first.results("list_runs")[0]["result"]["runs"]]
    assert "options[0].value: '?' is not a run_id a data tool returned in this answer" in first.results("show_view")[0]["error"]
    answer = await ask(ScriptedModel([Step(tool_calls=[("list_runs", {"limit": 2})]), Step(tool_calls=[("show_view", view(run_ids))]), Step(text="x")]))
    assert answer.results("show_view")[0]["result"] == {"accepted": True}
    fields = answer.of("view")[0]["parts"][0]["fields"]
    assert [f["options"][0]["value"] for f in fields] == run_ids


def test_the_model_is_offered_the_catalog_described_once_and_the_check_still_holds_in_full():
    import json

    from groundchat.tools.view_tool import show_view
    from groundchat.views.catalog import PART_TYPES, View

    schema = show_view.spec().input_schema
    assert len(json.dumps(schema)) < 1000  # the generated schema is over 3,500 characters
    assert schema["properties"]["parts"]["items"]["properties"]["type"]["enum"] == list(PART_TYPES)
    described = schema["properties"]["parts"]["description"]
    assert all(re.search(rf"\b{part}\b", described) for part in PART_TYPES)
    # Every part the catalog holds is named; the full model still refuses what the summary omits.
    assert set(View.model_json_schema()["$defs"]) >= {"Stats", "Table", "Alert", "BarChart", "Form"}