"""The data tools: named queries over the benchmark's runs, and the exact axe rule → WCAG lookup.

Every figure a tool returns comes from one named query (store/runs.py); the model fills in
parameters and never writes a query. Every cost has a `*_text` twin from `cost_text`, and every
model, context, run and rule carries a link to the run list filtered to it, so an answer can
point the reader at the runs behind a number.
"""
from __future__ import annotations

import asyncio
import inspect
from datetime import datetime
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

from pydantic import BaseModel, ConfigDict, Field, field_validator

from groundchat.auth.callers import DOCS_READ, RUNS_READ
from groundchat.spending.prices import cost_text
from groundchat.benchmark.runs import FILTER_FIELDS, RunFilter, RunSummary
from groundchat.tools.base import Tool, ToolContext, ToolError, define_tool

RUN_LIST_PATH = "/chat/runs"
MAX_LIST = 100
MAX_TOP_RULES = 50
_CRITERION_TEXT_CHARS = 1200


class RunLinks:
    """Addresses of the run list page; the app may put its own (same methods) in ctx.links."""

    def __init__(self, base: str = RUN_LIST_PATH) -> None:
        self.base = base

    def run_list(self, **params: str | None) -> str:
        query = {k: v for k, v in params.items() if v is not None}
        return f"{self.base}?{urlencode(query)}" if query else self.base

    def run(self, run_id: str) -> str:
        return self.run_list(run=run_id)


def _links(ctx: ToolContext) -> Any:
    return ctx.links if ctx.links is not None and hasattr(ctx.links, "run_list") else RunLinks()


# ---- inputs ------------------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class FilterArgs(_Strict):
    model: str | None = Field(default=None, description="a model name, exactly as the runs store it")
    context: str | None = Field(default=None, description="a context level, e.g. none, checklist, guidelines, guidelines-axe")
    task: str | None = Field(default=None, description="a task name, e.g. signup-form")
    label: str | None = Field(default=None, description="a batch label, e.g. round-1")

    @field_validator("model", "context", "task", "label")
    @classmethod
    def _empty_is_any(cls, value: str | None) -> str | None:
        return value or None

    def to_filter(self) -> RunFilter:
        return RunFilter(**{name: getattr(self, name) for name in FILTER_FIELDS})


class ListRunsArgs(FilterArgs):
    rule: str | None = Field(default=None, description="only runs that broke this axe rule id")
    limit: int = Field(default=20, ge=1, le=MAX_LIST)

    def to_filter(self) -> RunFilter:
        return RunFilter(**super().to_filter().model_dump(exclude={"rule"}), rule=self.rule or None)


class TopRulesArgs(FilterArgs):
    limit: int = Field(default=10, ge=1, le=MAX_TOP_RULES)


class GetRunArgs(_Strict):
    run_id: str = Field(min_length=1, max_length=128)


class ExplainRuleArgs(_Strict):
    rule_id: str = Field(min_length=1, max_length=100, description="an axe-core rule id, e.g. color-contrast")


# ---- outputs -----------------------------------------------------------------------------------


class Links(BaseModel):
    model: str
    context: str


class ContextRow(BaseModel):
    model: str
    context: str
    runs: int
    completed: int
    failed: int
    timeout: int
    completion_rate: float = Field(description="completed / runs")
    graded_runs: int = Field(description="runs axe checked (completed runs with a result)")
    mean_violations: float | None = Field(description="axe violations per graded run")
    mean_cost: Decimal = Field(description="USD per run, every run counted")
    mean_cost_text: str
    total_cost: Decimal
    total_cost_text: str
    link: str = Field(description="runs of this model at this context level")
    links: Links


class CompareContextsResult(BaseModel):
    filter: dict[str, str]
    total_runs: int
    by_context: list[ContextRow] = Field(description="per context level over every model the filter admits")
    rows: list[ContextRow] = Field(description="per model and context level")
    note: str = "mean_violations counts axe violations (rules failed) per graded run; failed and timed-out runs have no page to grade but their cost counts."


class RunRow(BaseModel):
    run_id: str
    link: str
    model: str
    model_link: str
    context: str
    context_link: str
    task: str
    label: str
    started_at: datetime
    outcome: str
    graded: bool
    violation_count: int
    node_count: int
    cost: Decimal
    cost_text: str


