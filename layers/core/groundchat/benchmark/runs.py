"""The benchmark's runs as data: what a run is, the filter every named query shares, and the
aggregates the data tools report (per model × context, rules broken most). Pure: the store reads
and writes these, the tools format them, and tests hold both to the same arithmetic."""
from __future__ import annotations

from collections import defaultdict
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
    """The parameters every named query shares. None means "any"."""

    model: str | None = None
    context: str | None = None
    task: str | None = None
    label: str | None = None
    rule: str | None = None  # runs that broke this axe rule

    def matches(self, run: RunSummary) -> bool:
        for name in FILTER_FIELDS:
            wanted = getattr(self, name)
            if wanted is not None and getattr(run, name) != wanted:
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


def overview_rows(runs: list[RunSummary], per_model: bool = True) -> list[OverviewRow]:
    """Per model × context aggregates (or per context over every model). Pure, so tests can hold
    the store to the same arithmetic."""
    groups: dict[tuple[str, str], list[RunSummary]] = defaultdict(list)
    for run in runs:
        groups[(run.model if per_model else ALL_MODELS, run.context)].append(run)
    rows = []
    for (model, context), members in groups.items():
        completed = sum(r.outcome == "completed" for r in members)
        graded = [r for r in members if r.graded]
        violations = sum(r.violation_count for r in graded)
        total_cost = sum((r.cost_usd for r in members), Decimal(0))
        rows.append(
            OverviewRow(
                model=model,
                context=context,
                runs=len(members),
                completed=completed,
                failed=sum(r.outcome == "failed" for r in members),
                timeout=sum(r.outcome == "timeout" for r in members),
                graded_runs=len(graded),
                violations=violations,
                total_cost_usd=total_cost,
                completion_rate=round(completed / len(members), 4),
                mean_violations=round(violations / len(graded), 2) if graded else None,
                mean_cost_usd=mean_cost(total_cost, len(members)),
            )
        )
    rows.sort(key=lambda r: (r.model, context_sort_key(r.context)))
    return rows


def rule_counts_of(runs: list[RunSummary], limit: int | None = None) -> RuleCounts:
    seen: dict[str, int] = defaultdict(int)
    nodes: dict[str, int] = defaultdict(int)
    graded = 0
    for run in runs:
        graded += run.graded
        for rule_id, count in run.rules.items():
            seen[rule_id] += 1
            nodes[rule_id] += count
    ranked = sorted(seen, key=lambda r: (-seen[r], -nodes[r], r))
    if limit is not None:
        ranked = ranked[:limit]
    return RuleCounts(graded_runs=graded, rules=[RuleCount(rule_id=r, runs=seen[r], nodes=nodes[r]) for r in ranked])
