"""`groundchat runs import FILE…` and `groundchat runs sample`: the benchmark's runs from the shell."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_runs_commands(subparsers: argparse._SubParsersAction) -> None:
    from groundchat_cli.localstack import add_endpoint_option

    runs = subparsers.add_parser("runs", help="benchmark runs: import axe-core results, load sample data")
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


def _writer(endpoint: str | None):
    from groundchat_cli.localstack import use_running_stack
    from groundchat.store.dynamo import Dynamo, create_tables
    from groundchat.store.runs import RunWriter
    from groundchat.store.tables import RUNS

    # Beside `groundchat serve`, the runs go into the running stack's DynamoDB.
    dynamo = Dynamo(use_running_stack(endpoint))
    create_tables(dynamo, [RUNS])  # idempotent: a first import on a fresh stack needs the table
    return dynamo, RunWriter(dynamo)


def _cmd_import(args: argparse.Namespace) -> int:
    from groundchat.benchmark.runs_import import import_file

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
