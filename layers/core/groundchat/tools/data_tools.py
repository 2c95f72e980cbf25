"""The run tools: named queries over the benchmark's runs.

Every figure a tool returns comes from one named query (store/runs.py); the model fills in
parameters and never writes a query. Every cost has a `*_text` twin from `cost_text`, and every
model, context, run and rule carries a link to the run list filtered to it, so an answer can
point the reader at the runs behind a number.
"""
from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from groundchat.auth.callers import RUNS_READ
from groundchat.money import cost_text
from groundchat.benchmark.runs import NEWEST, RunFilter, RunSummary, order_problem
from groundchat.tools.facts import Drawer, Grounding, OfflineTemplate
from groundchat.lazy import resolved
from groundchat.tools.base import Tool, ToolContext, ToolError, ToolNotFound, define_tool
from groundchat.tools.data_shapes import (
    RUN_LINKS,
    CompareContextsResult,
    ContextRow,
    FilterArgs,
    GetRunArgs,
    GetRunResult,
    Links,
    ListRunsArgs,
    ListRunsResult,
    NodeOut,
    RuleRow,
    RunRow,
    TopRulesArgs,
    TopRulesResult,
    ViolationOut,
)
from groundchat.tools.rule_tool import _rules, explain_rule

if TYPE_CHECKING:
    from groundchat.benchmark.runs import OverviewRow
    from groundchat.store.runs import RunsStore
    from groundchat.tools.base import RuleLookup


# ---- helpers -----------------------------------------------------------------------------------


def _runs(ctx: ToolContext) -> RunsStore:
    runs = resolved(ctx.runs)
    if runs is None:
        raise ToolError("the benchmark's runs are not available in this deployment")
    return runs


async def _check_filter(ctx: ToolContext, flt: RunFilter) -> None:
    """An unknown value is an error naming the valid ones, not an empty answer the model could
    mistake for "none"."""
    wanted = flt.as_params()
    if not wanted:
        return
    # One point read per value (the views' value items); the full lists only to name them in an error.
    missing = await _runs(ctx).missing(flt)
    if not missing:
        return
    facets = await _runs(ctx).facets()
    problems = []
    for name, value in wanted.items():
        valid = facets.get(name, [])
        if name in missing:
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


def _run_row(run: RunSummary) -> RunRow:
    return RunRow(
        run_id=run.run_id,
        link=RUN_LINKS.run(run.run_id),
        model=run.model,
        model_link=RUN_LINKS.run_list(model=run.model),
        context=run.context,
        context_link=RUN_LINKS.run_list(context=run.context),
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
        "Per model and context level: runs by outcome, completion rate, mean axe violations per graded run, "
        "mean cost per run (with cost_text). For 'which context is best', 'what does it cost'."
    ),
    input_model=FilterArgs,
    permission=RUNS_READ,
    output_model=CompareContextsResult,
    grounding=Grounding.FIGURES,
    drawer=Drawer.CONTEXTS,
    offline_template=OfflineTemplate.CONTEXTS,
)
async def compare_contexts(ctx: ToolContext, args: FilterArgs) -> CompareContextsResult:
    flt = args.to_filter()
    await _check_filter(ctx, flt)
    rows, by_context = await _runs(ctx).overview_with_contexts(flt)
    base = flt.as_params()
    # What every run the filter admits cost together: "how much did we spend?" is answered from here.
    spent = sum((r.total_cost_usd for r in rows), Decimal(0))
    return CompareContextsResult(filter=base, total_runs=sum(r.runs for r in rows), total_cost=spent,
                                 total_cost_text=cost_text(spent),
                                 by_context=_context_rows(by_context, base), rows=_context_rows(rows, base))


