"""The spending settings a chat publishes read back as it published them (spending/server_settings.py),
the visitors' ceiling of a public chat included."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

from groundchat.spending.server_settings import publish_sync, read_sync
from groundchat.store.tables import BUDGET

AT = dt.datetime(2026, 11, 5, 12, 0, tzinfo=dt.timezone.utc)


def test_a_public_chats_ceiling_is_published_and_read_back(dynamo, settings):
    public = settings.model_copy(update={"budget_usd": Decimal("2"), "user_budget_usd": Decimal("0.25"),
                                         "public_budget_usd": Decimal("0.75"), "budget_shards": 4})
    published = publish_sync(dynamo.client, dynamo.name(BUDGET), public, now=AT)
    read = read_sync(dynamo.client, dynamo.name(BUDGET))
    assert read == published
    assert (read.budget_usd, read.user_budget_usd, read.public_budget_usd, read.budget_shards) == (
        Decimal("2"), Decimal("0.25"), Decimal("0.75"), 4)
    assert read.published_at == "2026-11-05T12:00:00Z"


def test_a_private_chat_publishes_no_ceiling_for_visitors(dynamo, settings):
    publish_sync(dynamo.client, dynamo.name(BUDGET), settings.model_copy(update={"public_budget_usd": None}), now=AT)
    assert read_sync(dynamo.client, dynamo.name(BUDGET)).public_budget_usd is None
