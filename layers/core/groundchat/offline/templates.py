"""Templates the offline answerer fills from tool results. Every figure is copied from a result."""
from __future__ import annotations

import re
from typing import Callable, Mapping

from groundchat.json_shapes import JsonObject, JsonValue
from groundchat.offline.search_answers import cited_answer, shorten as _shorten, why_it_matters
from groundchat.tools.facts import OfflineTemplate

# One tool's outcome in the turn being answered: its name, its result (parsed JSON, or the text
# when it is not JSON) and whether it was an error.
ToolOutcome = tuple[str, JsonValue, bool]


class NoTemplate(LookupError):
    """A tool result whose tool names no template the offline answerer has."""


def template_for(name: str, templates: Mapping[str, OfflineTemplate] | None = None) -> OfflineTemplate:
    """The template a tool names for its result (`Tool.offline_template`): from `templates`, else
    from the build's catalog. A tool it does not know is an error, never the generic line."""
    if templates is None:
        from groundchat.tools.catalog import offline_templates

        templates = offline_templates()
    try:
        return templates[name]
    except KeyError:
        raise NoTemplate(f"no offline template for tool {name!r}: the tool names it (offline_template) "
                         "and is listed in tools/catalog.py") from None


def compose(question: str, results: list[ToolOutcome], templates: Mapping[str, OfflineTemplate] | None = None) -> str:
    if not results:
        return "I have no tool that can answer this question for you."
    parts = _refused_refs(question, results)
    for name, value, is_error in results:
        template = template_for(name, templates)
        if template is OfflineTemplate.VIEW:  # the view speaks for itself; the text answer stays the same
            continue
        if is_error or (isinstance(value, str) and value.startswith("error:")):
            parts.append(f"The tool `{name}` could not answer: {str(value).removeprefix('error: ')}")
            continue
        if value == "(no result)":
            parts.append(f"The tool `{name}` returned no result.")
            continue
        parts.append(TEMPLATES[template](value, question))
    return "\n\n".join(p for p in parts if p)


def _refused_refs(question: str, results: list[ToolOutcome]) -> list[str]:
    """A ref the question asks for that no tool returned is refused, never cited."""
    from groundchat.grounding.citations import CITATION, refs_in_results

    returned = refs_in_results({"result": value} for _, value, _ in results)
    asked = [ref for ref in dict.fromkeys(CITATION.findall(question.lower())) if ref not in returned]
    if not asked:
        return []
    listed = ", ".join(f"[{ref}]" for ref in list(returned)[:5])
    offer = f" The sources I can cite for this question are {listed}." if listed else ""
    return [f"I cannot cite {', '.join(f'[{r}]' for r in asked)}: no tool returned a source with that ref, "
            f"so I will not quote it.{offer}"]


def _rows(value: JsonValue, *keys: str) -> list[JsonObject]:
    if isinstance(value, list):
        return [r for r in value if isinstance(r, dict)]
    if isinstance(value, dict):
        for key in keys:
            if isinstance(value.get(key), list):
                return [r for r in value[key] if isinstance(r, dict)]
    return []


def _under(value: JsonValue) -> str:
    """The filter a data tool applied, in words ("for model cedar-mini, task checkout-flow"), so the
    reader sees how the question was read."""
    applied = value.get("filter") if isinstance(value, dict) else None
    if not isinstance(applied, dict) or not applied:
        return ""
    return " for " + ", ".join(f"{facet} {name}" for facet, name in applied.items())


def _percent(fraction: JsonValue) -> str:
    try:
        return f"{float(fraction) * 100:.1f}%"
    except (TypeError, ValueError):
        return str(fraction)


# Asked for the cheap end ("cheapest", "best value"), not only what something costs.
_ASKS_CHEAP = re.compile(r"cheap|inexpensive|least expensive|lowest (?:cost|price)|budget|value|worth|afford|save money", re.I)
_ASKS_MODEL = re.compile(r"\bmodels?\b", re.I)
# Asked what the runs cost together, not per run.
_ASKS_TOTAL = re.compile(r"\btotal|\bspen[dt]\w*|\bin all\b|altogether|all together|\bsum\b|add(?:s|ed)? up|"
                         r"how much (?:did|have|has) .{0,40}\bcost\b", re.I)
