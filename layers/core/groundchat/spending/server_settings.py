"""The spending settings a chat server runs with, published in the budget table.

An operator's budget command (`groundchat budget status|reset|unblock`) runs in a shell whose
GROUNDCHAT_* variables need not be the server's: reading the caps from its own settings once showed
$0.593 left of a $1 cap while the chat, capped at $0.12, was over it, and an unblock rebased every
shard to $1. So the chat function writes the settings the caps are enforced with here when it
starts (locally and in AWS, cold start), and the commands act on them, never on their own defaults.
One item; the server started last is the one it describes (during a deploy both versions enforce
their own cap, budget_shards.py).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from groundchat.store.budget_counters import key, n, plain
from groundchat.store import item_values

if TYPE_CHECKING:
    from groundchat.config import Settings
    from groundchat.store.items import DynamoClient, Item

SCOPE = "server-settings"
PERIOD = "spending"


class NoServerSettings(Exception):
    """No chat server has published its spending settings in this store."""


@dataclass(frozen=True)
class ServerSettings:
    budget_usd: Decimal
    user_budget_usd: Decimal
    public_budget_usd: Decimal | None
    budget_shards: int
    budget_period: str
    mode: str
    step_overrun_usd: Decimal
    published_at: str

    @classmethod
    def of(cls, settings: Settings, at: str) -> "ServerSettings":
        public = getattr(settings, "public_budget_usd", None)
        return cls(budget_usd=Decimal(settings.budget_usd), user_budget_usd=Decimal(settings.user_budget_usd),
                   public_budget_usd=Decimal(public) if public is not None else None,
                   budget_shards=int(settings.budget_shards), budget_period=settings.budget_period,
                   mode=getattr(settings, "mode", "private"),
                   step_overrun_usd=Decimal(getattr(settings, "step_overrun_usd", 0)), published_at=at)

    def item(self) -> Item:
        item: Item = {**key(SCOPE, PERIOD), "budget_usd": n(self.budget_usd), "user_budget_usd": n(self.user_budget_usd),
                      "budget_shards": n(self.budget_shards), "budget_period": {"S": self.budget_period},
                      "mode": {"S": self.mode}, "step_overrun_usd": n(self.step_overrun_usd),
                      "published_at": {"S": self.published_at}}
        if self.public_budget_usd is not None:
            item["public_budget_usd"] = n(self.public_budget_usd)
        return item

    @classmethod
    def from_item(cls, item: Item) -> "ServerSettings":
        values = plain(item)
        return cls(budget_usd=item_values.amount(values, "budget_usd"), user_budget_usd=item_values.amount(values, "user_budget_usd"),
                   public_budget_usd=item_values.amount(values, "public_budget_usd") if values.get("public_budget_usd") is not None else None,
                   budget_shards=item_values.whole(values, "budget_shards"), budget_period=str(values["budget_period"]),
                   mode=str(values["mode"]), step_overrun_usd=item_values.amount(values, "step_overrun_usd", 0),
                   published_at=str(values["published_at"]))

    def applied_to(self, settings: Settings) -> Settings:
        """`settings` (the command's own: its store, its names) with the server's spending ones."""
        update = {"budget_usd": self.budget_usd, "user_budget_usd": self.user_budget_usd,
                  "public_budget_usd": self.public_budget_usd, "budget_shards": self.budget_shards,
                  "budget_period": self.budget_period, "mode": self.mode}
        if "step_overrun_usd" in type(settings).model_fields:
            update["step_overrun_usd"] = self.step_overrun_usd
        return settings.model_copy(update=update)

    def public(self) -> dict[str, str | int | None]:
        return {"budget_usd": str(self.budget_usd), "user_budget_usd": str(self.user_budget_usd),
                "public_budget_usd": str(self.public_budget_usd) if self.public_budget_usd is not None else None,
                "budget_shards": self.budget_shards, "budget_period": self.budget_period, "mode": self.mode,
                "step_overrun_usd": str(self.step_overrun_usd), "published_at": self.published_at}


def publish_sync(client: DynamoClient, table: str, settings: Settings, now: dt.datetime | None = None) -> ServerSettings:
    at = (now or dt.datetime.now(dt.timezone.utc)).isoformat(timespec="seconds").replace("+00:00", "Z")
    published = ServerSettings.of(settings, at)
    client.put_item(TableName=table, Item=published.item())
    return published


def read_sync(client: DynamoClient, table: str) -> ServerSettings:
    got = client.get_item(TableName=table, Key=key(SCOPE, PERIOD), ConsistentRead=True)
    if "Item" not in got:
        raise NoServerSettings("no chat server has published its spending settings in this store: start it "
                               "(`make run`) or deploy it, then run the command again")
    return ServerSettings.from_item(got["Item"])
