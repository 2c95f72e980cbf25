"""Sample benchmark data: a fixed-seed generator of plausible runs, in the import format.

It lets a fresh machine demonstrate the chat before any real run exists. The models are invented
names, the numbers are simulated; the axe rule ids, impacts, tags and help URLs are real, taken
from the facts table, so every rule the sample mentions can be explained exactly.

The structure mirrors what the benchmark expects to find: more context means fewer violations
and more input tokens (so a higher cost), the strongest models break fewer rules, and a few runs
fail or time out (the "guidelines-axe" level loops longest, so it times out most often).
"""
from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import ROUND_CEILING, Decimal
from typing import Any

from groundchat.benchmark.axe_rules import RuleTable, load_rules
from groundchat.benchmark.runs import CONTEXT_LEVELS

SEED = 20261130
AXE_VERSION = "4.14.1"


@dataclass(frozen=True)
class SampleModel:
    name: str
    skill: float  # multiplies the expected number of violations: lower is better
    price_in: Decimal  # USD per million input tokens
    price_out: Decimal  # USD per million output tokens
    failure_rate: float


@dataclass(frozen=True)
class SampleContext:
    name: str
    violation_factor: float
    extra_input_tokens: int  # per agent turn: the context is resent every turn
    extra_turns: int
    timeout_rate: float


@dataclass(frozen=True)
class SampleTask:
    name: str
    page: str
    base_violations: float
    # Rules this kind of page tends to break, with relative weights.
    rules: tuple[tuple[str, int], ...]


MODELS: tuple[SampleModel, ...] = (
    SampleModel("atlas-large", 0.70, Decimal("3.00"), Decimal("15.00"), 0.03),
    SampleModel("birch-pro", 0.80, Decimal("2.50"), Decimal("10.00"), 0.04),
    SampleModel("dune-code", 0.95, Decimal("1.10"), Decimal("4.40"), 0.05),
    SampleModel("atlas-small", 1.10, Decimal("0.80"), Decimal("4.00"), 0.06),
    SampleModel("cedar-mini", 1.35, Decimal("0.15"), Decimal("0.60"), 0.10),
)

CONTEXTS: tuple[SampleContext, ...] = (
    SampleContext("none", 1.00, 0, 0, 0.02),
    SampleContext("checklist", 0.72, 900, 0, 0.02),
    SampleContext("guidelines", 0.50, 9_000, 1, 0.03),
    SampleContext("guidelines-axe", 0.22, 9_500, 4, 0.08),
)
assert tuple(c.name for c in CONTEXTS) == CONTEXT_LEVELS

# Rules almost any generated page can break.
_COMMON = (("color-contrast", 10), ("region", 4), ("landmark-one-main", 3), ("page-has-heading-one", 3),
           ("heading-order", 3), ("html-has-lang", 3), ("document-title", 1), ("meta-viewport", 1))

TASKS: tuple[SampleTask, ...] = (
    SampleTask("signup-form", "signup", 4.5, (("label", 9), ("select-name", 4), ("autocomplete-valid", 3),
               ("form-field-multiple-labels", 2), ("input-button-name", 1), ("duplicate-id-aria", 1))),
    SampleTask("product-grid", "products", 5.0, (("image-alt", 9), ("button-name", 7), ("link-name", 5),
               ("target-size", 2), ("image-redundant-alt", 2), ("svg-img-alt", 1))),
    SampleTask("pricing-table", "pricing", 4.0, (("empty-table-header", 5), ("th-has-data-cells", 3),
               ("td-headers-attr", 2), ("list", 2), ("listitem", 2))),
    SampleTask("nav-header", "header", 4.5, (("button-name", 8), ("link-name", 6), ("aria-command-name", 4),
               ("image-alt", 3), ("landmark-unique", 2), ("nested-interactive", 2), ("aria-allowed-attr", 1))),
    SampleTask("modal-dialog", "modal", 4.0, (("aria-dialog-name", 6), ("button-name", 5), ("label", 5),
               ("aria-hidden-focus", 3), ("tabindex", 2), ("aria-valid-attr-value", 1))),
    SampleTask("blog-article", "article", 2.5, (("image-alt", 4), ("link-in-text-block", 3), ("empty-heading", 2),
               ("list", 1), ("frame-title", 1))),
    SampleTask("data-dashboard", "dashboard", 5.5, (("aria-required-children", 4), ("scrollable-region-focusable", 4),
               ("aria-progressbar-name", 3), ("svg-img-alt", 3), ("th-has-data-cells", 2),
               ("aria-toggle-field-name", 2), ("table-duplicate-name", 1))),
    SampleTask("checkout-flow", "checkout", 5.0, (("label", 8), ("autocomplete-valid", 4), ("input-button-name", 2),
               ("aria-input-field-name", 3), ("target-size", 2), ("link-name", 2), ("presentation-role-conflict", 1))),
)