class ListRunsResult(BaseModel):
    filter: dict[str, str]
    limit: int
    count: int
    more: bool = Field(description="more runs match than were returned")
    runs: list[RunRow]


class NodeOut(BaseModel):
    target: str
    html: str
    failure_summary: str


class ViolationOut(BaseModel):
    rule_id: str
    rule_link: str
    impact: str | None
    wcag_tags: list[str]
    node_count: int
    first_nodes: list[NodeOut]


class GetRunResult(RunRow):
    finished_at: datetime | None
    duration_seconds: Decimal | None
    tokens_in: int
    tokens_out: int
    axe_version: str | None
    violations: list[ViolationOut]


class RuleRow(BaseModel):
    rule_id: str
    impact: str | None
    count: int = Field(description="violations of this rule: graded runs whose page failed it")
    nodes: int = Field(description="failing elements, summed over those runs")
    share_of_graded_runs: float
    wcag: list[str] = Field(description="WCAG criteria its tags name; empty for a best practice")
    link: str = Field(description="the runs that broke it, under this tool's filter")


class TopRulesResult(BaseModel):
    filter: dict[str, str]
    graded_runs: int
    rules: list[RuleRow]


class CriterionOut(BaseModel):
    number: str
    handle: str
    level: str | None
    url: str
    obsolete: bool
    tag: str
    text: str | None = None
    ref: str | None = None
    # With a ref, the passage is citable: these name it the way search_docs excerpts do.
    source: str | None = None
    section: str | None = None
    title: str | None = None


class ExplainRuleResult(BaseModel):
    rule_id: str
    impact: str
    best_practice: bool
    wcag: str = Field(description="the criteria in words, or 'no WCAG criterion'")
    wcag_tags: list[str]
    criteria: list[CriterionOut]
    help_url: str
    axe_version: str
    link: str
    criterion_text: str = Field(description="'added', 'unavailable: <reason>' or 'not requested'")


# ---- helpers -----------------------------------------------------------------------------------


def _runs(ctx: ToolContext) -> Any:
    if ctx.runs is None:
        raise ToolError("the benchmark's runs are not available in this deployment")
    return ctx.runs


def _rules(ctx: ToolContext) -> Any:
    if ctx.rules is not None:
        return ctx.rules
    from groundchat.benchmark import axe_rules as rules

    return rules


async def _check_filter(ctx: ToolContext, flt: RunFilter) -> None:
    """An unknown value is an error naming the valid ones, not an empty answer the model could
    mistake for "none"."""
    wanted = flt.as_params()
    if not wanted:
        return
    facets = await _runs(ctx).facets()
    problems = []
    for name, value in wanted.items():
        valid = facets.get(name, [])
        if value not in valid:
            if name == "rule":
                problems.append(_rule_problem(ctx, value, valid))
            else:
                problems.append(f"unknown {name} {value!r}; valid values: {', '.join(valid) or '(no runs yet)'}")
    if problems:
        raise ToolError("; ".join(problems))


def _rule_problem(ctx: ToolContext, value: str, seen: list[str]) -> str:
    from groundchat.benchmark.axe_rules import UnknownRule

    try:
        _rules(ctx).explain(value)
    except UnknownRule as exc:
        return str(exc)
    return f"no run broke the axe rule {value!r}; rules broken in the stored runs: {', '.join(seen) or '(none)'}"


def _run_row(run: RunSummary, links: Any) -> RunRow:
    return RunRow(
        run_id=run.run_id,
        link=links.run(run.run_id),
        model=run.model,
        model_link=links.run_list(model=run.model),
        context=run.context,
        context_link=links.run_list(context=run.context),
        task=run.task,
        label=run.label,
        started_at=run.started_at,
        outcome=run.outcome,
        graded=run.graded,
        violation_count=run.violation_count,
        node_count=run.node_count,
        cost=run.cost_usd,
        cost_text=cost_text(run.cost_usd),
    )


# ---- tools -------------------------------------------------------------------------------------