_ASKS_OUTCOMES = re.compile(r"\bfail(?:s|ed|ures?)?\b|\btim(?:e|ed|es)[ -]?outs?\b|\btimed out\b|\bcomplet(?:ed|e|ion)\b", re.I)


def _row_line(r: JsonObject) -> str:
    return (f"{r.get('model')} with '{r.get('context')}' at {r.get('mean_cost_text')} per run "
            f"({r.get('mean_violations')} violations per run, completion {_percent(r.get('completion_rate'))})")


def _outcomes(rows: list[JsonObject], question: str) -> list[str]:
    """How the runs ended, when the question asks about failed, timed-out or completed runs."""
    if not rows or not _ASKS_OUTCOMES.search(question):
        return []
    return ["How the runs ended (from compare_contexts):"] + [
        f"- {r.get('model')} · {r.get('context')}: {r.get('completed')} completed, {r.get('failed')} failed, "
        f"{r.get('timeout')} timed out, of {r.get('runs')} runs" for r in rows]


def _asked_leads(rows: list[JsonObject], question: str) -> list[str]:
    """What the question asks for first: the cheapest row when it asks about cost, each model's
    best row when it asks about models. Rows are picked, never computed: their figures are copied."""
    graded = [r for r in rows if r.get("mean_violations") is not None]
    lines = []
    if graded and _ASKS_CHEAP.search(question):
        lines.append(f"Cheapest per run: {_row_line(min(graded, key=lambda r: float(r.get('mean_cost') or 0)))}.")
    if graded and _ASKS_MODEL.search(question):
        lines.append("Each model at its fewest violations (from compare_contexts):")
        best: dict[str, JsonObject] = {}
        for r in graded:
            held = best.get(str(r.get("model")))
            if held is None or float(r.get("mean_violations") or 0) < float(held.get("mean_violations") or 0):
                best[str(r.get("model"))] = r
        lines.extend(f"- {_row_line(r)}" for r in sorted(best.values(), key=lambda r: float(r.get("mean_cost") or 0)))
    return lines


def _totals(value: JsonValue, by_context: list[JsonObject], question: str) -> list[str]:
    """What the runs cost together, when that is asked: the tool's total and each context's."""
    if not isinstance(value, dict) or not value.get("total_cost_text") or not _ASKS_TOTAL.search(question):
        return []
    lines = [f"Spent in all{_under(value)}: {value['total_cost_text']} over {value.get('total_runs')} runs "
             f"(from compare_contexts)."]
    lines += [f"- {r.get('context')}: {r.get('total_cost_text')} over {r.get('runs')} runs" for r in by_context]
    return lines


def _compare_contexts(value: JsonValue, question: str) -> str:
    by_context = _rows(value, "by_context")
    rows = _rows(value, "rows")
    if not rows and not by_context:
        return "compare_contexts found no runs under this filter."
    lines = _totals(value, by_context, question) + _outcomes(by_context if by_context and len(rows) > 8 else rows, question)
    lines += _asked_leads(rows, question)
    if by_context:
        best = min(by_context, key=lambda r: float(r.get("mean_violations") or 0))
        lines.append(f"Fewest violations per run: the '{best.get('context')}' context, with {best.get('mean_violations')} "
                     f"violations per graded run at {best.get('mean_cost_text')} per run "
                     f"(completion {_percent(best.get('completion_rate'))}, {best.get('runs')} runs).")
        lines.append(f"By context level{_under(value) or ', over every model'} (from compare_contexts):")
        for r in by_context:
            lines.append(f"- {r.get('context')}: {r.get('mean_violations')} violations per run, {r.get('mean_cost_text')} per run, "
                         f"completion {_percent(r.get('completion_rate'))} ({r.get('runs')} runs)")
    if rows:
        best = min(rows, key=lambda r: float(r.get("mean_violations") or 0))
        lines.append(f"Best single model and context: {best.get('model')} with '{best.get('context')}' "
                     f"({best.get('mean_violations')} violations per run at {best.get('mean_cost_text')} per run).")
        if not by_context or len(rows) <= 8:
            lines.append("By model and context (from compare_contexts):")
            for r in rows:
                lines.append(f"- {r.get('model')} · {r.get('context')}: {r.get('mean_violations')} violations per run, "
                             f"{r.get('mean_cost_text')} per run, completion {_percent(r.get('completion_rate'))} ({r.get('runs')} runs)")
    return "\n".join(lines)


