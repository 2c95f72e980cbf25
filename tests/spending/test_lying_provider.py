"""A provider that reports more usage than a step can cost (here 200,000 output tokens where 3,000
were allowed): charged as reported up to the step's reservation and the operator's bound, the rest
recorded as disputed, flagged, the answer ends, and nothing more is spent by anyone until an
operator unblocks. Answers running at once pass the cap together by at most one bound."""
from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from groundchat.spending.budget_guard import BudgetGuard
from groundchat.spending.operator import unblock_budget
from groundchat.store import budget_counters as bc
from groundchat_testkit.scripted import ScriptedModel, Step

from groundchat.store import budget_shards as bs
from groundchat.store.tables import BUDGET

from .helpers import ask, counter, first_request, open_reservations, registry, usage_rows

CHAT_CAP = Decimal("0.10")
LIE = 200_000  # output tokens reported; max_output_tokens sent is 3,000


def reported_cost(row) -> Decimal:
    """What the provider's report prices at (the scripted model: $1 in, $2 out per million)."""
    return (Decimal(row["input_tokens"]) + 2 * Decimal(row["output_tokens"])) / 1_000_000


def lying() -> ScriptedModel:
    return ScriptedModel([Step(tool_calls=[("lookup", {})], output_tokens=LIE), Step(text="never", output_tokens=LIE)],
                         model_id="scripted")


async def test_one_lie_stops_every_later_question_before_any_call(dynamo, budget_settings):
    settings = budget_settings(chat=str(CHAT_CAP), user="1")
    first = await ask(dynamo, settings, lying(), caller="ann")
    assert first["done"] == "spend-cap"
    [limit] = [f for f in first["frames"] if f.type == "limit"]
    assert limit.data["scope"] == "chat" and "more usage than this step could cost" in limit.data["message"]
    [row] = usage_rows(dynamo)
    assert row["over_bound"] is True and row["charged"] > row["reserved"]
    reported = reported_cost(row)
    # Charged as reported up to the reservation and the bound; the rest is disputed, not charged.
    assert row["charged"] == row["reserved"] + settings.step_overrun_usd < reported
    assert row["disputed"] == reported - row["charged"]
    assert first["model_calls"] == 1  # the lying step's tool call never ran into a second step

    models = [lying() for _ in range(5)]
    later = [await ask(dynamo, settings, m, caller=f"u{i}") for i, m in enumerate(models)]
    assert {(r["status"], r["code"]) for r in later} == {(429, "spend-cap")}
    assert all("Spending is stopped" in r["message"] for r in later) and sum(m.calls for m in models) == 0
    chat = counter(dynamo, bc.CHAT_SCOPE)
    assert chat.spent == row["charged"] and chat.reserved == 0 and open_reservations(dynamo) == []

    assert (await unblock_budget(dynamo, settings, actor="ops")) is not None
    # Unblocked with room left under the cap, the next lie is charged up to its bound again; with
    # no room for that, it takes the pool's one overdraft: the cap is passed by at most the bound.
    again = await ask(dynamo, settings, lying(), caller="bob")
    assert again["status"] == 200 and again["done"] == "spend-cap"
    spent = counter(dynamo, bc.CHAT_SCOPE).spent
    assert spent == sum((r["charged"] for r in usage_rows(dynamo)), Decimal(0))
    assert CHAT_CAP < spent <= CHAT_CAP + settings.step_overrun_usd
    assert (await unblock_budget(dynamo, settings, actor="ops")) is not None
    # Now over the cap: the operator must reset or raise it; no shard has room to lend.
    last = await ask(dynamo, settings, lying(), caller="cy")
    assert (last["status"], last["code"]) == (429, "spend-cap") and "cap" in last["message"]


