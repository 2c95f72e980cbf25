"""Every table, defined once. The same definitions create tables in moto and are checked against
template.yaml, so code and infrastructure cannot drift apart.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from groundchat.config import Settings

if TYPE_CHECKING:
    from groundchat.store.items import CreateTableRequest, GlobalSecondaryIndex, KeyElement, Projection


@dataclass(frozen=True)
class Index:
    name: str
    hash_key: tuple[str, str]
    range_key: tuple[str, str] | None = None
    # The attributes besides the keys an index holds a copy of; None: every attribute (ALL).
    projected: tuple[str, ...] | None = None

    def projection(self) -> Projection:
        if self.projected is None:
            return {"ProjectionType": "ALL"}
        return {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(self.projected)}


@dataclass(frozen=True)
class TableDef:
    logical: str  # the name the code uses, e.g. "conversations"
    hash_key: tuple[str, str]  # (attribute, "S" | "N")
    range_key: tuple[str, str] | None = None
    indexes: tuple[Index, ...] = ()
    ttl_attribute: str | None = None
    env_var: str = field(default="")

    def physical_name(self, settings: Settings) -> str:
        return f"{settings.table_prefix}{self.logical}"

    def create_args(self, settings: Settings) -> CreateTableRequest:
        attrs: dict[str, str] = {}
        keys: list[KeyElement] = [{"AttributeName": self.hash_key[0], "KeyType": "HASH"}]
        attrs[self.hash_key[0]] = self.hash_key[1]
        if self.range_key:
            keys.append({"AttributeName": self.range_key[0], "KeyType": "RANGE"})
            attrs[self.range_key[0]] = self.range_key[1]
        gsis: list[GlobalSecondaryIndex] = []
        for ix in self.indexes:
            ix_keys: list[KeyElement] = [{"AttributeName": ix.hash_key[0], "KeyType": "HASH"}]
            attrs[ix.hash_key[0]] = ix.hash_key[1]
            if ix.range_key:
                ix_keys.append({"AttributeName": ix.range_key[0], "KeyType": "RANGE"})
                attrs[ix.range_key[0]] = ix.range_key[1]
            gsis.append({"IndexName": ix.name, "KeySchema": ix_keys, "Projection": ix.projection()})
        args: CreateTableRequest = {
            "TableName": self.physical_name(settings),
            "KeySchema": keys,
            "AttributeDefinitions": [{"AttributeName": k, "AttributeType": t} for k, t in attrs.items()],
            "BillingMode": "PAY_PER_REQUEST",
        }
        if gsis:
            args["GlobalSecondaryIndexes"] = gsis
        return args


CONVERSATIONS = TableDef(
    "conversations",
    hash_key=("conversation_id", "S"),
    indexes=(Index("by_owner", ("owner", "S"), ("created_at", "S")), Index("by_shared", ("shared_flag", "S"), ("shared_at", "S"))),
    ttl_attribute="expires_at",
)
MESSAGES = TableDef("messages", hash_key=("conversation_id", "S"), range_key=("seq", "N"), ttl_attribute="expires_at")
USERS = TableDef("users", hash_key=("user_id", "S"))
TRACES = TableDef(
    "traces",
    hash_key=("run_id", "S"),
    indexes=(Index("by_caller", ("caller", "S"), ("started_at", "S")),),
    ttl_attribute="expires_at",
)

# The benchmark's runs: a summary item and a detail item per run (`part`).
RUNS = TableDef(
    "runs",
    hash_key=("run_id", "S"),
    range_key=("part", "S"),
    indexes=(
        Index("by_started", ("kind", "S"), ("started_key", "S")),
        Index("by_model", ("model", "S"), ("started_key", "S")),
    ),
)
# What the runs add up to, kept in the transaction that stores each run (store/run_views.py): the
# aggregate cells the data tools sum, the values each filter can take, and the run list entries per
# filter, each served by a Query on one partition (`view`) in `entry` order.
# A rule's list entries also carry `rule_<field>` = "<rule>/<value>" for each filter field (the
# benchmark's FILTER_FIELDS, spelled out here to keep this module free of imports): one sparse
# index per field lists a rule's runs under one value of that field in `entry` order, kept by
# DynamoDB itself, so the run's transaction does not grow with it.
RULE_FIELD_INDEXES: dict[str, Index] = {
    name: Index(f"by_rule_{name}", (f"rule_{name}", "S"), ("entry", "S")) for name in ("model", "context", "task", "label")
}
# Every list entry of a graded run also carries `by_violations` = "<violation count, zero-padded>#
# <entry>": one sparse index keyed by the list (`view`) and that, so a list ordered by most or
# fewest violations is one Query. An ungraded run has no count and no attribute: not in the index.
# It holds what a run list reads (`row`, `cost_usd`), not the rule × field keys.
VIOLATIONS_INDEX = Index("by_violations", ("view", "S"), ("by_violations", "S"), projected=("row", "cost_usd"))
RUN_VIEWS = TableDef("run_views", hash_key=("view", "S"), range_key=("entry", "S"),
                     indexes=(*RULE_FIELD_INDEXES.values(), VIOLATIONS_INDEX))
# One row per model step or search: the record of money spent, never deleted by a reset.
USAGE = TableDef(
    "usage",
    hash_key=("run_id", "S"),
    range_key=("entry", "S"),
    indexes=(Index("by_caller", ("caller", "S"), ("created_at", "S")),),
)
# Spending counters per scope and period, open reservations, and the reset log.
BUDGET = TableDef(
    "budget",
    hash_key=("scope", "S"),
    range_key=("period", "S"),
    indexes=(Index("by_expiry", ("reservation_state", "S"), ("expires_at", "N")),),
)
# Public mode's rate limit: one item per visitor key and window (`bucket`), counted by conditional
# updates; TTL deletes each a window after it ends, once the sliding window no longer reads it.
RATE_LIMITS = TableDef("rate_limits", hash_key=("bucket", "S"), ttl_attribute="expires_at")

# The answer in progress per conversation (store/answers_in_progress.py): what a reload or another
# instance reads to follow it, and where a stop is asked. One item per conversation, overwritten by
# its next answer; TTL removes it a day after it ends, deletion with the conversation before that.
# `by_lapse`: only running records carry `running_flag`, so this sparse index lists the answers in
# progress by lease end, and the sweep finds the ones whose process died.
ANSWERS = TableDef("answers", hash_key=("conversation_id", "S"), ttl_attribute="expires_at",
                   indexes=(Index("by_lapse", ("running_flag", "S"), ("active_until", "N"), projected=("owner", "run_id")),))
# Readers' ratings of answers (store/feedback.py): one item per person per answer, beside the
# conversation's messages (`entry` = "<seq>#<person>"), deleted with it; `by_day` serves the export
# and the daily counts.
FEEDBACK = TableDef("feedback", hash_key=("conversation_id", "S"), range_key=("entry", "S"),
                    indexes=(Index("by_day", ("day", "S"), ("at", "S")),), ttl_attribute="expires_at")

# Deletion jobs (store/deletion_jobs.py): one item per conversation being deleted, written before
# anything of it goes and kept until every copy of its words is gone; a finished job stays a day
# (TTL), wordless, so a repeated DELETE is answered as done. The sweep reads the pending ones.
DELETIONS = TableDef("deletions", hash_key=("conversation_id", "S"), ttl_attribute="expires_at")

ALL_TABLES: tuple[TableDef, ...] = (CONVERSATIONS, MESSAGES, USERS, TRACES, RUNS, RUN_VIEWS, USAGE, BUDGET, RATE_LIMITS,
                                    ANSWERS, FEEDBACK, DELETIONS)

