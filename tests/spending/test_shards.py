"""The chat's total as a pool of shards (store/budget_shards.py): holds borrow across shards and
are refused only when the pool together cannot hold them; the operator sees the sum; a changed cap
or shard count re-splits the rooms without passing the cap; a lie blocks every shard; a settlement
the budget stays too busy for waits for the sweep and is never released as unspent."""
from __future__ import annotations

from decimal import Decimal

import pytest

from groundchat.money import cost_text
from groundchat.models.messages import Message, ModelRequest, UsageEvent
from groundchat.spending.budget_guard import BudgetGuard
from groundchat.spending.operator import budget_status, reset_budget, sweep_expired, unblock_budget
from groundchat.spending.step_guard import SpendCapReached
from groundchat.store import budget_counters as bc
from groundchat.store import budget_shards as bs
from groundchat.store.tables import BUDGET
from groundchat.spending.search_charge import SearchCharge

from .helpers import open_reservations, total, usage_rows
from .test_step_guard import ConflictingClient

REQUEST = ModelRequest(system="s", messages=[Message(role="user", content="q")], tools=[], max_output_tokens=1000)


@pytest.fixture
def shards(budget_settings, monkeypatch):
    def make(count: int, chat: str = "0.02", user: str = "1"):
        monkeypatch.setenv("GROUNDCHAT_BUDGET_SHARDS", str(count))
        return budget_settings(chat=chat, user=user)

    return make


def pool(dynamo) -> list[bs.Shard]:
    return bs.read_pool_sync(dynamo.client, dynamo.name(BUDGET), bc.CHAT_SCOPE, "total")


def rooms(dynamo) -> Decimal:
    return sum((s.room or Decimal(0) for s in pool(dynamo)), Decimal(0))


def guard(dynamo, settings, who: str = "ann") -> BudgetGuard:
    return BudgetGuard(dynamo, settings, who, f"c-{who}", f"r-{who}", "scripted")


async def hold_until_refused(dynamo, settings) -> tuple[list, SpendCapReached]:
    held = []
    while True:
        try:
            held.append(await guard(dynamo, settings, f"u{len(held)}").reserve(REQUEST, 0))
        except SpendCapReached as refused:
            return held, refused


async def test_a_pool_of_8_holds_exactly_what_one_counter_would(dynamo, shards):
    settings = shards(8)
    worst = guard(dynamo, settings).step_worst_case(REQUEST)[0]
    held, refused = await hold_until_refused(dynamo, settings)
    # Each shard has an eighth of $0.02, less than one step: every hold borrowed, and the pool
    # held as many as one counter would have, refused only when all together could not.
    assert worst > Decimal("0.02") / 8
    assert len(held) == Decimal("0.02") // worst
    assert sum(h.amount for h in held) <= Decimal("0.02")
    left = Decimal("0.02") - worst * len(held)
    assert f"and {cost_text(left)} is left" in refused.message
    assert rooms(dynamo) == left and all((s.room or 0) >= 0 for s in pool(dynamo))
    assert {scope for h in held for scope, _ in h.counters if bc.pool_of(scope)} - {bs.shard_scope("chat", i) for i in range(8)} == set()
    status = await budget_status(dynamo, settings, "u0")
    assert Decimal(status["chat"]["reserved"]) == worst * len(held) and Decimal(status["chat"]["remaining"]) == left


async def test_settled_steps_on_several_shards_add_up_in_the_status(dynamo, shards):
    settings = shards(8, chat="1")
    for i in range(20):
        g = guard(dynamo, settings, f"p{i}")
        await g.settle(await g.reserve(REQUEST, 0), UsageEvent(input_tokens=100, output_tokens=50))
        await SearchCharge.of_run(g)("what is a landmark")
    rows = usage_rows(dynamo)
    used = {s.scope for s in pool(dynamo) if s.spent}
    assert len(used) > 1  # the steps spread over the pool
    status = await budget_status(dynamo, settings, "p0")
    assert Decimal(status["chat"]["spent"]) == total(rows) and status["chat"]["reserved"] == "0"
    assert Decimal(status["chat"]["remaining"]) == 1 - total(rows) == rooms(dynamo)


async def test_a_changed_cap_or_shard_count_resplits_the_rooms_without_passing_the_cap(dynamo, shards, monkeypatch):
    settings = shards(8, chat="0.05")
    first = await guard(dynamo, settings, "a").reserve(REQUEST, 0)
    # Raised: the new room is there at once.
    settings = shards(8, chat="0.10")
    await guard(dynamo, settings, "b").reserve(REQUEST, 0)
    assert rooms(dynamo) == Decimal("0.10") - 2 * first.amount
    # Fewer shards: the dropped shards' room moves to the kept ones; what they hold stays there.
    settings = shards(2, chat="0.10")
    held, _ = await hold_until_refused(dynamo, settings)
    assert all(s.room in (None, 0) for s in pool(dynamo)[2:])
    assert (2 + len(held)) * first.amount <= Decimal("0.10") < (3 + len(held)) * first.amount
    # Lowered below what is held: refused, as one counter would be, and nothing goes negative in use.
    settings = shards(2, chat="0.01")
    with pytest.raises(SpendCapReached, match="cap of \\$0.01 is reached"):
        await guard(dynamo, settings, "z").reserve(REQUEST, 0)
    status = await budget_status(dynamo, settings, "z")
    assert Decimal(status["chat"]["reserved"]) == (2 + len(held)) * first.amount and status["chat"]["remaining"] == "0"


