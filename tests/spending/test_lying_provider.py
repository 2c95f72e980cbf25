"""A provider that reports more usage than a step can cost (here 200,000 output tokens where 3,000
were allowed): charged as reported, flagged, the answer ends, and nothing more is spent by anyone
until an operator unblocks. So the cap is passed only by steps already running when the first such
report came, never by a step that starts after it."""
from __future__ import annotations

import asyncio
from decimal import Decimal

from groundchat.spending.budget_guard import BudgetGuard
from groundchat.spending.operator import unblock_budget
from groundchat.store import budget_counters as bc
from groundchat_testkit.scripted import ScriptedModel, Step

from .helpers import ask, counter, first_request, open_reservations, registry, usage_rows

CHAT_CAP = Decimal("0.10")
LIE = 200_000  # output tokens reported; max_output_tokens sent is 3,000


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
    assert row["charged"] == Decimal(LIE) * 2 / 1_000_000 + Decimal(row["input_tokens"]) / 1_000_000
    assert first["model_calls"] == 1  # the lying step's tool call never ran into a second step

    models = [lying() for _ in range(5)]
    later = [await ask(dynamo, settings, m, caller=f"u{i}") for i, m in enumerate(models)]
    assert {(r["status"], r["code"]) for r in later} == {(429, "spend-cap")}
    assert all("Spending is stopped" in r["message"] for r in later) and sum(m.calls for m in models) == 0
    chat = counter(dynamo, bc.CHAT_SCOPE)
    assert chat.spent == row["charged"] and chat.reserved == 0 and open_reservations(dynamo) == []

    assert (await unblock_budget(dynamo, settings, actor="ops")) is not None
    # The chat's cap is now passed by the one report: the operator must reset or raise it too.
    again = await ask(dynamo, settings, lying(), caller="bob")
    assert (again["status"], again["code"]) == (429, "spend-cap") and "cap" in again["message"]


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
