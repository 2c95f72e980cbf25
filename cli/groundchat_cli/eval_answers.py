"""`groundchat eval answers [FILE]`: asks a set of questions through the configured model (the
offline answerer by default), in process, through the same answer use case the chat route calls,
and prints per question the tools used, the citations verified or not, whether a view was shown
and at which try, the figures no tool returned and the citations whose passage gives the sentence
weak support, and what it cost; a total at the end. How an operator compares models for this job.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

# Asked when no file is given: one of each kind of question the chat exists for.
DEFAULT_QUESTIONS = [
    "Which context level is best, and what does it cost?",
    "Which model is cheapest?",
    "What do agents get wrong most often?",
    "Which axe rule covers missing alt text?",
    "What does WCAG say about visible keyboard focus?",
    "Does a small online shop have to comply with the European Accessibility Act?",
    "a recipe for banana bread",
]


def add_eval_answers_command(kinds: Any) -> None:
    from groundchat_cli.stack_address import add_endpoint_option

    answers = kinds.add_parser("answers", help="ask questions through the configured model; tools, citations, views, cost")
    answers.add_argument("file", type=Path, nargs="?", help="JSONL with a `q` per line, or one question per line")
    answers.add_argument("--as", dest="as_user", default=None)
    answers.add_argument("--json", action="store_true")
    add_endpoint_option(answers)
    answers.set_defaults(func=cmd_eval_answers)


def read_questions(path: Path | None) -> list[str]:
    if path is None:
        return list(DEFAULT_QUESTIONS)
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            out.append(json.loads(line)["q"] if line.lstrip().startswith("{") else line.strip())
    return out


def cmd_eval_answers(args: argparse.Namespace) -> int:
    from groundchat_cli.stack_address import stack_services  # the stack found as every command finds it

    services = stack_services(args.endpoint)
    try:
        questions = read_questions(args.file)
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: cannot read the questions: {exc}", file=sys.stderr)
        return 2
    rows = asyncio.run(_ask_all(services, args.as_user or services.settings.dev_user, questions))
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        for row in rows:
            print(_line(row))
        print(_total(rows))
    return 1 if any(r["outcome"] == "error" for r in rows) else 0


async def _ask_all(services: Any, user: str, questions: list[str]) -> list[dict[str, Any]]:
    return [await ask_one(services, user, q) for q in questions]


async def ask_one(services: Any, user: str, question: str) -> dict[str, Any]:
    from groundchat.auth.callers import Caller
    from groundchat.chat.answer import Refusal, answer_question
    from groundchat.store import usage as us
    from groundchat.store.tables import USAGE

    outcome = await answer_question(services, Caller(id=user), {"message": question})
    if isinstance(outcome, Refusal):
        return {"q": question, "status": outcome.status, "outcome": outcome.code, "tools": [], "verified": 0,
                "unverified": 0, "view_try": None, "unverified_numbers": [], "weak_support": [], "cost": "0"}
    frames = [f async for f in outcome.frames]
    tools = [f.data["name"] for f in frames if f.type == "tool-call"]
    citations = next((f.data for f in frames if f.type == "citations"), {"verified": 0, "unverified": []})
    # A view is accepted at most once, as the last show_view call: its try is how many calls it took.
    view_calls = tools.count("show_view")
    shown = any(f.type == "view" for f in frames)
    rows = await services.dynamo.run(us.rows_for_run_sync, services.dynamo.client, services.dynamo.name(USAGE), outcome.run_id)
    return {
        "q": question, "status": 200, "outcome": frames[-1].data["reason"], "run_id": outcome.run_id,
        "tools": [t for t in tools if t != "show_view"], "verified": citations["verified"],
        "unverified": len(citations["unverified"]), "view_try": view_calls if shown else None,
        "unverified_numbers": [n["text"] for n in citations.get("unverified_numbers", [])],
        "weak_support": [{"ref": s["ref"], "score": s["score"], "sentence": s["sentence"]}
                         for s in citations.get("support", []) if s["verdict"] == "weak"],
        "cost": str(us.total_charged(rows)),
    }


def _line(row: dict[str, Any]) -> str:
    view = f"view at try {row['view_try']}" if row["view_try"] else "no view"
    tools = ", ".join(row["tools"]) or "no tool"
    figures = f"; unverified figures: {', '.join(row['unverified_numbers'])}" if row.get("unverified_numbers") else ""
    weak = row.get("weak_support", [])
    marks = ", ".join(f"[{w['ref']}] {w['score']:.2f}" for w in weak)
    support = f"; weak support: {marks}" if weak else ""
    return (f"{row['outcome']:10} ${Decimal(row['cost']):<10} {tools:40} citations {row['verified']} verified, "
            f"{row['unverified']} unverified; {view}{figures}{support}\n           {row['q']}")


def _total(rows: list[dict[str, Any]]) -> str:
    cost = sum((Decimal(r["cost"]) for r in rows), Decimal(0))
    views = sum(1 for r in rows if r["view_try"])
    unverified = sum(r["unverified"] for r in rows)
    figures = sum(len(r.get("unverified_numbers", [])) for r in rows)
    weak = sum(len(r.get("weak_support", [])) for r in rows)
    complete = sum(1 for r in rows if r["outcome"] == "complete")
    return (f"total: {len(rows)} questions, {complete} complete, {views} with a view, {unverified} unverified "
            f"citations, {figures} unverified figures, {weak} weakly supported citations, cost ${cost}")