def compose_view(results: list[ToolOutcome], templates: Mapping[str, OfflineTemplate] | None = None) -> JsonObject | None:
    """A view of compare_contexts' per-context figures, copied from its result; None if there is
    nothing to show. The form lets the reader open the runs of one context."""
    value = next((v for name, v, is_error in results
                  if template_for(name, templates) is OfflineTemplate.CONTEXTS and not is_error), None)
    by_context = _rows(value, "by_context")
    if not by_context:
        return None
    rows = [[r.get("context"), r.get("runs"), _percent(r.get("completion_rate")), r.get("mean_violations"),
             r.get("mean_cost_text")] for r in by_context]
    contexts = [r.get("context") for r in by_context if r.get("context")]
    return {
        "title": "Context levels compared",
        "parts": [
            {"type": "table", "caption": "By context level, over every model (from compare_contexts)",
             "columns": ["Context", "Runs", "Completion", "Violations per run", "Cost per run"], "rows": rows},
            {"type": "form", "action": "open-runs", "title": "Open the runs of one context level", "submit_label": "Open runs",
             "fields": [{"name": "context", "label": "Context level",
                         "options": [{"label": c, "value": c} for c in contexts]}]},
        ],
    }


def _top_rules(value: JsonValue) -> str:
    rows = _rows(value, "rules", "rows")
    if not rows:
        return "top_rules found no violations under this filter."
    graded = value.get("graded_runs") if isinstance(value, dict) else None
    lines = [f"The rules broken most often{_under(value)} (from top_rules, over {graded} graded runs):" if graded else
             f"The rules broken most often{_under(value)} (from top_rules):"]
    for r in rows:
        wcag = f"WCAG {', '.join(r['wcag'])}" if r.get("wcag") else "no WCAG criterion (best practice)"
        lines.append(f"- {r.get('rule_id')} ({r.get('impact')}): broken in {r.get('count')} runs "
                     f"({_percent(r.get('share_of_graded_runs'))}), {r.get('nodes')} elements; {wcag}")
    return "\n".join(lines)


# How the runs of a list by outcome ended, in words: "The latest runs that timed out, model birch-pro".
_ENDED = {"completed": "that completed", "failed": "that failed", "timeout": "that timed out"}


# A list by violation count says its order: only graded runs are in it.
_ORDERED = {"most_violations": "most", "fewest_violations": "fewest"}


def _list_runs(value: JsonValue) -> str:
    rows = _rows(value, "runs", "rows")
    order = _ORDERED.get(str(value.get("order", ""))) if isinstance(value, dict) else None
    if order:
        if not rows:
            return "list_runs found no graded runs under this filter."
        lines = [f"The graded runs{_under(value)}, {order} violations first (from list_runs):"]
        for r in rows:
            lines.append(f"- {r.get('run_id')}: {r.get('violation_count')} violations, {r.get('node_count')} failing "
                         f"elements; {r.get('model')} · {r.get('context')} · {r.get('task')}, {r.get('cost_text')}")
        return "\n".join(lines)
    applied = dict(value.get("filter") or {}) if isinstance(value, dict) and isinstance(value.get("filter"), dict) else {}
    ended = _ENDED.get(str(applied.pop("outcome", "")))
    if ended:
        others = ", ".join(f"{facet} {name}" for facet, name in applied.items())
        runs = f"runs {ended}" + (f", {others}" if others else "")
        if not rows:
            return f"list_runs found no {runs}."
        lines = [f"The latest {runs} (from list_runs):"]
    elif not rows:
        return "list_runs found no runs under this filter."
    else:
        lines = [f"The latest runs{_under(value)} (from list_runs):"]
    for r in rows:
        lines.append(f"- {r.get('run_id')}: {r.get('model')} · {r.get('context')} · {r.get('task')}, "
                     f"{r.get('outcome')}, {r.get('violation_count')} violations, {r.get('cost_text')}")
    return "\n".join(lines)


