"""Counts read back from a stored conversation item (`message_count`, `next_seq`): DynamoDB returns
every number as a Decimal, so a count is made an int where it is read."""
from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from groundchat.store.items import StoredValue


def stored_count(value: StoredValue) -> int:
    if isinstance(value, (int, Decimal, str)):
        return int(value)
    raise TypeError(f"a stored count is a number, not {type(value).__name__}")
