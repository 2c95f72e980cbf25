"""DynamoDB's transaction conflict rule, applied in front of a store that does not have it.

moto (the local stack and the tests) runs one request at a time, so two transactions never meet
there. DynamoDB does not queue them: a TransactWriteItems that touches an item another transaction
in flight touches is cancelled with `TransactionConflict` for that item, and a PutItem, UpdateItem
or DeleteItem on such an item is refused with `TransactionConflictException`. `ConflictRule` wraps
a low-level client and does the same, and counts what it cancelled.

A transaction is in flight for `hold_seconds`, DynamoDB's own time for one (about 10 ms, against
the 2-5 ms of a single write); then it is applied to the store beneath, whose conditions decide
whether it passes. Not for as long as moto takes to answer: moto answers one request at a time
for the whole process, so its queue would keep every item in flight as long as the busiest, and
transactions on different items would conflict as they never do in DynamoDB. Reads pass as they
are (a GetItem or BatchGetItem reads the last committed state in DynamoDB too).
"""
from __future__ import annotations

import json
import threading
import time
from collections import Counter
from typing import Any

from botocore.exceptions import ClientError

ItemKey = tuple[str, str]


class ConflictRule:
    def __init__(self, client: Any, hold_seconds: float = 0.01) -> None:
        self._client = client
        self.hold_seconds = hold_seconds
        self._lock = threading.Lock()
        self._in_flight: Counter[ItemKey] = Counter()
        self._key_names: dict[str, list[str]] = {}
        self.transactions = 0  # transactions sent
        self.cancelled = 0  # of which cancelled by the rule
        self.writes_refused = 0  # single-item writes refused by the rule

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def reset_counts(self) -> None:
        with self._lock:
            self.transactions = self.cancelled = self.writes_refused = 0

    # --- what an item is -------------------------------------------------------------------

    def _names(self, table: str) -> list[str]:
        if table not in self._key_names:
            schema = self._client.describe_table(TableName=table)["Table"]["KeySchema"]
            self._key_names[table] = [k["AttributeName"] for k in schema]
        return self._key_names[table]

    def _key(self, table: str, item_or_key: dict) -> ItemKey:
        return table, json.dumps({name: item_or_key[name] for name in self._names(table)}, sort_keys=True)

    def _action_key(self, action: dict) -> ItemKey:
        (kind, body), = action.items()
        return self._key(body["TableName"], body["Item"] if kind == "Put" else body["Key"])

    # --- the rule ----------------------------------------------------------------------------

    def transact_write_items(self, **kwargs: Any) -> Any:
        keys = [self._action_key(action) for action in kwargs["TransactItems"]]
        with self._lock:
            self.transactions += 1
            clashes = [self._in_flight[k] > 0 for k in keys]
            if any(clashes):
                self.cancelled += 1
                raise ClientError({
                    "Error": {"Code": "TransactionCanceledException", "Message": "Transaction cancelled (conflict)"},
                    "CancellationReasons": [{"Code": "TransactionConflict" if c else "None"} for c in clashes],
                }, "TransactWriteItems")
            self._in_flight.update(keys)
        try:
            time.sleep(self.hold_seconds)
        finally:
            with self._lock:
                self._in_flight.subtract(keys)
        return self._client.transact_write_items(**kwargs)

    def _single(self, operation: str, kwargs: dict, item_or_key: dict) -> Any:
        with self._lock:
            if self._in_flight[self._key(kwargs["TableName"], item_or_key)] > 0:
                self.writes_refused += 1
                raise ClientError({"Error": {"Code": "TransactionConflictException",
                                             "Message": "an ongoing transaction holds the item"}}, operation)
        return getattr(self._client, operation_method(operation))(**kwargs)

    def put_item(self, **kwargs: Any) -> Any:
        return self._single("PutItem", kwargs, kwargs["Item"])

    def update_item(self, **kwargs: Any) -> Any:
        return self._single("UpdateItem", kwargs, kwargs["Key"])

    def delete_item(self, **kwargs: Any) -> Any:
        return self._single("DeleteItem", kwargs, kwargs["Key"])


def operation_method(operation: str) -> str:
    return {"PutItem": "put_item", "UpdateItem": "update_item", "DeleteItem": "delete_item"}[operation]