LABELS: tuple[tuple[str, datetime], ...] = (
    ("round-1", datetime(2026, 9, 7, 8, 0, tzinfo=timezone.utc)),
    ("round-2", datetime(2026, 10, 5, 8, 0, tzinfo=timezone.utc)),
    ("round-3", datetime(2026, 11, 2, 8, 0, tzinfo=timezone.utc)),
)

# Made-up markup and summaries in axe's shape; the summaries are our own words, not axe's messages.
_NODE_SHAPES: dict[str, tuple[str, str, str]] = {
    "color-contrast": (".hint", '<p class="hint">Use at least 8 characters.</p>', "text contrast is below 4.5:1"),
    "region": (".promo-banner", '<div class="promo-banner">Free shipping this week</div>', "content sits outside every landmark"),
    "landmark-one-main": ("html", '<html lang="en">', "the page has no main landmark"),
    "page-has-heading-one": ("html", '<html lang="en">', "the page has no level-one heading"),
    "heading-order": ("h4", "<h4>Details</h4>", "heading level jumps by more than one"),
    "html-has-lang": ("html", "<html>", "the html element has no lang attribute"),
    "document-title": ("html", "<html lang=\"en\">", "the document has no title"),
    "meta-viewport": ('meta[name="viewport"]', '<meta name="viewport" content="width=device-width, user-scalable=no">', "zooming is disabled"),
    "label": ("#email", '<input type="email" id="email" placeholder="">', "the field has no label"),
    "select-name": ("#country", '<select id="country">', "the select has no accessible name"),
    "autocomplete-valid": ("#phone", '<input id="phone" autocomplete="telephone">', "the autocomplete value is not a valid token"),
    "form-field-multiple-labels": ("#password", '<input type="password" id="password">', "two labels point at the same field"),
    "input-button-name": ('input[type="submit"]', '<input type="submit" value="">', "the input button has no name"),
    "duplicate-id-aria": ("#password", '<input id="password" aria-describedby="pw-hint">', "an id used by ARIA appears twice"),
    "image-alt": (".card:nth-child(2) > img", '<img src="/img/product-2.jpg">', "the image has no alternative text"),
    "button-name": (".wishlist", '<button class="wishlist"><svg viewBox="0 0 24 24"></svg></button>', "the button has no accessible name"),
    "link-name": ('a[href="/cart"]', '<a href="/cart"><i class="icon-cart"></i></a>', "the link has no accessible name"),
    "target-size": (".pager > a", '<a href="?page=2" class="dot"></a>', "the target is smaller than 24 by 24 CSS pixels"),
    "image-redundant-alt": (".card img", '<img src="/img/lamp.jpg" alt="Desk lamp">', "the alt text repeats the caption"),
    "svg-img-alt": ("svg.chart", '<svg role="img" class="chart">', "the svg image has no name"),
    "empty-table-header": ("thead th:nth-child(1)", "<th></th>", "the header cell is empty"),
    "th-has-data-cells": ("th.plan", '<th class="plan">Team</th>', "the header describes no data cells"),
    "td-headers-attr": ("td.price", '<td class="price" headers="col-9">$12</td>', "headers points outside the table"),
    "list": ("ul.features", '<ul class="features"><div>Unlimited seats</div></ul>', "the list holds non-list children"),
    "listitem": (".features > li", "<li>Priority support</li>", "the item sits outside a list"),
    "aria-command-name": (".menu-toggle", '<div role="button" class="menu-toggle" tabindex="0"></div>', "the command has no accessible name"),
    "landmark-unique": ("nav:nth-of-type(2)", '<nav class="secondary">', "two navigation landmarks share a name"),
    "nested-interactive": (".card-link button", '<a class="card-link" href="/p/3"><button>Add</button></a>', "a control is nested in another"),
    "aria-allowed-attr": (".avatar", '<img class="avatar" aria-checked="false" src="/me.png" alt="">', "an ARIA attribute is not allowed on this role"),
    "aria-dialog-name": ("#signup-dialog", '<div role="dialog" id="signup-dialog" aria-modal="true">', "the dialog has no accessible name"),
    "aria-hidden-focus": (".page[aria-hidden]", '<div class="page" aria-hidden="true">', "a hidden region still holds focusable elements"),
    "tabindex": ("#close", '<button id="close" tabindex="3">', "tabindex is greater than zero"),
    "aria-valid-attr-value": ("#tabs", '<div id="tabs" aria-selected="yes">', "an ARIA attribute has an invalid value"),
    "link-in-text-block": ("article p > a", '<a href="/notes">field notes</a>', "the link differs from its text only by colour"),
    "empty-heading": ("h2.empty", '<h2 class="empty"></h2>', "the heading is empty"),
    "frame-title": ("iframe", '<iframe src="https://video.example/embed/42">', "the frame has no title"),
    "aria-required-children": ('[role="tablist"]', '<div role="tablist"><div>Week</div></div>', "a required child role is missing"),
    "scrollable-region-focusable": (".table-wrap", '<div class="table-wrap" style="overflow:auto">', "a scrolling region cannot be reached by keyboard"),
    "aria-progressbar-name": (".quota", '<div role="progressbar" class="quota" aria-valuenow="40">', "the progress bar has no accessible name"),
    "aria-toggle-field-name": (".dark-mode", '<div role="switch" class="dark-mode" aria-checked="false">', "the switch has no accessible name"),
    "table-duplicate-name": ("table.usage", '<table class="usage" summary="Usage"><caption>Usage</caption>', "caption and summary say the same"),
    "aria-input-field-name": ("#card-number", '<div role="textbox" id="card-number" contenteditable="true">', "the input field has no accessible name"),
    "presentation-role-conflict": ("img.logo", '<img class="logo" role="presentation" alt="" tabindex="0" src="/logo.svg">', "a presentational element is focusable"),
}