def _get_run(value: JsonValue) -> str:
    if not isinstance(value, dict):
        return _generic(value)
    run = value.get("run", value)
    lines = [f"Run {run.get('run_id', run.get('id'))}: {run.get('model')} with context '{run.get('context')}' on task "
             f"{run.get('task')}: {run.get('outcome')}, cost {run.get('cost_text')}."]
    for v in _rows(run, "violations", "broken_rules")[:5]:
        lines.append(f"- {v.get('rule_id')} ({v.get('impact')}): {v.get('node_count')} elements")
    return "\n".join(lines)


def _explain_rule(value: JsonValue, question: str = "") -> str:
    if not isinstance(value, dict):
        return _generic(value)
    rule = value.get("rule_id")
    criteria = value.get("criteria") or []
    if not criteria:
        return f"The axe rule {rule} is a best practice: it maps to no WCAG criterion."
    lines = why_it_matters(question, [c.get("why") for c in _rows(value, "criteria")])
    lines.append(f"The axe rule {rule} checks WCAG 2.2:")
    for c in criteria:
        ref = f" [{c['ref']}]" if c.get("ref") else ""
        lines.append(f"- {c.get('number')} {c.get('handle')} (Level {c.get('level')}), {c.get('url')}{ref}")
        text = " ".join(str(c.get("text") or "").split())
        if text:
            lines.append(f"  It says: {_shorten(text, 400)}{ref}")
    return "\n".join(lines)


def _search_docs(value: JsonValue, question: str = "") -> str:
    if not isinstance(value, dict):
        return _generic(value)
    outcome = value.get("outcome")
    if outcome == "unavailable":
        return f"I could not look this up: the document search is unavailable ({value.get('reason')}). That is not a 'no'."
    passages = _rows(value, "excerpts", "passages", "hits")
    if outcome == "empty" or not passages:
        return "The document search found nothing for this question."
    return cited_answer(question, passages)


def _search_my_conversations(value: JsonValue) -> str:
    if not isinstance(value, dict):
        return _generic(value)
    hits = _rows(value, "excerpts")
    if value.get("outcome") == "unavailable":
        return "I could not search your earlier conversations just now. That is not a 'no'."
    if not hits:
        return "I found nothing about this in your earlier conversations."
    lines = ["From your earlier conversations:"]
    for h in hits[:3]:
        lines.append(f"- You asked \"{_shorten(str(h.get('title', '')), 160)}\" ({h.get('url')}): "
                     f"{_shorten(' '.join(str(h.get('text', '')).split()), 240)} [{h.get('ref')}]")
    return "\n".join(lines)


def _generic(value: JsonValue) -> str:
    import json

    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) < 1500 else text[:1500] + " …"


def _from_result(template: Callable[[JsonValue], str]) -> Callable[[JsonValue, str], str]:
    """A template that writes from the result alone, whatever was asked."""
    return lambda value, question: template(value)


def _nothing(value: JsonValue, question: str) -> str:
    """A view speaks for itself: the text answer stays the same with it or without it."""
    return ""


# By template (tools/facts.py `OfflineTemplate`), never by tool name: a tool names its template.
# Three read the question too: the contexts' answer leads with what was asked, the excerpts' with the
# sentence of the best passage that answers it, the rule's with why its criterion matters when asked why.
TEMPLATES: dict[OfflineTemplate, Callable[[JsonValue, str], str]] = {
    OfflineTemplate.CONTEXTS: _compare_contexts,
    OfflineTemplate.EXCERPTS: _search_docs,
    OfflineTemplate.RULE_COUNTS: _from_result(_top_rules),
    OfflineTemplate.RUN_LIST: _from_result(_list_runs),
    OfflineTemplate.RUN: _from_result(_get_run),
    OfflineTemplate.RULE: _explain_rule,
    OfflineTemplate.PAST_EXCHANGES: _from_result(_search_my_conversations),
    OfflineTemplate.VIEW: _nothing,
    OfflineTemplate.GENERIC: _from_result(_generic),
}