async def test_a_counter_from_before_shards_is_taken_over_as_it_stands(dynamo, shards):
    settings = shards(1, chat="1")
    # Today's single counter, written before rooms existed: $0.30 spent.
    dynamo.client.put_item(TableName=dynamo.name(BUDGET), Item={
        **bc.key("chat", "total"), "spent": bc.n(Decimal("0.3")), "reserved": bc.n(0), "committed": bc.n(Decimal("0.3")), "cap": bc.n(1)})
    await guard(dynamo, settings).reserve(REQUEST, 0)
    [first] = [s for s in pool(dynamo) if s.exists]
    assert first.room == Decimal("0.7") - first.reserved and first.spent == Decimal("0.3")


async def test_a_lie_on_one_shard_stops_every_shard_until_unblocked(dynamo, shards):
    settings = shards(8, chat="1")
    liar = guard(dynamo, settings, "liar")
    charge = await liar.settle(await liar.reserve(REQUEST, 0), UsageEvent(input_tokens=10, output_tokens=200_000))
    assert charge["over_bound"] is True
    assert all(s.blocked for s in pool(dynamo)[:8])
    for i in range(8):  # whichever shard a hold lands on
        with pytest.raises(SpendCapReached, match="Spending is stopped"):
            await guard(dynamo, settings, f"v{i}").reserve(REQUEST, 0)
    assert (await budget_status(dynamo, settings, "v0"))["chat"]["blocked"]
    assert (await unblock_budget(dynamo, settings, actor="ops"))["unblocked"] is True
    assert not any(s.blocked for s in pool(dynamo))
    assert rooms(dynamo) == 1 - Decimal(charge["charged"])  # re-split from what the lie cost
    assert (await guard(dynamo, settings, "after").reserve(REQUEST, 0)).amount > 0


async def test_a_reset_of_the_pool_gives_every_shard_its_spent_back(dynamo, shards):
    settings = shards(8, chat="1")
    for i in range(10):
        g = guard(dynamo, settings, f"p{i}")
        await g.settle(await g.reserve(REQUEST, 0), UsageEvent(input_tokens=100, output_tokens=50))
    held = await guard(dynamo, settings, "holder").reserve(REQUEST, 0)
    record = await reset_budget(dynamo, settings, "chat", actor="ops")
    assert Decimal(record["spent_reset"]) == total(usage_rows(dynamo)) and Decimal(record["reserved_kept"]) == held.amount
    assert rooms(dynamo) == 1 - held.amount
    status = await budget_status(dynamo, settings, "holder")
    assert status["chat"]["spent"] == "0" and Decimal(status["chat"]["reserved"]) == held.amount


async def test_a_settlement_that_stays_busy_is_recorded_and_the_sweep_counts_it(dynamo, shards, monkeypatch):
    settings = shards(8, chat="1")
    g = guard(dynamo, settings)
    held = await g.reserve(REQUEST, 0)
    monkeypatch.setattr("groundchat.spending.budget_guard.SETTLE_ATTEMPTS", 3)
    real = dynamo.client
    monkeypatch.setattr(g.dynamo, "client", BusyTransactions(real))
    charge = await g.settle(held, UsageEvent(input_tokens=100, output_tokens=50))
    monkeypatch.setattr(g.dynamo, "client", real)
    assert charge["settlement"] == "pending" and usage_rows(dynamo) == []
    # Until the sweep runs it, the reservation still holds the step's worst case.
    status = await budget_status(dynamo, settings, "ann")
    assert Decimal(status["chat"]["reserved"]) == held.amount
    # Expired long since: the sweep settles it, and never releases it as if unspent.
    assert await sweep_expired(dynamo, now=held.expires_at + 3600) == []
    [row] = usage_rows(dynamo)
    assert row["charged"] == Decimal(charge["charged"])
    status = await budget_status(dynamo, settings, "ann")
    assert (Decimal(status["chat"]["spent"]), status["chat"]["reserved"]) == (row["charged"], "0")
    assert Decimal(status["you"]["spent"]) == row["charged"] and open_reservations(dynamo) == []
    assert rooms(dynamo) == 1 - row["charged"]
    assert await sweep_expired(dynamo, now=held.expires_at + 3600) == []  # nothing left to settle


class BusyTransactions:
    """Every transaction conflicts, every other call passes: a settlement that never lands."""

    def __init__(self, client):
        self._client = client
        self._busy = ConflictingClient(conflicts=10**9)

    def __getattr__(self, name):
        return getattr(self._client, name)

    def transact_write_items(self, **kwargs):
        return self._busy.transact_write_items(**kwargs)


async def test_the_visitors_ceiling_is_a_pool_of_its_own_beside_the_chats(dynamo, shards, monkeypatch):
    monkeypatch.setenv("GROUNDCHAT_PUBLIC_BUDGET_USD", "0.01")
    settings = shards(4, chat="1")
    held = []
    with pytest.raises(SpendCapReached, match="The spending cap for visitors of \\$0.01 is reached") as refused:
        while True:
            held.append(await BudgetGuard(dynamo, settings, f"visitor-{len(held)}", "c", "r", "scripted", public=True).reserve(REQUEST, 0))
    assert refused.value.scope == "public" and held
    visitors = bs.read_pool_sync(dynamo.client, dynamo.name(BUDGET), bc.PUBLIC_SCOPE, "total")
    assert sum(s.reserved for s in visitors) == sum(h.amount for h in held) <= Decimal("0.01")
    assert sum(s.room or 0 for s in visitors) == Decimal("0.01") - sum(h.amount for h in held)
    assert rooms(dynamo) == 1 - sum(h.amount for h in held)  # the chat's pool holds the same steps
    assert all({bc.pool_of(s) for s, _ in h.counters} >= {"chat", "public"} for h in held)
