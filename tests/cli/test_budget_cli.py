"""`groundchat budget status|reset|sweep`: confirmation, the reset log, and usage rows kept."""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
from decimal import Decimal

from groundchat.spending.budget_guard import BudgetGuard
from groundchat_cli.budget import add_budget_commands, cmd_reset
from groundchat.store import budget_counters as bc
from groundchat.store.tables import BUDGET
from groundchat.models.messages import UsageEvent

from tests.spending.helpers import counter, first_request, registry, usage_rows


def parse(argv: list[str]) -> argparse.Namespace:
    """The command as typed, against the in-process moto: `--endpoint aws` is what mock_aws answers."""
    parser = argparse.ArgumentParser(prog="groundchat")
    add_budget_commands(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args([*argv, "--endpoint", "aws"])


def spend(dynamo, settings, caller: str = "ann") -> Decimal:
    async def one_step() -> Decimal:
        guard = BudgetGuard(dynamo, settings, caller, "c", f"run-{caller}", "scripted")
        held = await guard.reserve(await first_request(registry(), caller, "q", 3000), 0)
        charge = await guard.settle(held, UsageEvent(input_tokens=1000, output_tokens=500))
        return Decimal(charge["charged"])

    # The CLI runs its own event loop, so these tests are synchronous like the CLI.
    return asyncio.run(one_step())


def reset_log(dynamo) -> list[dict]:
    page = dynamo.client.query(
        TableName=dynamo.name(BUDGET), KeyConditionExpression="#s = :s",
        ExpressionAttributeNames={"#s": "scope"}, ExpressionAttributeValues={":s": {"S": bc.RESET_LOG_SCOPE}},
    )
    return [bc.plain(i) for i in page["Items"]]


def test_every_budget_command_sets_a_func():
    for argv in (["budget", "status"], ["budget", "reset", "--scope", "chat"], ["budget", "sweep"]):
        assert callable(parse(argv).func)


def test_reset_asks_first_and_does_nothing_without_yes(dynamo, budget_settings, capsys):
    settings = budget_settings()
    spent = spend(dynamo, settings)
    code = cmd_reset(parse(["budget", "reset", "--scope", "chat"]), confirm=lambda prompt: "n")
    assert code == 1
    assert counter(dynamo, bc.CHAT_SCOPE).spent == spent
    assert reset_log(dynamo) == []


def test_reset_zeroes_spent_logs_it_and_keeps_usage_rows(dynamo, budget_settings, capsys, caplog):
    settings = budget_settings()
    spent = spend(dynamo, settings, "ann") + spend(dynamo, settings, "bo")
    with caplog.at_level(logging.WARNING, logger="groundchat.spending"):
        args = parse(["budget", "reset", "--scope", "user:ann", "--yes", "--actor", "ops"])
        code = args.func(args)
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["scope"] == "user#ann" and printed["spent_reset"] == "0.002" and printed["actor"] == "ops"
    assert "budget reset" in caplog.text and "user#ann" in caplog.text
    ann = counter(dynamo, bc.user_scope("ann"))
    assert (ann.spent, ann.committed) == (0, 0)
    assert counter(dynamo, bc.user_scope("bo")).spent == Decimal("0.002")
    assert counter(dynamo, bc.CHAT_SCOPE).spent == spent  # only the scope named
    assert len(usage_rows(dynamo)) == 2  # the record of money spent is kept
    [logged] = reset_log(dynamo)
    assert logged["counter_scope"] == "user#ann" and logged["spent_reset"] == Decimal("0.002")


def test_reset_keeps_reservations_in_flight_held(dynamo, budget_settings):
    settings = budget_settings()
    spend(dynamo, settings)
    guard = BudgetGuard(dynamo, settings, "ann", "c", "r", "scripted")
    held = asyncio.run(guard.reserve(asyncio.run(first_request(registry(), "ann", "q", 3000)), 0))
    assert cmd_reset(parse(["budget", "reset", "--scope", "chat", "--yes"])) == 0
    chat = counter(dynamo, bc.CHAT_SCOPE)
    assert (chat.spent, chat.reserved, chat.committed) == (0, held.amount, held.amount)
    asyncio.run(guard.settle(held, UsageEvent(input_tokens=1000, output_tokens=500)))
    chat = counter(dynamo, bc.CHAT_SCOPE)
    assert (chat.spent, chat.reserved, chat.committed) == (Decimal("0.002"), 0, Decimal("0.002"))


def test_reset_refuses_an_unknown_scope(dynamo, budget_settings, capsys):
    budget_settings()
    assert cmd_reset(parse(["budget", "reset", "--scope", "everyone", "--yes"])) == 2
    assert "user:<id>" in capsys.readouterr().err


def test_status_prints_both_caps(dynamo, budget_settings, capsys):
    settings = budget_settings()
    spend(dynamo, settings)
    args = parse(["budget", "status", "--user", "ann"])
    assert args.func(args) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["chat"]["spent"] == "0.002" and status["you"]["spent"] == "0.002"
    assert status["you"]["cap"] == "0.5"
