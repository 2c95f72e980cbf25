"""Spending caps on the local stack: reservation+settle latency per step (p50/p95), and the
overspend of 64 concurrent requests against caps that fit only some of them.

Runs moto's DynamoDB server on 127.0.0.1 (a free port), as `groundchat serve` does, and talks to
it over HTTP with the same boto3 code as in AWS. Prints figures, asserts nothing.
"""
from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter as Tally
from decimal import Decimal
from pathlib import Path

from groundchat.money import money_text

STEPS = 300
CONCURRENT = 64
CHAT_CAP = Decimal("0.10")
USER_CAP = Decimal("0.025")
USERS = [f"bench-user-{i}" for i in range(8)]
MODEL_ID = "bench-scripted"



def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def latency(dynamo, settings) -> dict[str, list[float]]:
    from groundchat.spending.budget_guard import BudgetGuard
    from groundchat.models.messages import Message, ModelRequest, UsageEvent

    guard = BudgetGuard(dynamo, settings, "latency-user", "bench-conv", "bench-latency", MODEL_ID)
    request = ModelRequest(system="bench", messages=[Message(role="user", content="How do the contexts compare?")], tools=[], max_output_tokens=3000)
    times: dict[str, list[float]] = {"reserve": [], "settle": [], "step": []}
    for step in range(STEPS):
        started = time.perf_counter()
        held = await guard.reserve(request, step)
        reserved = time.perf_counter()
        await guard.settle(held, UsageEvent(input_tokens=120, output_tokens=40))
        settled = time.perf_counter()
        times["reserve"].append((reserved - started) * 1000)
        times["settle"].append((settled - reserved) * 1000)
        times["step"].append((settled - started) * 1000)
    return times


async def concurrency(dynamo, settings) -> dict[str, object]:
    """64 questions at once through the answer use case the chat endpoint calls."""
    from pydantic import BaseModel

    from groundchat.auth.callers import CHAT_USE, RUNS_READ, Caller
    from groundchat.chat.answer import Refusal, answer_question
    from groundchat.services import Services
    from groundchat.store import budget_counters as bc
    from groundchat.store import usage as us
    from groundchat.store.tables import BUDGET, USAGE
    from groundchat.tools.base import define_tool
    from groundchat_testkit.scripted import ScriptedModel, Step

    class NoArgs(BaseModel):
        pass

    @define_tool(name="lookup", description="Looks up a figure.", input_model=NoArgs, permission="runs.read")
    async def lookup(ctx, args):
        return {"answer": 42}

    for user in USERS:
        await Services(settings=settings, dynamo=dynamo).users.grant(user, [CHAT_USE, RUNS_READ])
    run_ids: list[str] = []

    async def one(i: int) -> str:
        model = ScriptedModel(
            [Step(tool_calls=[("lookup", {})], input_tokens=400, output_tokens=2000), Step(text="It is 42.", input_tokens=500, output_tokens=2500)],
            model_id=MODEL_ID,
        )
        services = Services(settings=settings, dynamo=dynamo, model_override=model, tools_override=[lookup])
        outcome = await answer_question(services, Caller(id=USERS[i % len(USERS)]), {"message": "How do the contexts compare?"})
        if isinstance(outcome, Refusal):
            return str(outcome.status)
        run_ids.append(outcome.run_id)
        # Drained to the end, as the chat endpoint does: the exchange commits as its frames run out.
        frames = [f async for f in outcome.frames]
        return frames[-1].data["reason"]

    started = time.perf_counter()
    outcomes = Tally(await asyncio.gather(*(one(i) for i in range(CONCURRENT))))
    elapsed = time.perf_counter() - started
    rows = [r for r in us.all_rows_sync(dynamo.client, dynamo.name(USAGE)) if r["run_id"] in run_ids]
    charged = us.total_charged(rows)
    chat = bc.read_counter_sync(dynamo.client, dynamo.name(BUDGET), bc.CHAT_SCOPE, "total")
    worst_user = max(
        (us.total_charged([r for r in rows if r["caller"] == u]) - USER_CAP for u in USERS), default=Decimal(0)
    )
    return {
        "outcomes": dict(outcomes),
        "charged": charged,
        "overspend_chat": max(Decimal(0), charged - CHAT_CAP),
        "overspend_user": max(Decimal(0), worst_user),
        "counter_minus_rows": chat.spent - charged,
        "elapsed_s": elapsed,
    }


def stack(prefix: str, chat_cap: Decimal, user_cap: Decimal):
    """Settings and tables of their own for one phase, so each starts from empty counters."""
    os.environ.update({
        "GROUNDCHAT_TABLE_PREFIX": prefix, "GROUNDCHAT_BUDGET_USD": str(chat_cap), "GROUNDCHAT_USER_BUDGET_USD": str(user_cap),
    })
    from groundchat.config import get_settings, reset_settings_cache
    from groundchat.store.dynamo import Dynamo, create_tables

    reset_settings_cache()
    settings = get_settings()
    dynamo = Dynamo(settings)
    create_tables(dynamo)
    return dynamo, settings


def main() -> int:
    from groundchat.config import reset_settings_cache
    from groundchat_cli.moto_store import LocalDynamo

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["GROUNDCHAT_HOME"] = tmp
        reset_settings_cache()
        # The same moto server the local stack runs, serialized the same way.
        server = LocalDynamo().start()
        endpoint = server.endpoint
        port = endpoint.rsplit(":", 1)[1]
        try:
            prices = Path(tmp) / "prices.json"
            prices.write_text(json.dumps({MODEL_ID: {"input_per_mtok": "1.00", "output_per_mtok": "2.00"}}))
            os.environ.update({
                "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_DEFAULT_REGION": "eu-west-1",
                "GROUNDCHAT_DYNAMODB_ENDPOINT": f"http://127.0.0.1:{port}", "GROUNDCHAT_PRICES_FILE": str(prices),
                "GROUNDCHAT_BUDGET_PERIOD": "total", "GROUNDCHAT_HOME": tmp,
            })
            times = asyncio.run(latency(*stack("bench-latency-", Decimal(1000), Decimal(1000))))
            print(f"bench/budget.py: moto server on 127.0.0.1:{port}, {STEPS} steps one after another")
            for name in ("reserve", "settle", "step"):
                label = "reserve+settle" if name == "step" else name
                print(f"  {label:<15} p50 {statistics.median(times[name]):6.2f} ms   p95 {percentile(times[name], 0.95):6.2f} ms")

            result = asyncio.run(concurrency(*stack("bench-concurrency-", CHAT_CAP, USER_CAP)))
            print(f"  {CONCURRENT} concurrent requests, chat cap ${CHAT_CAP}, per-person cap ${USER_CAP} ({len(USERS)} people):")
            print(f"    outcomes {result['outcomes']} in {result['elapsed_s']:.2f} s")
            print(f"    charged ${result['charged']} of ${CHAT_CAP}")
            print(f"    overspend: chat ${result['overspend_chat']}, worst person ${result['overspend_user']}")
            print(f"    chat counter minus the sum of usage rows: ${money_text(result['counter_minus_rows'])}")
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
