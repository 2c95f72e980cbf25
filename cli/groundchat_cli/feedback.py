"""`groundchat feedback export|counts`: readers' ratings of answers, for operators.

`export` writes every rating given on the last N days (UTC) as JSONL or CSV, oldest first; `counts`
adds them up per audience (the owner who asked, or a signed-in reader of a shared page): ratings up
and down and each reason's count. Both read the day index of the `feedback` table (store/feedback.py).
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import sys
from typing import Any


def _positive_days(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"--days must be a whole number of days, 1 or more, not {text!r}")
    return int(text)


def _days(last: int, today: dt.date | None = None) -> list[str]:
    today = today or dt.datetime.now(dt.timezone.utc).date()
    return [(today - dt.timedelta(days=n)).isoformat() for n in range(last - 1, -1, -1)]


def _ratings(args: argparse.Namespace) -> list[dict[str, Any]]:
    from groundchat_cli.stack_address import use_running_stack
    from groundchat.store.dynamo import Dynamo
    from groundchat.store.feedback import FeedbackStore

    settings = use_running_stack(getattr(args, "endpoint", None))
    return list(FeedbackStore(Dynamo(settings)).on_days_sync(_days(args.days)))


def cmd_export(args: argparse.Namespace) -> int:
    from groundchat.store.feedback import export_row
    from groundchat_cli.terminal_safe import json_line, visible

    rows = [export_row(item) for item in _ratings(args)]
    out = open(args.output, "w", newline="", encoding="utf-8") if args.output else sys.stdout
    try:
        if args.format == "jsonl":
            for row in rows:
                out.write(json_line(row) + "\n")
        else:
            writer = csv.DictWriter(out, fieldnames=["at", "conversation_id", "seq", "run_id", "audience", "person",
                                                     "rating", "reasons", "text"])
            writer.writeheader()
            for row in rows:
                writer.writerow({**{k: visible(v) if isinstance(v, str) else v for k, v in row.items()},
                                 "reasons": visible(";".join(row["reasons"])), "text": _inert(visible(str(row["text"])))})
    finally:
        if args.output:
            out.close()
    if args.output:
        print(f"{len(rows)} rating(s) of the last {args.days} day(s) written to {args.output}", file=sys.stderr)
    return 0


def _inert(text: str) -> str:
    """A reader's words as a spreadsheet shows them, never as a formula it runs ("=HYPERLINK(…)")."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def cmd_counts(args: argparse.Namespace) -> int:
    from groundchat.store.feedback import counts

    print(json.dumps({"days": args.days, "by_audience": counts(_ratings(args))}, indent=2))
    return 0


def add_feedback_commands(subparsers: Any) -> argparse.ArgumentParser:
    from groundchat_cli.stack_address import add_endpoint_option

    feedback = subparsers.add_parser("feedback", help="readers' ratings of answers: export, counts")
    commands = feedback.add_subparsers(dest="feedback_command", required=True)

    export = commands.add_parser("export", help="every rating of the last days, as JSONL or CSV")
    export.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
    export.add_argument("--days", type=_positive_days, default=30, help="how many days back, today included (default: 30)")
    export.add_argument("--output", "-o", default=None, help="a file to write (default: standard output)")
    add_endpoint_option(export)
    export.set_defaults(func=cmd_export)

    count = commands.add_parser("counts", help="ratings up and down and each reason's count, per audience")
    count.add_argument("--days", type=_positive_days, default=30, help="how many days back, today included (default: 30)")
    add_endpoint_option(count)
    count.set_defaults(func=cmd_counts)
    return feedback
