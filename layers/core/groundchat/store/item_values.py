"""One attribute of a stored item read as the type its table gives it: a number as `int` or
`Decimal` (the resource layer reads every number back as a Decimal), a string as `str`. An item
written by this code always has these shapes; one that does not fails here, naming the attribute,
instead of somewhere further on. A `default` is what a missing attribute reads as."""
from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:
    from groundchat.store.items import AttributeValue, StoredItem, StoredValue

Stored = Mapping[str, "StoredValue"]


def whole(item: Stored, name: str, default: int | None = None) -> int:
    value = _present(item, name, default)
    if isinstance(value, (int, Decimal, str)):
        return int(value)
    raise TypeError(f"the stored attribute {name!r} is not a whole number: {value!r}")


def amount(item: Stored, name: str, default: Decimal | int | None = None) -> Decimal:
    value = _present(item, name, default)
    if isinstance(value, (int, Decimal, str)):
        return Decimal(value)
    raise TypeError(f"the stored attribute {name!r} is not a number: {value!r}")


def text(item: Stored, name: str, default: str | None = None) -> str:
    value = _present(item, name, default)
    if isinstance(value, str):
        return value
    raise TypeError(f"the stored attribute {name!r} is not a string: {value!r}")


def optional_text(item: Stored, name: str) -> str | None:
    """A string attribute that may be absent (or written as None)."""
    value = item.get(name)
    return None if value is None else text(item, name)


def strings(item: Stored, name: str) -> set[str]:
    """A string set (a user's grants); absent reads as empty."""
    value = item.get(name)
    if value is None:
        return set()
    if isinstance(value, (set, list)):
        return {str(v) for v in value}
    raise TypeError(f"the stored attribute {name!r} is not a set of strings: {value!r}")


def texts(item: Stored, name: str) -> list[str]:
    """A list of strings, in order (a violation's tags); absent reads as empty."""
    value = item.get(name)
    if value is None:
        return []
    if isinstance(value, list):
        found = [v for v in value if isinstance(v, str)]
        if len(found) == len(value):
            return found
    raise TypeError(f"the stored attribute {name!r} is not a list of strings: {value!r}")


def maps(item: Stored, name: str) -> list[StoredItem]:
    """A list of maps, in order (a run's violations, a violation's nodes); absent reads as empty."""
    value = item.get(name)
    if value is None:
        return []
    if isinstance(value, list):
        found = [v for v in value if isinstance(v, dict)]
        if len(found) == len(value):
            return found
    raise TypeError(f"the stored attribute {name!r} is not a list of maps: {value!r}")


def string_pairs(item: Stored, name: str) -> list[tuple[str, str]]:
    """A list of two-string lists (a reservation's counters: scope and period); absent reads as empty."""
    value = item.get(name)
    if value is None:
        return []
    if isinstance(value, list):
        found = [(str(pair[0]), str(pair[1])) for pair in value if isinstance(pair, list) and len(pair) == 2]
        if len(found) == len(value):
            return found
    raise TypeError(f"the stored attribute {name!r} is not a list of pairs: {value!r}")


def _present(item: Stored, name: str, default: StoredValue) -> StoredValue:
    if name in item:
        return item[name]
    if default is None:
        raise KeyError(f"the stored item has no {name!r}")
    return default


def client_text(item: Mapping[str, AttributeValue], name: str) -> str:
    """A string attribute of an item as the low-level client speaks it ({"S": "…"})."""
    value = item[name].get("S")
    if isinstance(value, str):
        return value
    raise TypeError(f"the stored attribute {name!r} is not a string: {item[name]!r}")


def client_whole(item: Mapping[str, AttributeValue], name: str) -> int:
    """A number attribute of an item as the low-level client speaks it ({"N": "…"})."""
    value = item[name].get("N")
    if isinstance(value, str):
        return int(Decimal(value))
    raise TypeError(f"the stored attribute {name!r} is not a number: {item[name]!r}")
