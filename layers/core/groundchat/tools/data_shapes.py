"""The data tools' shapes: what each tool accepts and returns, and the run list addresses its links use."""
from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from urllib.parse import urlencode

from pydantic import BaseModel, ConfigDict, Field, field_validator

from groundchat.benchmark.runs import FILTER_FIELDS, NEWEST, Order, Outcome, RunFilter

RUN_LIST_PATH = "/chat/runs"
MAX_LIST = 100
MAX_TOP_RULES = 50


class RunLinks:
    """Addresses of the run list page."""

    def __init__(self, base: str = RUN_LIST_PATH) -> None:
        self.base = base

    def run_list(self, **params: str | None) -> str:
        query = {k: v for k, v in params.items() if v is not None}
        return f"{self.base}?{urlencode(query)}" if query else self.base

    def run(self, run_id: str) -> str:
        return self.run_list(run=run_id)


RUN_LINKS = RunLinks()


# ---- inputs ------------------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class FilterArgs(_Strict):
    model: str | None = Field(default=None, description="exact model name")
    context: str | None = Field(default=None, description="e.g. none, checklist, guidelines, guidelines-axe")
    task: str | None = Field(default=None, description="e.g. signup-form")
    label: str | None = Field(default=None, description="batch, e.g. round-1")

    @field_validator("model", "context", "task", "label")
    @classmethod
    def _empty_is_any(cls, value: str | None) -> str | None:
        return value or None

    def to_filter(self) -> RunFilter:
        return RunFilter(**{name: getattr(self, name) for name in FILTER_FIELDS})


class ListRunsArgs(FilterArgs):
    rule: str | None = Field(default=None, description="axe rule id they broke")
    # A Literal: any other value is refused naming the three. The enum speaks for itself in the schema.
    outcome: Outcome | None = None
    limit: int = Field(default=20, ge=1, le=MAX_LIST)
    # A Literal too: "most_violations" / "fewest_violations" list graded runs by violation count.
    order: Order = NEWEST

    def to_filter(self) -> RunFilter:
        return RunFilter(**super().to_filter().model_dump(exclude={"rule", "outcome"}), rule=self.rule or None,
                         outcome=self.outcome)


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
    # The row's runs that failed or timed out, listed; None when it has none.
    failed: str | None = None
    timeout: str | None = None


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
    total_cost: Decimal = Field(description="USD, every run the filter admits")
    total_cost_text: str
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
    order: Order = NEWEST
    link: str = Field(default="", description="the run list under this filter")
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


class UnderstandingOut(BaseModel):
    """A criterion's Understanding passage, named the way search_docs excerpts are."""

    ref: str
    source: str = "wcag22"
    section: str
    title: str
    url: str | None = None
    text: str


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
    # Why the criterion matters: its Understanding document's brief and intent (informative), citable.
    why: UnderstandingOut | None = None


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
