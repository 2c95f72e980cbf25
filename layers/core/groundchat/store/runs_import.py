"""Import benchmark runs from JSONL: one run per line, its `axe` field a real axe-core result.

    {"id": "r-0001", "model": "...", "context": "guidelines", "task": "signup-form",
     "label": "round-1", "started_at": "2026-11-30T09:00:00Z", "finished_at": "...",
     "outcome": "completed", "cost_usd": "0.0126", "tokens": {"input": 1200, "output": 800},
     "axe": { ...the object `await axe.run(document)` returned... }}

A file is validated whole before anything is written, so a bad line leaves the store as it was
and the report names every bad line by number. Runs already in the store are skipped, so
importing the same file twice changes nothing.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Literal, NoReturn

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from groundchat.store.run_views import MAX_RULES_PER_RUN
from groundchat.store.runs import RunWriter
from groundchat.benchmark.runs import Node, Run, Violation

_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")


class AxeNode(BaseModel):
    model_config = ConfigDict(extra="ignore")

    # A selector path; a nested list walks into shadow roots or iframes.
    target: list[str | list[str]]
    html: str = ""
    failureSummary: str | None = None

    def as_node(self) -> Node:
        parts = [" >>> ".join(t) if isinstance(t, list) else t for t in self.target]
        return Node(target=" ".join(parts), html=self.html, failure_summary=self.failureSummary or "")


class AxeViolation(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    impact: Literal["minor", "moderate", "serious", "critical"] | None = None
    tags: list[str]
    nodes: list[AxeNode]


class AxeEngine(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = "axe-core"
    version: str = Field(min_length=1)


class AxeResult(BaseModel):
    """The parts of `axe.run()` output the benchmark grades on. `incomplete` (needs review) and
    `passes` are not violations and are not kept."""

    model_config = ConfigDict(extra="ignore")

    testEngine: AxeEngine
    violations: list[AxeViolation]


class Tokens(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input: int = Field(ge=0)
    output: int = Field(ge=0)


class RunLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    model: str = Field(min_length=1, max_length=100)
    context: str = Field(min_length=1, max_length=100)
    task: str = Field(min_length=1, max_length=100)
    label: str = Field(min_length=1, max_length=100)
    started_at: datetime
    finished_at: datetime | None = None
    outcome: Literal["completed", "failed", "timeout"]
    # Money is exact: the file is parsed with Decimal for numbers, and a string works too.
    cost_usd: Decimal = Field(ge=0, allow_inf_nan=False)
    tokens: Tokens
    duration_seconds: Decimal | None = Field(default=None, ge=0, allow_inf_nan=False)
    axe: AxeResult | None = None

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not _RUN_ID.match(value):
            raise ValueError("run id must be 1-128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit")
        return value

    @field_validator("started_at", "finished_at")
    @classmethod
    def _has_zone(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("timestamp needs a time zone (e.g. a trailing Z)")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> "RunLine":
        if self.outcome == "completed" and self.axe is None:
            raise ValueError("a completed run needs its axe result in `axe`")
        if self.finished_at is not None and self.finished_at < self.started_at:
            raise ValueError("finished_at is before started_at")
        if self.axe is not None and len({v.id for v in self.axe.violations}) > MAX_RULES_PER_RUN:
            # A run is stored in one transaction with an entry per rule broken (store/run_views.py).
            raise ValueError(f"more than {MAX_RULES_PER_RUN} distinct axe rules broken in one run")
        return self

    def to_run(self) -> Run:
        duration = self.duration_seconds
        if duration is None and self.finished_at is not None:
            duration = Decimal(str((self.finished_at - self.started_at).total_seconds()))
        violations = []
        if self.axe is not None:
            violations = [
                Violation(
                    rule_id=v.id,
                    impact=v.impact,
                    tags=v.tags,
                    node_count=len(v.nodes),
                    nodes=[n.as_node() for n in v.nodes],
                )
                for v in self.axe.violations
            ]
        return Run(
            run_id=self.id,
            model=self.model,
            context=self.context,
            task=self.task,
            label=self.label,
            started_at=self.started_at,
            finished_at=self.finished_at,
            outcome=self.outcome,
            cost_usd=self.cost_usd,
            tokens_in=self.tokens.input,
            tokens_out=self.tokens.output,
            duration_seconds=duration,
            graded=self.axe is not None,
            axe_version=self.axe.testEngine.version if self.axe else None,
            violations=violations,
        )


@dataclass
class LineError:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass
class ImportReport:
    source: str
    errors: list[LineError] = field(default_factory=list)
    imported: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # already in the store

    @property
    def ok(self) -> bool:
        return not self.errors


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a number")


def parse_runs(text: str) -> tuple[list[Run], list[LineError]]:
    """Every line checked; runs are returned only for a file with no errors."""
    runs: list[Run] = []
    errors: list[LineError] = []
    first_line: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw, parse_float=Decimal, parse_constant=_reject_constant)
        except (json.JSONDecodeError, ValueError) as exc:
            errors.append(LineError(number, f"not valid JSON: {exc}"))
            continue
        if not isinstance(data, dict):
            errors.append(LineError(number, "expected a JSON object for one run"))
            continue
        try:
            line = RunLine.model_validate(data)
        except ValidationError as exc:
            errors.append(LineError(number, _describe(exc)))
            continue
        if line.id in first_line:
            errors.append(LineError(number, f"run id {line.id!r} repeats line {first_line[line.id]}"))
            continue
        first_line[line.id] = number
        runs.append(line.to_run())
    if not runs and not errors:
        errors.append(LineError(0, "no runs in the file"))
    return (runs, []) if not errors else ([], errors)


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "run"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def import_text(writer: RunWriter, text: str, source: str = "<text>") -> ImportReport:
    report = ImportReport(source=source)
    runs, report.errors = parse_runs(text)
    if report.errors:
        return report  # nothing written: a file is imported whole or not at all
    written = writer.put_runs(runs)
    report.imported, report.skipped = written.written, written.existing
    return report


def import_file(writer: RunWriter, path: Path) -> ImportReport:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return ImportReport(source=str(path), errors=[LineError(0, f"cannot read the file: {exc}")])
    return import_text(writer, text, source=str(path))