def _context_rows(rows: list[OverviewRow], base: dict[str, str]) -> list[ContextRow]:
    from groundchat.benchmark.runs import ALL_MODELS

    def list_link(r: OverviewRow, outcome: str | None = None) -> str:
        scope = {"context": r.context} if r.model == ALL_MODELS else {"model": r.model, "context": r.context}
        return RUN_LINKS.run_list(**{**base, **scope, "outcome": outcome})

    def outcome_link(r: OverviewRow, outcome: str) -> str | None:
        return list_link(r, outcome) if getattr(r, outcome) else None

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
            links=Links(model=RUN_LINKS.run_list(**({} if r.model == ALL_MODELS else {"model": r.model})),
                        context=RUN_LINKS.run_list(context=r.context),
                        failed=outcome_link(r, "failed"), timeout=outcome_link(r, "timeout")),
        )
        for r in rows
    ]


@define_tool(
    name="list_runs",
    description="Runs under a filter (model, context, task, label, outcome, rule broken): newest first, or graded runs by violations.",
    input_model=ListRunsArgs,
    permission=RUNS_READ,
    output_model=ListRunsResult,
    grounding=Grounding.FIGURES,
    drawer=Drawer.RUN_LIST,
    offline_template=OfflineTemplate.RUN_LIST,
)
async def list_runs(ctx: ToolContext, args: ListRunsArgs) -> ListRunsResult:
    flt = args.to_filter()
    check_order(flt, args.order)
    await _check_filter(ctx, flt)
    runs, more = await _runs(ctx).list_runs(flt, limit=args.limit, order=args.order)
    rows = [_run_row(r) for r in runs]
    ordered = {} if args.order == NEWEST else {"order": args.order}
    return ListRunsResult(filter=flt.as_params(), order=args.order, link=RUN_LINKS.run_list(**flt.as_params(), **ordered),
                          limit=args.limit, count=len(rows), more=more, runs=rows)


def check_order(flt: RunFilter, order: str) -> None:
    """An order the views cannot serve with this filter: a one-line error saying what they can."""
    problem = order_problem(flt, order)
    if problem is not None:
        raise ToolError(problem)


@define_tool(
    name="get_run",
    description="One run by id: outcome, cost, tokens, the axe rules it broke and their first failing elements.",
    input_model=GetRunArgs,
    permission=RUNS_READ,
    output_model=GetRunResult,
    grounding=Grounding.FIGURES,
    drawer=Drawer.RUN,
    offline_template=OfflineTemplate.RUN,
)
async def get_run(ctx: ToolContext, args: GetRunArgs) -> GetRunResult:
    run = await _runs(ctx).get_run(args.run_id)
    if run is None:
        raise ToolNotFound(f"no run with id {args.run_id!r}; list_runs shows the ids that exist")
    row = _run_row(run.summary())
    violations = [
        ViolationOut(
            rule_id=v.rule_id,
            rule_link=RUN_LINKS.run_list(rule=v.rule_id),
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
        "The axe rules broken most under a filter: graded runs that broke each, failing elements."
    ),
    input_model=TopRulesArgs,
    permission=RUNS_READ,
    output_model=TopRulesResult,
    grounding=Grounding.FIGURES,
    drawer=Drawer.RULE_COUNTS,
    offline_template=OfflineTemplate.RULE_COUNTS,
)
async def top_rules(ctx: ToolContext, args: TopRulesArgs) -> TopRulesResult:
    flt = args.to_filter()
    await _check_filter(ctx, flt)
    counts = await _runs(ctx).rule_counts(flt, limit=args.limit)
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
                link=RUN_LINKS.run_list(**{**base, "rule": rc.rule_id}),
            )
        )
    return TopRulesResult(filter=base, graded_runs=counts.graded_runs, rules=rows)


def _rule_facts(rules: RuleLookup, rule_id: str) -> tuple[str | None, list[str]]:
    from groundchat.benchmark.axe_rules import UnknownRule

    try:
        facts = rules.explain(rule_id)
    except UnknownRule:  # a rule of another axe version, imported from real results
        return None, []
    return facts.impact, [c.number for c in facts.criteria]


# The rule lookup rides along: a registry of these can explain any rule a run broke.
DATA_TOOLS: list[Tool] = [compare_contexts, list_runs, get_run, top_rules, explain_rule]
