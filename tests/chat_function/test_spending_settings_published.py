"""At start the chat publishes the spending settings it enforces, which the operators' budget
commands then act on (spending/server_settings.py)."""
from __future__ import annotations

from decimal import Decimal

from fastapi.testclient import TestClient

from groundchat.spending.server_settings import read_sync
from groundchat.store.tables import BUDGET
from groundchat_testkit.scripted import ScriptedModel, Step


def test_the_chat_publishes_its_caps_when_it_starts(make_env):
    env = make_env(ScriptedModel([Step(text="hi")]))
    env.services.settings = env.settings.model_copy(update={"budget_usd": Decimal("0.12"), "user_budget_usd": Decimal("0.05"),
                                                            "budget_shards": 3, "step_overrun_usd": Decimal("0.02")})
    dynamo = env.services.dynamo
    with TestClient(env.app):  # the app's start
        published = read_sync(dynamo.client, dynamo.name(BUDGET))
    assert (published.budget_usd, published.user_budget_usd, published.budget_shards) == (Decimal("0.12"), Decimal("0.05"), 3)
    assert published.step_overrun_usd == Decimal("0.02") and published.budget_period == env.settings.budget_period
    applied = published.applied_to(env.settings.model_copy(update={"budget_usd": Decimal("1")}))
    assert applied.budget_usd == Decimal("0.12") and applied.budget_shards == 3
