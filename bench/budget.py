"""Spending caps on the local stack: reservation+settle latency per step (p50/p95), the
overspend of 64 concurrent requests against caps that fit only some of them, and the reservation
path at rising concurrency (16, 64, 256 answers at once) with DynamoDB's transaction conflict rule
applied (groundchat_testkit.dynamo_conflicts; moto alone never cancels a transaction), for one
counter (N=1) and a pool of 8 shards side by side: throughput, conflicts, busy refusals,
settlements left for the sweep, and the overspend, which must be $0.

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
RISING = (16, 64, 256)
POOLS = (1, 8)
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

    @define_tool(name="lookup", description="Looks up a figure.", input_model=NoArgs, permission="runs.read",
                 grounding="figures", drawer="plain", offline_template="generic")
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


async def rising(reservers: int, shards: int, small: bool):
    """One load step: `reservers` answers at once (reserve, settle, one search) through the
    conflict rule, against a cap holding a quarter of their worst cases (`small_cap`: met at
    the peak) or four times them (never met)."""
    from groundchat.spending.budget_guard import BudgetGuard
    from groundchat_testkit.budget_load import REQUEST, run_reservers, small_cap

    probe, settings = stack("bench-probe-", Decimal(1), Decimal(1))
    worst, _ = BudgetGuard(probe, settings, "p", "c", "r", MODEL_ID).step_worst_case(REQUEST)
    cap = small_cap(worst, reservers) if small else small_cap(worst, reservers) * 16
    dynamo, settings = stack(f"bench-{'small' if small else 'ample'}-n{shards}-{reservers}-", cap, Decimal(1), shards=shards)
    return await run_reservers(dynamo, settings, reservers, model_id=MODEL_ID)


def print_rising(small: bool) -> None:
    which = "1/4 of the worst cases (met at the peak)" if small else "4 times the worst cases (never met)"
    print(f"  reservation path with DynamoDB's conflict rule (each transaction in flight 10 ms), cap = {which}:")
    print(f"    {'answers':>7} {'N':>2} {'answered/s':>10} {'answered':>8} {'capped':>6} {'busy':>5} {'tx sent':>7} "
          f"{'conflicts':>9} {'per answer':>10} {'for sweep':>9} {'overspend':>9} {'rows=counters':>13}")
    for reservers in RISING:
        for shards in POOLS:
            run = asyncio.run(rising(reservers, shards, small))
            exact = run.pool.spent == run.charged and run.pool.reserved == 0 and run.rooms == run.cap - run.charged
            print(f"    {reservers:>7} {shards:>2} {run.answered_per_second:>10.1f} {run.outcomes['answered']:>8} "
                  f"{run.outcomes['capped']:>6} {run.outcomes['busy']:>5} {run.transactions:>7} {run.cancelled:>9} "
                  f"{run.conflicts_per_reservation:>10.2f} {run.pending_settlements:>9} ${money_text(run.overspend):>8} {str(exact):>13}")


def stack(prefix: str, chat_cap: Decimal, user_cap: Decimal, shards: int = 1):
    """Settings and tables of their own for one phase, so each starts from empty counters."""
    os.environ.update({
        "GROUNDCHAT_TABLE_PREFIX": prefix, "GROUNDCHAT_BUDGET_USD": str(chat_cap), "GROUNDCHAT_USER_BUDGET_USD": str(user_cap),
        "GROUNDCHAT_BUDGET_SHARDS": str(shards),
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
            print_rising(small=False)
            print_rising(small=True)
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
