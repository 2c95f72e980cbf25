"""`groundchat runs import FILE…`, `runs sample` and `runs repair`: the benchmark's runs from the shell."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_runs_commands(subparsers: argparse._SubParsersAction) -> None:
    from groundchat_cli.stack_address import add_endpoint_option

    runs = subparsers.add_parser("runs", help="benchmark runs: import axe-core results, load sample data, check the aggregates")
    sub = runs.add_subparsers(dest="runs_command", required=True)

    p = sub.add_parser("import", help="import JSONL files of runs (each run's `axe` is an axe-core result)")
    p.add_argument("files", nargs="+", type=Path)
    add_endpoint_option(p)
    p.set_defaults(func=_cmd_import)

    p = sub.add_parser("sample", help="write the sample benchmark as JSONL, or load it into an empty store")
    p.add_argument("--out", type=Path, help="write the JSONL here instead of loading it ('-' for stdout)")
    p.add_argument("--seed", type=int, default=None, help="generator seed (default: the documented one)")
    add_endpoint_option(p)
    p.set_defaults(func=_cmd_sample)

    p = sub.add_parser("repair", help="recompute the aggregates and run lists from the runs and report any difference")
    p.add_argument("--fix", action="store_true", help="also rewrite what differs (each write conditional on what was read)")
    add_endpoint_option(p)
    p.set_defaults(func=_cmd_repair)


def _writer(endpoint: str | None):
    from groundchat_cli.stack_address import StackError, use_running_stack
    from groundchat.store.dynamo import Dynamo, create_tables
    from groundchat.store.runs import RunWriter
    from groundchat.store.table_indexes import IndexNotReady, add_missing_indexes
    from groundchat.store.tables import RUN_VIEWS, RUNS

    # Beside `groundchat serve`, the runs go into the running stack's DynamoDB.
    dynamo = Dynamo(use_running_stack(endpoint))
    create_tables(dynamo, [RUNS, RUN_VIEWS])  # idempotent: a first import on a fresh stack needs them
    # A local store made before the run views had their indexes (the local stack adds them when it
    # starts). Never the deployed tables: their indexes are the stack's (template.yaml).
    try:
        added = add_missing_indexes(dynamo, [RUNS, RUN_VIEWS]) if dynamo.settings.dynamodb_endpoint else []
    except IndexNotReady as exc:
        raise StackError(str(exc)) from None
    if added:
        print(f"index(es) added: {', '.join(added)}; `groundchat runs repair --fix` gives the runs stored before "
              "them their index keys", file=sys.stderr)
    return dynamo, RunWriter(dynamo)


def _cmd_import(args: argparse.Namespace) -> int:
    from groundchat.store.runs_import import import_file

    missing = [str(p) for p in args.files if not p.is_file()]
    if missing:
        print(f"no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    _, writer = _writer(args.endpoint)
    failed = False
    # Each file stands alone: a bad file is reported and left out, the good ones still load.
    for path in args.files:
        report = import_file(writer, path)
        if report.errors:
            failed = True
            print(f"{path}: not imported ({len(report.errors)} bad line(s)); nothing from this file was written", file=sys.stderr)
            for err in report.errors[:50]:
                print(f"  {err}", file=sys.stderr)
            if len(report.errors) > 50:
                print(f"  … and {len(report.errors) - 50} more", file=sys.stderr)
            continue
        print(f"{path}: {len(report.imported)} run(s) imported, {len(report.skipped)} already present")
    return 1 if failed else 0


def _cmd_sample(args: argparse.Namespace) -> int:
    from groundchat_cli import sample

    seed = sample.SEED if args.seed is None else args.seed
    if args.out is not None:
        text = sample.sample_jsonl(seed)
        if str(args.out) == "-":
            sys.stdout.write(text)
        else:
            args.out.write_text(text, encoding="utf-8")
            print(f"wrote {text.count(chr(10))} runs to {args.out}")
        return 0
    dynamo, _ = _writer(args.endpoint)
    loaded = sample.load_sample_if_empty_sync(dynamo, seed)
    print(f"sample of {loaded} runs loaded" if loaded else "the runs table already holds runs: sample not loaded")
    return 0


def _cmd_repair(args: argparse.Namespace) -> int:
    """Exit 0 when the views agree with the runs (or were fixed), 1 when they differ."""
    from groundchat_cli.run_repair import check_views

    dynamo, _ = _writer(args.endpoint)
    report = check_views(dynamo, fix=args.fix)
    for line in report.lines():
        print(line)
    return 0 if report.clean or (args.fix and report.fixed_all) else 1
