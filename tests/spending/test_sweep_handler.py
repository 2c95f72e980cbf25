"""The sweep function as Lambda runs it on its schedule: expired reservations released, live ones kept."""
from __future__ import annotations

import asyncio
import json
import time
from decimal import Decimal

import pytest

from groundchat.spending.budget_guard import BudgetGuard
from groundchat.store import budget_counters as bc
from groundchat.store.tables import BUDGET

from .helpers import counter, first_request, open_reservations, registry
from tests.lambda_support import LambdaContext




# What EventBridge sends a function on a `Schedule` event.
SCHEDULED_EVENT = {
    "version": "0",
    "id": "53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa",
    "detail-type": "Scheduled Event",
    "source": "aws.events",
    "account": "123456789012",
    "time": "2026-11-02T10:15:00Z",
    "region": "eu-west-1",
    "resources": ["arn:aws:events:eu-west-1:123456789012:rule/groundchat-dev-SweepFunctionEveryMinute"],
    "detail": {},
}


def _state(dynamo, scope: str) -> tuple[Decimal, Decimal, Decimal]:
    c = counter(dynamo, scope)
    return c.spent, c.reserved, c.committed


@pytest.fixture
def calls(monkeypatch):
    """Every DynamoDB request the handler's own client makes, with its parameters."""
    import boto3

    seen: list[tuple[str, dict]] = []
    real_client = boto3.client

    def recording_client(service, *args, **kwargs):
        client = real_client(service, *args, **kwargs)
        if service == "dynamodb":
            client.meta.events.register(
                "before-parameter-build.dynamodb", lambda params, model, **_: seen.append((model.name, json.loads(json.dumps(params, default=str))))
            )
        return client

    monkeypatch.setattr(boto3, "client", recording_client)
    return seen


async def test_the_scheduled_sweep_releases_an_expired_reservation_and_keeps_a_live_one(dynamo, budget_settings, calls, monkeypatch, capsys):
    from sweep_function.handler import handler

    settings = budget_settings()
    request = await first_request(registry(), "ann", "q", settings.max_output_tokens)
    before = {scope: _state(dynamo, scope) for scope in (bc.CHAT_SCOPE, bc.user_scope("ann"), bc.user_scope("bob"))}

    # Ann's request crashed an hour ago, mid-step: its reservation expired long since.
    crashed = BudgetGuard(dynamo, settings, "ann", "c1", "r1", "scripted", reservation_ttl_seconds=600, clock=lambda: time.time() - 3600)
    stale = await crashed.reserve(request, 0)
    # Bob's step is running now: its reservation must stay held.
    running = BudgetGuard(dynamo, settings, "bob", "c2", "r2", "scripted")
    live = await running.reserve(request, 0)
    assert _state(dynamo, bc.CHAT_SCOPE) == (0, stale.amount + live.amount, stale.amount + live.amount)

    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    capsys.readouterr()
    # Lambda calls the handler in a thread with no event loop running, as here.
    result = await asyncio.to_thread(handler, SCHEDULED_EVENT, LambdaContext())

    assert result["count"] == 1
    [released] = result["released"]
    assert released["reservation_id"] == stale.id and released["run_id"] == "r1" and released["caller"] == "ann"
    assert Decimal(released["amount"]) == stale.amount == Decimal(result["amount"])
    json.dumps(result)  # what Lambda returns must serialize

    # Ann's counter is back to what it was; the chat's and Bob's still hold Bob's step.
    assert _state(dynamo, bc.user_scope("ann")) == before[bc.user_scope("ann")] == (0, 0, 0)
    assert _state(dynamo, bc.CHAT_SCOPE) == (0, live.amount, live.amount)
    assert _state(dynamo, bc.user_scope("bob")) == (0, live.amount, live.amount)
    [still_open] = open_reservations(dynamo)
    assert bc.plain(still_open)["scope"] == bc.reservation_scope(live.id)

    # The live step settles normally afterwards.
    await running.settle(live, None)
    assert _state(dynamo, bc.user_scope("bob"))[1] == 0

    # One EMF line: how many reservations and how much money were released.
    [metric] = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"_aws"') and "ReservationsReleased" in line]
    assert metric["ReservationsReleased"] == [1.0]
    assert metric["ReleasedUSD"] == [float(stale.amount)]

    # Exactly what the template's SweepFunction policy allows: Queries on the by_expiry index (the
    # recorded settlements, the expired reservations), and transactions of a Delete, Updates and a
    # ConditionCheck (no recorded settlement waits) on the budget table (IAM: DeleteItem,
    # UpdateItem, ConditionCheckItem).
    # (The deletion jobs' Scan goes through the table resource's own client, not recorded here:
    # tests/store/test_deletion_jobs.py.)
    budget = dynamo.name(BUDGET)
    assert {name for name, _ in calls} == {"Query", "TransactWriteItems"}
    for name, params in calls:
        if name == "Query":
            assert (params["TableName"], params["IndexName"]) == (budget, "by_expiry")
        else:
            kinds = [next(iter(item)) for item in params["TransactItems"]]
            assert kinds[0] == "Delete" and set(kinds[1:-1]) == {"Update"} and kinds[-1] == "ConditionCheck"
            assert {item[kind]["TableName"] for item, kind in zip(params["TransactItems"], kinds)} == {budget}


async def test_a_sweep_with_nothing_expired_releases_nothing(dynamo, budget_settings):
    from sweep_function.handler import handler

    settings = budget_settings()
    guard = BudgetGuard(dynamo, settings, "ann", "c", "r", "scripted")
    held = await guard.reserve(await first_request(registry(), "ann", "q", settings.max_output_tokens), 0)

    assert await asyncio.to_thread(handler, SCHEDULED_EVENT, LambdaContext()) == {"released": [], "count": 0, "amount": "0",
                                                                                  "deletions": {"finished": 0, "failed": 0, "forgotten": 0}}
    assert _state(dynamo, bc.user_scope("ann")) == (0, held.amount, held.amount)
    assert len(open_reservations(dynamo)) == 1