@define_tool(
    name="compare_contexts",
    description=(
        "Per model and context level: runs, completion rate, mean axe violations per graded run, and "
        "mean cost per run (with cost_text). Optional filters: model, context, task, label. Use it for "
        "'which context level is best' and 'what does it cost'."
    ),
    input_model=FilterArgs,
    permission=RUNS_READ,
    output_model=CompareContextsResult,
)
async def compare_contexts(ctx: ToolContext, args: FilterArgs) -> CompareContextsResult:
    flt = args.to_filter()
    await _check_filter(ctx, flt)
    links = _links(ctx)
    rows, by_context = await _runs(ctx).overview_with_contexts(flt)
    base = flt.as_params()
    return CompareContextsResult(filter=base, total_runs=sum(r.runs for r in rows),
                                 by_context=_context_rows(by_context, base, links), rows=_context_rows(rows, base, links))


def _context_rows(rows: list[Any], base: dict[str, str], links: Any) -> list[ContextRow]:
    from groundchat.benchmark.runs import ALL_MODELS

    def list_link(r: Any) -> str:
        scope = {"context": r.context} if r.model == ALL_MODELS else {"model": r.model, "context": r.context}
        return links.run_list(**{**base, **scope})

    return [
        ContextRow(
            model=r.model,
            context=r.context,
            runs=r.runs,
            completed=r.completed,
            failed=r.failed,
            timeout=r.timeout,
            completion_rate=r.completion_rate,
            graded_runs=r.graded_runs,
            mean_violations=r.mean_violations,
            mean_cost=r.mean_cost_usd,
            mean_cost_text=cost_text(r.mean_cost_usd),
            total_cost=r.total_cost_usd,
            total_cost_text=cost_text(r.total_cost_usd),
            link=list_link(r),
            links=Links(model=links.run_list(**({} if r.model == ALL_MODELS else {"model": r.model})),
                        context=links.run_list(context=r.context)),
        )
        for r in rows
    ]


@define_tool(
    name="list_runs",
    description="The latest runs (newest first) matching a filter: model, context, task, label, or an axe rule they broke.",
    input_model=ListRunsArgs,
    permission=RUNS_READ,
    output_model=ListRunsResult,
)
async def list_runs(ctx: ToolContext, args: ListRunsArgs) -> ListRunsResult:
    flt = args.to_filter()
    await _check_filter(ctx, flt)
    runs, more = await _runs(ctx).list_runs(flt, limit=args.limit)
    links = _links(ctx)
    rows = [_run_row(r, links) for r in runs]
    return ListRunsResult(filter=flt.as_params(), limit=args.limit, count=len(rows), more=more, runs=rows)


@define_tool(
    name="get_run",
    description="One run by id: outcome, cost, tokens, and the axe rules it broke with their first failing elements.",
    input_model=GetRunArgs,
    permission=RUNS_READ,
    output_model=GetRunResult,
)
async def get_run(ctx: ToolContext, args: GetRunArgs) -> GetRunResult:
    run = await _runs(ctx).get_run(args.run_id)
    if run is None:
        raise ToolError(f"no run with id {args.run_id!r}; list_runs shows the ids that exist")
    links = _links(ctx)
    row = _run_row(run.summary(), links)
    violations = [
        ViolationOut(
            rule_id=v.rule_id,
            rule_link=links.run_list(rule=v.rule_id),
            impact=v.impact,
            wcag_tags=[t for t in v.tags if t.startswith("wcag")],
            node_count=v.node_count,
            first_nodes=[NodeOut(**n.model_dump()) for n in v.nodes],
        )
        for v in run.violations
    ]
    return GetRunResult(
        **row.model_dump(),
        finished_at=run.finished_at,
        duration_seconds=run.duration_seconds,
        tokens_in=run.tokens_in,
        tokens_out=run.tokens_out,
        axe_version=run.axe_version,
        violations=violations,
    )


@define_tool(
    name="top_rules",
    description=(
        "The axe rules broken most often, with counts (violations = graded runs that broke the rule, and "
        "failing elements), under an optional filter: model, context, task, label."
    ),
    input_model=TopRulesArgs,
    permission=RUNS_READ,
    output_model=TopRulesResult,
)
async def top_rules(ctx: ToolContext, args: TopRulesArgs) -> TopRulesResult:
    flt = args.to_filter()
    await _check_filter(ctx, flt)
    counts = await _runs(ctx).rule_counts(flt, limit=args.limit)
    links = _links(ctx)
    base = flt.as_params()
    rules = _rules(ctx)
    rows = []
    for rc in counts.rules:
        impact, wcag = _rule_facts(rules, rc.rule_id)
        rows.append(
            RuleRow(
                rule_id=rc.rule_id,
                impact=impact,
                count=rc.runs,
                nodes=rc.nodes,
                share_of_graded_runs=round(rc.runs / counts.graded_runs, 4) if counts.graded_runs else 0.0,
                wcag=wcag,
                link=links.run_list(**{**base, "rule": rc.rule_id}),
            )
        )
    return TopRulesResult(filter=base, graded_runs=counts.graded_runs, rules=rows)


