"""Source dates, strictly: a moment in UTC, written with its zone, or refused at ingest.

A date without a zone could be any of 26 hours; one at another offset is easy to misread beside
the others. Both are refused with the file and line they came from, so whoever wrote the date
fixes it there, and every stored date has one form (`2025-03-01T00:00:00Z`), which orders as text
the way it orders in time.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone

UTC_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
EXAMPLE = "2025-03-01T00:00:00Z"
_STAMP = re.compile(
    r"(?P<moment>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)(?P<zone>Z|[+-]\d{2}:\d{2})?"
)
_DAY_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")


class SourceDateError(ValueError):
    """One line: where the date is, what it says, and how to write it."""


def parse_utc(text: str, *, file: str, line: int | None = None) -> str:
    """`text` as `YYYY-MM-DDTHH:MM:SSZ`, or SourceDateError naming `file:line`."""
    where = f"{file}:{line}" if line is not None else file
    value = text.strip()
    match = _STAMP.fullmatch(value)
    if match is None:
        what = "a day without a time or time zone" if _DAY_ONLY.fullmatch(value) else "not a date and time"
        raise SourceDateError(f"{where}: source date {value!r} is {what}: write it in UTC, e.g. {EXAMPLE}")
    zone = match["zone"]
    if zone is None:
        raise SourceDateError(f"{where}: source date {value!r} has no time zone: write it in UTC, e.g. {EXAMPLE}")
    if zone not in ("Z", "+00:00"):
        raise SourceDateError(f"{where}: source date {value!r} is at offset {zone}, not UTC: write it in UTC, e.g. {EXAMPLE}")
    try:
        moment = datetime.fromisoformat(match["moment"]).replace(tzinfo=timezone.utc)
    except ValueError:
        raise SourceDateError(f"{where}: source date {value!r} is not a real date and time") from None
    return moment.strftime(UTC_FORMAT)


def utc_from_timestamp(seconds: int | float) -> str:
    """A moment given as seconds since the epoch (no zone to misread), in the stored form."""
    return datetime.fromtimestamp(seconds, timezone.utc).strftime(UTC_FORMAT)


def as_datetime(stored: str) -> datetime:
    """A stored date (already strict) as an aware datetime."""
    return datetime.strptime(stored, UTC_FORMAT).replace(tzinfo=timezone.utc)
