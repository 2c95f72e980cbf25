"""What a form in a view may run. The model names an action and fills its fields from options;
the page builds the address from the registry below, so the model never writes one.

The page's copy of this registry (VIEW_ACTIONS in functions/pages/page_assets/transcript.js) is tested to match
`page_registry()`: embedded, so the live chat and the shared pages need no extra request.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable
from urllib.parse import urlencode

from groundchat.benchmark.runs import ALL_MODELS
from groundchat.grounding.view_numbers import FIGURES
from groundchat.grounding.result_walk import result_nodes
from groundchat.json_shapes import as_list

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject

RUN_LIST_PATH = "/chat/runs"


@dataclass(frozen=True)
class ActionField:
    name: str
    param: str  # the query parameter the page sets
    source: str  # the key in data-tool results whose values are the valid options
    required: bool = False


@dataclass(frozen=True)
class Action:
    name: str
    path: str
    description: str
    fields: tuple[ActionField, ...]

    def field(self, name: str) -> ActionField | None:
        return next((f for f in self.fields if f.name == name), None)


ACTIONS: dict[str, Action] = {
    a.name: a
    for a in (
        Action(
            name="open-runs",
            path=RUN_LIST_PATH,
            description="the run list filtered by model, context, task or label",
            fields=tuple(ActionField(n, n, n) for n in ("model", "context", "task", "label")),
        ),
        Action(
            name="compare-runs",
            path=RUN_LIST_PATH,
            description="two runs side by side",
            fields=(ActionField("run_a", "run", "run_id", required=True),
                    ActionField("run_b", "compare", "run_id", required=True)),
        ),
    )
}


def page_registry() -> JsonObject:
    """What the page needs to build an address: the path, and each field's query parameter."""
    return {a.name: {"path": a.path, "params": {f.name: f.param for f in a.fields}} for a in ACTIONS.values()}


def build_address(action_name: str, values: dict[str, str]) -> str:
    """The address a submitted form opens (the page does the same in JavaScript)."""
    action = ACTIONS[action_name]
    query = {f.param: values[f.name] for f in action.fields if values.get(f.name)}
    return f"{action.path}?{urlencode(query)}" if query else action.path


def returned_values(tool_results: Iterable[JsonObject]) -> dict[str, set[str]]:
    """The names data tools returned in this answer, by key (model, context, task, label, run_id)."""
    keys = {f.source for a in ACTIONS.values() for f in a.fields}
    found: dict[str, set[str]] = {k: set() for k in keys}

    for key, value in result_nodes(tool_results, FIGURES):
        # "all models" labels an aggregate row; it is not a model the run list can filter by.
        if key in found and isinstance(value, str) and value and value != ALL_MODELS:
            found[key].add(value)
    return found


def form_problems(form: JsonObject, where: str, valid: dict[str, set[str]]) -> list[str]:
    """What is wrong with a form's action, field names and option values; empty if nothing."""
    action = ACTIONS.get(str(form.get("action")))
    if action is None:
        return [f"{where}.action: {form.get('action')!r} is not a registered action; use one of: {', '.join(ACTIONS)}"]
    problems: list[str] = []
    fields = [f for f in as_list(form.get("fields")) if isinstance(f, dict)]
    names = [f.get("name") for f in fields]
    for i, field in enumerate(fields):
        spec = action.field(str(field.get("name")))
        at = f"{where}.fields[{i}]"
        if spec is None:
            problems.append(f"{at}.name: {field.get('name')!r} is not a field of {action.name}; its fields are: "
                            f"{', '.join(f.name for f in action.fields)}")
            continue
        if names.count(spec.name) > 1 and names.index(spec.name) != i:
            problems.append(f"{at}.name: {spec.name!r} appears twice")
            continue
        for j, option in enumerate(as_list(field.get("options") or field.get("values"))):
            value = option.get("value") if isinstance(option, dict) else option
            if value == "" and not spec.required:
                continue  # "any": the field is left out of the address
            if value not in valid.get(spec.source, set()):
                shown = sorted(valid.get(spec.source, set()))[:20]
                problems.append(f"{at}.options[{j}].value: {value!r} is not a {spec.source} a data tool returned in this answer"
                                + (f"; returned: {', '.join(shown)}" if shown else f"; call a data tool that returns {spec.source} values first"))
    for spec in action.fields:
        if spec.required and spec.name not in names:
            problems.append(f"{where}.fields: {action.name} needs a field named {spec.name!r}")
    return problems