def _rule_facts(rules: Any, rule_id: str) -> tuple[str | None, list[str]]:
    from groundchat.benchmark.axe_rules import UnknownRule

    try:
        facts = rules.explain(rule_id)
    except UnknownRule:  # a rule of another axe version, imported from real results
        return None, []
    return facts.impact, [c.number for c in facts.criteria]


@define_tool(
    name="explain_rule",
    description=(
        "The WCAG 2.2 success criterion behind an axe-core rule, exactly as the rule's tags name it: "
        "number, handle, level, URL, and the criterion's text with its ref where the document index has it. "
        "A best-practice rule says 'no WCAG criterion'."
    ),
    input_model=ExplainRuleArgs,
    permission=DOCS_READ,
    output_model=ExplainRuleResult,
)
async def explain_rule(ctx: ToolContext, args: ExplainRuleArgs) -> ExplainRuleResult:
    from groundchat.benchmark.axe_rules import NO_WCAG, UnknownRule

    try:
        facts = _rules(ctx).explain(args.rule_id)
    except UnknownRule as exc:
        raise ToolError(str(exc)) from exc
    criteria = [CriterionOut(**c.model_dump()) for c in facts.criteria]
    status = "not requested"
    if criteria and ctx.docs is not None:
        status = await _add_criterion_text(ctx.docs, criteria)
    if criteria:
        wcag = "; ".join(
            f"{c.number} {c.handle}" + (f" (Level {c.level})" if c.level else " (obsolete and removed in WCAG 2.2)")
            for c in criteria
        )
    else:
        wcag = NO_WCAG
    return ExplainRuleResult(
        rule_id=facts.rule_id,
        impact=facts.impact,
        best_practice=facts.best_practice,
        wcag=wcag,
        wcag_tags=facts.wcag_tags,
        criteria=criteria,
        help_url=facts.help_url,
        axe_version=facts.axe_version,
        link=_links(ctx).run_list(rule=facts.rule_id),
        criterion_text=status,
    )


async def _add_criterion_text(docs: Any, criteria: list[CriterionOut]) -> str:
    """The normative text and its ref from the document index. The mapping itself never depends
    on the index: if it cannot answer, the criteria stand and the status says why."""
    try:
        for c in criteria:
            found = await _criterion_passage(docs, c.number)
            if found is not None:
                text, ref = found
                c.text = text if len(text) <= _CRITERION_TEXT_CHARS else text[:_CRITERION_TEXT_CHARS].rstrip() + " …"
                c.ref = ref
                c.source, c.section, c.title = "wcag22", c.number, f"{c.number} {c.handle}"
    except Exception as exc:  # an index that is down or missing must not break the exact lookup
        return f"unavailable: {type(exc).__name__}"
    if any(c.text is None for c in criteria):
        return "unavailable: criterion not in the index"
    return "added"


async def _criterion_passage(docs: Any, number: str) -> tuple[str, str] | None:
    if hasattr(docs, "get_section"):  # exact lookup by section: the criterion number
        chunk = await _maybe_await(asyncio.to_thread(docs.get_section, "wcag22", number))
        if chunk is not None:
            return _field(chunk, "text"), _field(chunk, "ref")
        return None
    result = await _maybe_await(asyncio.to_thread(docs.search, number, k=5, sources=["wcag22"]))
    for passage in _field(result, "passages") or []:
        if _field(passage, "section") == number:
            return _field(passage, "text"), _field(passage, "ref")
    return None


async def _maybe_await(value: Any) -> Any:
    value = await value
    return await value if inspect.isawaitable(value) else value


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


DATA_TOOLS: list[Tool] = [compare_contexts, list_runs, get_run, top_rules, explain_rule]