def _poisson(rng: random.Random, lam: float) -> int:
    # Knuth's method: fine for the small means used here.
    limit, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def _pick_rules(rng: random.Random, task: SampleTask, count: int) -> list[str]:
    pool = dict(_COMMON)
    for rule, weight in task.rules:
        pool[rule] = pool.get(rule, 0) + weight
    chosen: list[str] = []
    while pool and len(chosen) < count:
        rule = rng.choices(list(pool), weights=list(pool.values()))[0]
        chosen.append(rule)
        del pool[rule]
    return sorted(chosen)


def _violation(rng: random.Random, facts: RuleTable, rule: str, context_factor: float) -> dict[str, Any]:
    target, html, summary = _NODE_SHAPES[rule]
    # Better-briefed agents leave fewer instances of a rule they do break.
    nodes = 1 + _poisson(rng, 2.2 * context_factor)
    return {
        "id": rule,
        "impact": facts.impact(rule),
        "tags": facts.tags(rule),
        "helpUrl": facts.explain(rule).help_url,
        "nodes": [
            {
                "any": [],
                "all": [],
                "none": [],
                "impact": facts.impact(rule),
                "html": html,
                "target": [target if i == 0 else f"{target}:nth-of-type({i + 1})"],
                "failureSummary": f"Fix any of the following:\n  {summary}",
            }
            for i in range(nodes)
        ],
    }


def _cost(model: SampleModel, tokens_in: int, tokens_out: int) -> Decimal:
    raw = (model.price_in * tokens_in + model.price_out * tokens_out) / Decimal(1_000_000)
    return raw.quantize(Decimal("0.000001"), rounding=ROUND_CEILING)


def _iso(dt: datetime) -> str:
    return dt.isoformat().replace("+00:00", "Z")


ROUND_EVERY = timedelta(days=28)  # as LABELS: a round every four weeks


def sample_names() -> dict[str, list[str]]:
    """The names the sample's runs hold, per filter field: what the offline router knows them by."""
    return {"model": [m.name for m in MODELS], "context": [c.name for c in CONTEXTS],
            "task": [t.name for t in TASKS], "label": [label for label, _ in LABELS]}


def rounds_of(count: int) -> tuple[tuple[str, datetime], ...]:
    """LABELS, continued every four weeks past the third round (for bigger generated benchmarks)."""
    extra = tuple((f"round-{i + 1}", LABELS[0][1] + i * ROUND_EVERY) for i in range(len(LABELS), count))
    return (LABELS + extra)[:count]


def tasks_of(count: int) -> tuple[SampleTask, ...]:
    """TASKS, then variants of them ("signup-form-2", …) that break the same kinds of rules."""
    variants = tuple(
        SampleTask(f"{base.name}-{i // len(TASKS) + 1}", base.page, base.base_violations, base.rules)
        for i in range(len(TASKS), count)
        for base in (TASKS[i % len(TASKS)],)
    )
    return (TASKS + variants)[:count]