async def test_twenty_at_once_pass_the_cap_only_by_the_steps_already_running(dynamo, budget_settings):
    settings = budget_settings(chat=str(CHAT_CAP), user="1")
    probe = await first_request(registry(), "p", "How do the contexts compare?", settings.max_output_tokens)
    guard = BudgetGuard(dynamo, settings, "p", "c", "r", "scripted")
    first, tokens = guard.step_worst_case(probe)
    room = first + guard.answering_worst_case(probe, tokens)[0]  # what each question holds to start
    results = await asyncio.gather(*(ask(dynamo, settings, lying(), caller=f"v{i}") for i in range(20)))
    rows = usage_rows(dynamo)
    started = [r for r in results if r["status"] == 200]
    # Only questions whose room fitted under the cap started; each ran one step, over its bound.
    assert 0 < len(started) <= CHAT_CAP // room
    assert len(rows) == len(started) and all(r["over_bound"] for r in rows)
    assert all(r["model_calls"] == 1 for r in started)
    refused = [r for r in results if r["status"] == 429]
    assert len(refused) == 20 - len(started) and all(r["model_calls"] == 0 for r in refused)
    late = await ask(dynamo, settings, lying(), caller="late")
    assert late["status"] == 429 and "Spending is stopped" in late["message"]
    assert counter(dynamo, bc.CHAT_SCOPE).reserved == 0 and open_reservations(dynamo) == []


@pytest.mark.parametrize("answers, shards", [(10, 1), (10, 4), (50, 4)])
async def test_many_over_reporting_answers_at_once_pass_the_cap_by_at_most_one_bound(dynamo, budget_settings, monkeypatch,
                                                                                      answers, shards):
    monkeypatch.setenv("GROUNDCHAT_BUDGET_SHARDS", str(shards))
    probe_settings = budget_settings(chat="1", user="1")
    probe = await first_request(registry(), "p", "How do the contexts compare?", probe_settings.max_output_tokens)
    guard = BudgetGuard(dynamo, probe_settings, "p", "c", "r", "scripted")
    first, tokens = guard.step_worst_case(probe)
    room = first + guard.answering_worst_case(probe, tokens)[0]
    # Room for every answer to start, and a little more: the caps are then met by the lies alone.
    cap = room * answers + Decimal("0.01")
    settings = budget_settings(chat=str(cap), user="1")
    bound = settings.step_overrun_usd
    results = await asyncio.gather(*(ask(dynamo, settings, lying(), caller=f"v{i}") for i in range(answers)))
    started = [r for r in results if r["status"] == 200]
    assert len(started) > answers // 2  # most start (a few may meet a busy budget, and spend nothing)
    assert all(r["model_calls"] == 0 for r in results if r["status"] != 200)
    rows = usage_rows(dynamo)
    assert len(rows) == len(started) and all(r["over_bound"] for r in rows)
    chat = counter(dynamo, bc.CHAT_SCOPE)
    pool = bs.read_pool_sync(dynamo.client, dynamo.name(BUDGET), bc.CHAT_SCOPE, "total", shards)
    spent = sum((s.spent for s in pool), Decimal(0))
    charged = sum((r["charged"] for r in rows), Decimal(0))
    assert spent == charged  # the counters are the usage rows
    # Together they pass the cap by at most one step's bound; one overdraft at most.
    assert spent - cap <= bound
    assert sum(1 for r in rows if r.get("overdraft")) <= 1
    for row in rows:
        reported = reported_cost(row)
        assert row["reserved"] <= row["charged"] <= row["reserved"] + bound
        assert row["disputed"] == reported - row["charged"] > 0  # the excess is recorded, not charged
        assert counter(dynamo, bc.user_scope(row["caller"])).spent == row["charged"]
    assert sum((r["disputed"] for r in rows), Decimal(0)) > (answers // 2) * Decimal("0.3")
    assert all(s.room is None or s.room >= 0 for s in pool) and chat.blocked
    assert counter(dynamo, bc.CHAT_SCOPE).reserved == 0 and open_reservations(dynamo) == []
