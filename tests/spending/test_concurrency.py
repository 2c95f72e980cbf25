"""64 requests at once against caps that fit only some of them: the caps hold exactly."""
from __future__ import annotations

import asyncio
from collections import Counter as Tally
from decimal import Decimal

from groundchat.store import budget_counters as bc
from groundchat.store.tables import USAGE
from groundchat_testkit.scripted import ScriptedModel, Step

from .helpers import ask, counter, open_reservations, total, usage_rows

CHAT_CAP = Decimal("0.10")
USER_CAP = Decimal("0.025")
USERS = [f"user-{i}" for i in range(8)]
# Prices in conftest: $1 per million input tokens, $2 per million output tokens.
STEP_0_COST = Decimal("0.0044")  # 400 in, 2,000 out
STEP_1_COST = Decimal("0.0055")  # 500 in, 2,500 out


def scripted() -> ScriptedModel:
    return ScriptedModel(
        [
            Step(tool_calls=[("lookup", {})], input_tokens=400, output_tokens=2000),
            Step(text="The lookup says 42.", input_tokens=500, output_tokens=2500),
        ],
        model_id="scripted",
    )


async def test_64_concurrent_requests_never_pass_either_cap(dynamo, budget_settings):
    settings = budget_settings(chat=str(CHAT_CAP), user=str(USER_CAP))
    models = [scripted() for _ in range(64)]
    deletes: list[dict] = []

    def watch_deletes(params, **_):
        # Money spent is never forgotten: no request may delete a usage row, in or out of a transaction.
        deletes.extend([params] if "Key" in params else [i["Delete"] for i in params.get("TransactItems", []) if "Delete" in i])

    dynamo.client.meta.events.register("before-parameter-build.dynamodb.DeleteItem", watch_deletes)
    dynamo.client.meta.events.register("before-parameter-build.dynamodb.TransactWriteItems", watch_deletes)
    results = await asyncio.gather(*(
        ask(dynamo, settings, models[i], caller=USERS[i % len(USERS)])
        for i in range(64)
    ))

    rows = usage_rows(dynamo)
    charged = total(rows)
    # Not "about": the exact sum of every charge is within the chat's cap and each person's.
    assert charged <= CHAT_CAP
    for user in USERS:
        assert total([r for r in rows if r["caller"] == user]) <= USER_CAP

    outcomes = Tally(r["status"] if r["status"] == 429 else r["done"] for r in results)
    # The caps fit only some of the 64: some were answered (how many finish both steps depends on
    # how reservations and settlements interleave), the rest refused before any model call.
    assert outcomes["complete"] + outcomes["spend-cap"] > 0 and charged > 0
    assert outcomes[429] > 0
    # Every request either completed or was refused by a cap: 429 before any model call, or a
    # limit frame and done spend-cap. Nothing ended any other way.
    assert set(outcomes) <= {"complete", "spend-cap", 429}
    for result in results:
        if result["status"] == 429:
            assert result["model_calls"] == 0
            assert result["scope"] in ("chat", "user")
        elif result["done"] == "spend-cap":
            limits = [f for f in result["frames"] if f.type == "limit"]
            assert len(limits) == 1 and limits[0].data["scope"] in ("chat", "user")
            assert "spending cap" in limits[0].data["message"]

    # One usage row per model call, each at the scripted model's exact cost.
    by_run = {r["run_id"]: [] for r in results}
    for row in rows:
        by_run[row["run_id"]].append(row)
    for result in results:
        run_rows = sorted(by_run[result["run_id"]], key=lambda r: r["step"])
        assert len(run_rows) == result["model_calls"]
        assert [r["charged"] for r in run_rows] == [STEP_0_COST, STEP_1_COST][: len(run_rows)]
        if result["status"] == 200 and result["done"] == "complete":
            assert len(run_rows) == 2
    assert charged == STEP_0_COST * sum(1 for r in rows if r["step"] == 0) + STEP_1_COST * sum(1 for r in rows if r["step"] == 1)

    # The counters are exactly the sum of the usage rows, and nothing is left held.
    chat = counter(dynamo, bc.CHAT_SCOPE)
    assert (chat.spent, chat.reserved, chat.committed) == (charged, 0, charged)
    for user in USERS:
        mine = counter(dynamo, bc.user_scope(user))
        spent = total([r for r in rows if r["caller"] == user])
        assert (mine.spent, mine.reserved, mine.committed) == (spent, 0, spent)
    assert open_reservations(dynamo) == []
    assert deletes, "the watch saw no deletes at all (settles close reservations): it is not wired"
    assert [op for op in deletes if op["TableName"] == dynamo.name(USAGE)] == []
