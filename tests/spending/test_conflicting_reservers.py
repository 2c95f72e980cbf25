"""64 and 256 answers reserving at once with DynamoDB's conflict rule applied (moto alone never
cancels a transaction): the cap holds to the cent, every charge is counted, a reservation that
stays busy is refused before anything is spent, and a pool of 8 shards meets fewer conflicts per
reservation than one counter, measured in the same test."""
from __future__ import annotations

import pytest

from groundchat.store.dynamo import Dynamo, create_tables
from groundchat_testkit.budget_load import REQUEST, run_reservers, small_cap


@pytest.fixture
def store(dynamo, budget_settings, monkeypatch):
    """A fresh set of tables (inside the test's moto) for each pool size."""

    def make(prefix: str, shards: int, cap: str):
        monkeypatch.setenv("GROUNDCHAT_TABLE_PREFIX", prefix)
        monkeypatch.setenv("GROUNDCHAT_BUDGET_SHARDS", str(shards))
        settings = budget_settings(chat=cap, user="1")
        fresh = Dynamo(settings)
        create_tables(fresh)
        return fresh, settings

    return make


def check_exact(run) -> None:
    # Not one cent over the cap, and every counter equal to the usage rows once the sweep has run
    # what was recorded for it.
    assert run.overspend == 0 and 0 < run.charged <= run.cap
    assert (run.pool.spent, run.pool.reserved, run.pool.committed) == (run.charged, 0, run.charged)
    assert run.rooms == run.cap - run.charged  # the shards' rooms are exactly what is left
    assert run.people_match_rows
    assert set(run.outcomes) <= {"answered", "capped", "busy"} and run.outcomes["answered"] > 0
    assert run.reservations == run.reservers


@pytest.mark.parametrize("reservers", [64, 256])
async def test_concurrent_reservers_never_pass_the_cap_and_8_shards_conflict_less_than_one(store, reservers):
    from groundchat.spending.budget_guard import BudgetGuard

    probe, settings = store("probe-", 1, "1")
    worst, _ = BudgetGuard(probe, settings, "p", "c", "r", "scripted").step_worst_case(REQUEST)
    cap = str(small_cap(worst, reservers))
    runs = {}
    for shards in (1, 8):
        dynamo, settings = store(f"n{shards}-{reservers}-", shards, cap)
        runs[shards] = await run_reservers(dynamo, settings, reservers)
        check_exact(runs[shards])
    one, eight = runs[1], runs[8]
    print(f"{reservers} reservers: N=1 {one.conflicts_per_reservation:.2f} conflicts a reservation {dict(one.outcomes)} "
          f"{one.pending_settlements} for the sweep, N=8 {eight.conflicts_per_reservation:.2f} {dict(eight.outcomes)} "
          f"{eight.pending_settlements} for the sweep")
    assert one.cancelled > 0, "the conflict rule cancelled nothing: it is not in the path"
    assert eight.conflicts_per_reservation < one.conflicts_per_reservation
