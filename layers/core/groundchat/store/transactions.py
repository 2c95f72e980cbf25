"""DynamoDB transactions that can meet others on the same items.

Real DynamoDB cancels a transaction that meets another one on the same item (TransactionConflict);
those are retried with jittered backoff. A transaction cancelled by a condition is refused at once,
with the reason for each item, so the caller can say which condition failed.
"""
from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

if TYPE_CHECKING:
    from groundchat.store.items import CancellationReason, DynamoClient, Item, TransactAction

# Retried before giving up: a conflict means another writer holds the same counter right now.
MAX_TRANSACTION_ATTEMPTS = 10


class TransactionRefused(Exception):
    """A condition in the transaction failed; `codes[i]` is the reason for item i."""

    def __init__(self, reasons: list[CancellationReason]) -> None:
        self.reasons = reasons
        self.codes = [str(r.get("Code") or "None") for r in reasons]
        super().__init__(f"transaction refused: {self.codes}")

    def failed(self, index: int) -> bool:
        return index < len(self.codes) and self.codes[index] == "ConditionalCheckFailed"

    def old_item(self, index: int) -> Item | None:
        return self.reasons[index].get("Item") if index < len(self.reasons) else None


class TransactionBusy(Exception):
    """The transaction kept meeting others on the same items; nothing was written."""


def transact_sync(client: DynamoClient, items: list[TransactAction], attempts: int | None = None) -> None:
    attempts = attempts or MAX_TRANSACTION_ATTEMPTS
    for attempt in range(attempts):
        try:
            client.transact_write_items(TransactItems=items)
            return
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code == "TransactionCanceledException":
                reasons = exc.response.get("CancellationReasons") or []
                codes = {str(r.get("Code")) for r in reasons}
                if "ConditionalCheckFailed" in codes or not codes & {"TransactionConflict", "ThrottlingError"}:
                    raise TransactionRefused(reasons) from exc
            elif code not in ("TransactionConflictException", "ThrottlingException", "ProvisionedThroughputExceededException", "InternalServerError"):
                raise
        time.sleep(min(0.5, 0.01 * 2**attempt) * random.uniform(0.5, 1.0))
    raise TransactionBusy(f"transaction still conflicting after {attempts} attempts")