def generate_runs(seed: int = SEED, rounds: int = len(LABELS), tasks: int = len(TASKS)) -> list[dict[str, Any]]:
    """One run per model × context × task × label, as import lines, oldest first: 480 with the
    defaults (the sample); `rounds` and `tasks` make bigger benchmarks of the same shape
    (bench/runs.py), each default one unchanged."""
    rng = random.Random(seed)
    facts = load_rules()
    lines: list[dict[str, Any]] = []
    for label, round_start in rounds_of(rounds):
        clock = round_start
        for task in tasks_of(tasks):
            for model in MODELS:
                for context in CONTEXTS:
                    turns = rng.randint(3, 8) + context.extra_turns
                    tokens_in = turns * (rng.randint(900, 1_600) + context.extra_input_tokens)
                    tokens_out = rng.randint(1_500, 4_500) + 600 * context.extra_turns
                    duration = 20 + tokens_out // 45 + turns * rng.randint(4, 9)
                    roll = rng.random()
                    if roll < context.timeout_rate:
                        outcome, duration = "timeout", 900
                    elif roll < context.timeout_rate + model.failure_rate:
                        # A failed run stops early, so it used (and cost) part of a normal run.
                        outcome = "failed"
                        share = rng.uniform(0.2, 0.7)
                        tokens_in, tokens_out = int(tokens_in * share), int(tokens_out * share)
                        duration = int(duration * share)
                    else:
                        outcome = "completed"
                    started = clock
                    finished = started + timedelta(seconds=duration)
                    clock = finished + timedelta(seconds=rng.randint(5, 40))
                    # "run-" first: that is how people (and the offline answerer) spot a run id.
                    run_id = f"run-{label}-{task.name}-{model.name}-{context.name}"
                    line: dict[str, Any] = {
                        "id": run_id,
                        "model": model.name,
                        "context": context.name,
                        "task": task.name,
                        "label": label,
                        "started_at": _iso(started),
                        "finished_at": _iso(finished),
                        "outcome": outcome,
                        "cost_usd": str(_cost(model, tokens_in, tokens_out)),
                        "tokens": {"input": tokens_in, "output": tokens_out},
                    }
                    if outcome == "completed":
                        factor = model.skill * context.violation_factor
                        rules = _pick_rules(rng, task, _poisson(rng, task.base_violations * factor))
                        line["axe"] = {
                            "testEngine": {"name": "axe-core", "version": AXE_VERSION},
                            "testRunner": {"name": "axe"},
                            "timestamp": _iso(finished),
                            "url": f"http://127.0.0.1:8080/{run_id}/{task.page}.html",
                            "toolOptions": {"reporter": "v1"},
                            "violations": [_violation(rng, facts, r, context.violation_factor) for r in rules],
                            "incomplete": [],
                            "passes": [],
                            "inapplicable": [],
                        }
                    lines.append(line)
    return lines


def sample_jsonl(seed: int = SEED) -> str:
    return "".join(json.dumps(line, sort_keys=True) + "\n" for line in generate_runs(seed))


async def load_sample_if_empty(dynamo: Any, seed: int = SEED) -> int:
    """Loads the sample into an empty runs table; returns how many runs it wrote (0 if the table
    already held runs: real data is never mixed with the sample)."""
    return await dynamo.run(load_sample_if_empty_sync, dynamo, seed)


def load_sample_if_empty_sync(dynamo: Any, seed: int = SEED) -> int:
    from groundchat.store.runs_import import import_text
    from groundchat.store.runs import RunWriter

    writer = RunWriter(dynamo)
    if not writer.is_empty():
        _count_runs_stored_before_the_views(dynamo)
        return 0
    report = import_text(writer, sample_jsonl(seed), source="sample")
    if report.errors:  # the generator and the importer disagree: a bug, never user input
        raise RuntimeError(f"sample data failed its own import: {report.errors[:3]}")
    return len(report.imported)


def _count_runs_stored_before_the_views(dynamo: Any) -> None:
    """A local store filled before the runs' views existed has runs and no cells: build them once
    (what `groundchat runs repair --fix` does), so its data tools answer as before."""
    from groundchat_cli.run_repair import check_views
    from groundchat.store.run_views import CELLS
    from groundchat.store.tables import RUN_VIEWS

    if dynamo.table(RUN_VIEWS).query(KeyConditionExpression="#v = :v", ExpressionAttributeNames={"#v": "view"},
                                     ExpressionAttributeValues={":v": CELLS}, Limit=1).get("Items"):
        return
    print("benchmark runs: building their aggregates and run lists (stored before they existed; once)")
    check_views(dynamo, fix=True)
