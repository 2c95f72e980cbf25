"""`groundchat budget status|reset|unblock|sweep`: the operator's view of the spending caps.

The caps, the period and the shard count are the server's, as the chat published them in the
store it runs on (spending/server_settings.py), never this shell's GROUNDCHAT_* defaults: a
command on a store no chat has started on says so and does nothing.
The main CLI calls `add_budget_commands(subparsers)`; every command sets `func(args) -> int`.
"""
from __future__ import annotations

import argparse
import asyncio
import functools
import json
import sys
from typing import Any, Callable


class NotServed(Exception):
    """No server's settings to act on: the message is the one line the command prints."""


def _dynamo(args: argparse.Namespace) -> tuple[Any, Any]:
    """The store (beside `groundchat serve`, the running stack's DynamoDB) and the settings to act
    with: this command's, with the server's spending settings in place of its own."""
    from groundchat_cli.stack_address import use_running_stack
    from groundchat.spending.server_settings import NoServerSettings, read_sync
    from groundchat.store.dynamo import Dynamo
    from groundchat.store.tables import BUDGET

    settings = use_running_stack(getattr(args, "endpoint", None))
    dynamo = Dynamo(settings)
    try:
        server = read_sync(dynamo.client, dynamo.name(BUDGET))
    except NoServerSettings as exc:
        raise NotServed(str(exc)) from None
    args.server_settings = server
    settings = server.applied_to(settings)
    return Dynamo(settings), settings


def served(command: Callable[..., int]) -> Callable[..., int]:
    """A command that needs the server's settings: without them, it says why and does nothing."""
    @functools.wraps(command)
    def run(args: argparse.Namespace, *more: Any, **options: Any) -> int:
        try:
            return command(args, *more, **options)
        except NotServed as exc:
            print(str(exc), file=sys.stderr)
            return 1

    return run


@served
def cmd_status(args: argparse.Namespace) -> int:
    from groundchat.spending.operator import budget_status

    dynamo, settings = _dynamo(args)
    status = asyncio.run(budget_status(dynamo, settings, args.user))
    print(json.dumps({**status, "server": args.server_settings.public()}, indent=2))
    return 0


@served
def cmd_reset(args: argparse.Namespace, confirm: Callable[[str], str] = input) -> int:
    from groundchat.spending.operator import parse_scope, reset_budget
    from groundchat.store.budget_counters import period_key

    try:
        parse_scope(args.scope)
    except ValueError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    dynamo, settings = _dynamo(args)
    period = args.period or period_key(settings.budget_period)
    if not args.yes:
        answer = confirm(
            f"Reset the spent amount of {args.scope} ({period}) to zero? Usage rows are kept. Type 'yes' to go on: "
        )
        if answer.strip().lower() != "yes":
            print("Nothing was reset.")
            return 1
    record = asyncio.run(reset_budget(dynamo, settings, args.scope, period=period, actor=args.actor))
    if record is None:
        print(f"{args.scope} ({period}) has spent nothing yet: nothing to reset.")
        return 0
    print(json.dumps(record, indent=2))
    return 0


@served
def cmd_unblock(args: argparse.Namespace) -> int:
    from groundchat.spending.operator import unblock_budget

    dynamo, settings = _dynamo(args)
    record = asyncio.run(unblock_budget(dynamo, settings, period=args.period, actor=args.actor))
    if record is None:
        print("The chat's spending is not blocked: nothing to unblock.")
        return 0
    print(json.dumps(record, indent=2))
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from groundchat.spending.operator import sweep_expired

    dynamo, _ = _dynamo(args)
    released = asyncio.run(sweep_expired(dynamo))
    print(json.dumps({"released": released}, indent=2))
    return 0


def add_budget_commands(subparsers: Any) -> argparse.ArgumentParser:
    from groundchat_cli.stack_address import add_endpoint_option

    budget = subparsers.add_parser("budget", help="spending caps: status, reset, unblock, sweep")
    commands = budget.add_subparsers(dest="budget_command", required=True)

    status = commands.add_parser("status", help="spent, reserved and remaining for the chat and one person")
    status.add_argument("--user", default="dev", help="whose cap to show beside the chat's (default: dev)")
    add_endpoint_option(status)
    status.set_defaults(func=cmd_status)

    reset = commands.add_parser("reset", help="set a cap's spent amount back to zero (usage rows are kept)")
    reset.add_argument("--scope", required=True, help="'chat', 'public' (all visitors of a public chat) or 'user:<id>'")
    reset.add_argument("--period", default=None, help="'total' or a month like 2026-11 (default: the current period)")
    reset.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    reset.add_argument("--actor", default="operator", help="who is resetting, for the reset log")
    add_endpoint_option(reset)
    reset.set_defaults(func=cmd_reset)

    unblock = commands.add_parser("unblock", help="let the chat spend again after a step was charged over its bound")
    unblock.add_argument("--period", default=None, help="'total' or a month like 2026-11 (default: the current period)")
    unblock.add_argument("--actor", default="operator", help="who is unblocking, for the log")
    add_endpoint_option(unblock)
    unblock.set_defaults(func=cmd_unblock)

    sweep = commands.add_parser("sweep", help="release reservations left by crashed requests once they expire")
    add_endpoint_option(sweep)
    sweep.set_defaults(func=cmd_sweep)
    return budget
