"""`groundchat budget status|reset|sweep`: confirmation, the reset log, and usage rows kept; every
command acts on the caps the server published, never on the shell's."""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
from decimal import Decimal

import pytest

from groundchat.spending.budget_guard import BudgetGuard
from groundchat_cli.budget import add_budget_commands, cmd_reset
from groundchat.store import budget_counters as bc
from groundchat.store.tables import BUDGET
from groundchat.models.messages import UsageEvent

from groundchat.spending.server_settings import publish_sync
from groundchat.store import budget_shards as bs
from tests.spending.helpers import counter, first_request, registry, usage_rows


@pytest.fixture
def budget_settings(budget_settings, dynamo):
    """The spending fixture's settings, published as the server's (what the chat does at start)."""
    def make(*args, **kwargs):
        settings = budget_settings(*args, **kwargs)
        publish_sync(dynamo.client, dynamo.name(BUDGET), settings)
        return settings

    return make


def shell(monkeypatch, **env: str):
    """The operator's shell: its own GROUNDCHAT_* values, none of them the server's."""
    from groundchat.config import reset_settings_cache

    for name, value in env.items():
        monkeypatch.setenv(f"GROUNDCHAT_{name.upper()}", value)
    reset_settings_cache()


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


def test_status_shows_the_servers_caps_not_the_shells(dynamo, budget_settings, monkeypatch, capsys):
    settings = budget_settings(chat="0.12", user="0.05")
    spent = spend(dynamo, settings)
    shell(monkeypatch, budget_usd="1", user_budget_usd="0.50")
    args = parse(["budget", "status", "--user", "ann"])
    assert args.func(args) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["chat"]["cap"], status["you"]["cap"]) == ("0.12", "0.05")
    assert Decimal(status["chat"]["remaining"]) == Decimal("0.12") - spent
    assert Decimal(status["you"]["remaining"]) == Decimal("0.05") - spent
    assert status["server"]["budget_usd"] == "0.12" and status["server"]["budget_shards"] == 1


def test_a_store_no_server_published_to_is_refused_with_a_reason(dynamo, capsys, monkeypatch):
    from groundchat.store.dynamo import create_tables

    create_tables(dynamo, [BUDGET])
    shell(monkeypatch, budget_usd="1")
    for argv in (["budget", "status"], ["budget", "unblock"], ["budget", "reset", "--scope", "chat", "--yes"]):
        args = parse(argv)
        assert args.func(args) == 1
        out = capsys.readouterr()
        assert out.out == "" and "no chat server has published its spending settings" in out.err


def test_unblock_rebases_to_the_servers_cap_and_leaves_no_shard_negative(dynamo, budget_settings, monkeypatch, capsys):
    monkeypatch.setenv("GROUNDCHAT_BUDGET_SHARDS", "4")
    settings = budget_settings(chat="0.12", user="1")
    guard = BudgetGuard(dynamo, settings, "ann", "c", "r", "scripted")
    held = asyncio.run(guard.reserve(asyncio.run(first_request(registry(), "ann", "q", 3000)), 0))
    # The provider reports far more than the step could cost: the pool is blocked, over its cap.
    asyncio.run(guard.settle(held, UsageEvent(input_tokens=1000, output_tokens=200_000)))
    assert counter(dynamo, bc.CHAT_SCOPE).blocked
    shell(monkeypatch, budget_usd="1", budget_shards="1")
    args = parse(["budget", "unblock", "--actor", "ops"])
    assert args.func(args) == 0
    assert json.loads(capsys.readouterr().out)["unblocked"] is True
    shards = bs.read_pool_sync(dynamo.client, dynamo.name(BUDGET), bc.CHAT_SCOPE, "total", 4)
    assert all(s.cap == Decimal("0.12") and s.shards == 4 and not s.blocked for s in shards)
    committed = sum((s.committed or 0 for s in shards), Decimal(0))
    assert all(s.room is not None and s.room >= 0 for s in shards)
    assert sum((s.room for s in shards), Decimal(0)) == max(Decimal(0), Decimal("0.12") - committed)
    # The server's next hold reads the pool as it was set, and no shard goes below zero.
    from groundchat.spending.step_guard import SpendCapReached

    server = BudgetGuard(dynamo, settings, "bo", "c2", "r2", "scripted")
    try:
        asyncio.run(server.reserve(asyncio.run(first_request(registry(), "bo", "q", 3000)), 0))
    except SpendCapReached:
        pass
    after = bs.read_pool_sync(dynamo.client, dynamo.name(BUDGET), bc.CHAT_SCOPE, "total", 4)
    assert all(s.room >= 0 for s in after)
