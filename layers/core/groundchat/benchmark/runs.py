"""The benchmark's runs as data: what a run is, the filter every named query shares, and the
aggregates the data tools report (per model × context, rules broken most). Pure: the store reads
and writes these, the tools format them, and tests hold both to the same arithmetic."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from decimal import ROUND_CEILING, Decimal
from typing import Literal

from pydantic import BaseModel, Field

Outcome = Literal["completed", "failed", "timeout"]
OUTCOMES: tuple[str, ...] = ("completed", "failed", "timeout")
# The benchmark's context levels, least to most context. Listed so results read in that order;
# a level not listed here (imported from elsewhere) sorts after them, alphabetically.
CONTEXT_LEVELS: tuple[str, ...] = ("none", "checklist", "guidelines", "guidelines-axe")
FILTER_FIELDS: tuple[str, ...] = ("model", "context", "task", "label")
# How a run list is ordered: by start time, or by violation count (graded runs only, ties newest
# first when most come first; the fewest order is that list read from its other end).
Order = Literal["newest", "most_violations", "fewest_violations"]
NEWEST: Order = "newest"


def order_problem(flt: "RunFilter", order: str) -> str | None:
    """Why a list in this order cannot be served cheaply (one line), or None. The violations index
    is keyed by the run lists the views keep (any of model, context, task, label; or a rule
    alone), and no list by outcome is kept."""
    if order == NEWEST:
        return None
    if flt.outcome is not None:
        return (f"order {order} lists graded runs by violation count and takes no outcome; "
                "drop the outcome or order by newest")
    if flt.rule is not None and any(getattr(flt, name) is not None for name in FILTER_FIELDS):
        return (f"order {order} takes a rule alone or any of model, context, task, label, not a rule "
                "with another filter; drop one or order by newest")
    return None

_MEAN_COST_QUANTUM = Decimal("0.00000001")


class Node(BaseModel):
    target: str
    html: str = ""
    failure_summary: str = ""


class Violation(BaseModel):
    rule_id: str
    impact: str | None = None
    tags: list[str] = Field(default_factory=list)
    node_count: int
    nodes: list[Node] = Field(default_factory=list)


class RunFields(BaseModel):
    """What a run and its summary both say of it."""

    run_id: str
    model: str
    context: str
    task: str
    label: str
    started_at: datetime
    finished_at: datetime | None = None
    outcome: Outcome
    cost_usd: Decimal
    tokens_in: int = 0
    tokens_out: int = 0
    duration_seconds: Decimal | None = None
    # A run is graded when axe checked what it built; failed runs may have nothing to check.
    graded: bool
    axe_version: str | None = None


class Run(RunFields):
    violations: list[Violation] = Field(default_factory=list)

    def summary(self) -> "RunSummary":
        return RunSummary(
            **self.model_dump(exclude={"violations"}),
            violation_count=len(self.violations),
            node_count=sum(v.node_count for v in self.violations),
            rules={v.rule_id: v.node_count for v in self.violations},
        )


class RunSummary(RunFields):
    violation_count: int  # axe violations = rules the page failed
    node_count: int  # elements failing, summed over those rules
    rules: dict[str, int] = Field(default_factory=dict)


class RunFilter(BaseModel):
    """The parameters every named query shares. None means "any".

    `outcome` is a filter of the run lists and their counts only: it is not one of FILTER_FIELDS,
    so it keys no view (the cells already count each outcome) and the aggregates, which report
    every outcome side by side, refuse it."""

    model: str | None = None
    context: str | None = None
    task: str | None = None
    label: str | None = None
    rule: str | None = None  # runs that broke this axe rule
    outcome: Outcome | None = None  # runs that ended so

    def matches(self, run: RunSummary) -> bool:
        for name in FILTER_FIELDS:
            wanted = getattr(self, name)
            if wanted is not None and getattr(run, name) != wanted:
                return False
        if self.outcome is not None and run.outcome != self.outcome:
            return False
        return self.rule is None or self.rule in run.rules

    def as_params(self) -> dict[str, str]:
        return {k: v for k, v in self.model_dump().items() if v is not None}


class OverviewRow(BaseModel):
    model: str
    context: str
    runs: int
    completed: int
    failed: int
    timeout: int
    graded_runs: int
    violations: int  # summed over graded runs
    total_cost_usd: Decimal
    completion_rate: float  # completed / runs, 4 decimals
    mean_violations: float | None  # violations / graded runs, 2 decimals; None with no graded run
    mean_cost_usd: Decimal  # total cost / runs (every run costs, graded or not), rounded up


class RuleCount(BaseModel):
    rule_id: str
    runs: int  # runs that broke it
    nodes: int  # failing elements, summed over those runs


class RuleCounts(BaseModel):
    graded_runs: int
    rules: list[RuleCount]


def context_sort_key(context: str) -> tuple[int, str]:
    try:
        return (CONTEXT_LEVELS.index(context), "")
    except ValueError:
        return (len(CONTEXT_LEVELS), context)


def mean_cost(total: Decimal, runs: int) -> Decimal:
    # Rounded up so a cost_text of it can never understate what a run cost.
    return (total / runs).quantize(_MEAN_COST_QUANTUM, rounding=ROUND_CEILING) if runs else Decimal(0)


ALL_MODELS = "all models"


@dataclass
class CellTotals:
    """What a group of runs adds up to: the one shape the store keeps per cell (model × context ×
    task × label, and the same sums over task, label or both) and the arithmetic every aggregate
    shares, so the figures read from stored cells equal the ones computed from the runs."""

    runs: int = 0
    completed: int = 0
    failed: int = 0
    timeout: int = 0
    graded: int = 0
    violations: int = 0  # over graded runs
    nodes: int = 0  # over graded runs
    cost: Decimal = field(default_factory=lambda: Decimal(0))  # every run, exact
    rule_runs: dict[str, int] = field(default_factory=dict)  # runs that broke each rule
    rule_nodes: dict[str, int] = field(default_factory=dict)  # failing elements over those runs

    @classmethod
    def of_run(cls, run: RunSummary) -> "CellTotals":
        return cls(
            runs=1,
            completed=int(run.outcome == "completed"),
            failed=int(run.outcome == "failed"),
            timeout=int(run.outcome == "timeout"),
            graded=int(run.graded),
            violations=run.violation_count if run.graded else 0,
            nodes=run.node_count if run.graded else 0,
            cost=run.cost_usd,
            rule_runs={rule: 1 for rule in run.rules},
            rule_nodes=dict(run.rules),
        )

    def add(self, other: "CellTotals") -> "CellTotals":
        for name in ("runs", "completed", "failed", "timeout", "graded", "violations", "nodes"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.cost += other.cost  # Decimal addition is exact: any grouping gives the same sum
        for rule, count in other.rule_runs.items():
            self.rule_runs[rule] = self.rule_runs.get(rule, 0) + count
        for rule, count in other.rule_nodes.items():
            self.rule_nodes[rule] = self.rule_nodes.get(rule, 0) + count
        return self


def totals_of(runs: list[RunSummary]) -> CellTotals:
    total = CellTotals()
    for run in runs:
        total.add(CellTotals.of_run(run))
    return total


def overview_row(model: str, context: str, t: CellTotals) -> OverviewRow:
    return OverviewRow(
        model=model,
        context=context,
        runs=t.runs,
        completed=t.completed,
        failed=t.failed,
        timeout=t.timeout,
        graded_runs=t.graded,
        violations=t.violations,
        total_cost_usd=t.cost,
        completion_rate=round(t.completed / t.runs, 4),
        mean_violations=round(t.violations / t.graded, 2) if t.graded else None,
        mean_cost_usd=mean_cost(t.cost, t.runs),
    )


def overview_from_cells(cells: dict[tuple[str, str], CellTotals], per_model: bool = True) -> list[OverviewRow]:
    """Rows per model × context (or per context over every model) from cells keyed by (model,
    context); cells with no run are left out."""
    groups: dict[tuple[str, str], CellTotals] = defaultdict(CellTotals)
    for (model, context), totals in cells.items():
        if totals.runs:
            groups[(model if per_model else ALL_MODELS, context)].add(totals)
    rows = [overview_row(model, context, t) for (model, context), t in groups.items()]
    rows.sort(key=lambda r: (r.model, context_sort_key(r.context)))
    return rows


def overview_rows(runs: list[RunSummary], per_model: bool = True) -> list[OverviewRow]:
    """Per model × context aggregates (or per context over every model), computed from the runs
    themselves: the brute force the stored cells are held to."""
    cells: dict[tuple[str, str], CellTotals] = defaultdict(CellTotals)
    for run in runs:
        cells[(run.model, run.context)].add(CellTotals.of_run(run))
    return overview_from_cells(cells, per_model)


def rule_counts_from(totals: CellTotals, limit: int | None = None) -> RuleCounts:
    seen, nodes = totals.rule_runs, totals.rule_nodes
    ranked = sorted((r for r in seen if seen[r]), key=lambda r: (-seen[r], -nodes.get(r, 0), r))
    if limit is not None:
        ranked = ranked[:limit]
    rules = [RuleCount(rule_id=r, runs=seen[r], nodes=nodes.get(r, 0)) for r in ranked]
    return RuleCounts(graded_runs=totals.graded, rules=rules)


def rule_counts_of(runs: list[RunSummary], limit: int | None = None) -> RuleCounts:
    return rule_counts_from(totals_of(runs), limit)
