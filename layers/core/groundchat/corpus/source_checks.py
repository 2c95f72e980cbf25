"""When the ingest last checked a normative text's official source, and whether that source has
changed since the copy the index holds.

A law or a standard in force is current until it is amended, so its age is never a reason to warn.
What is worth saying is whether the official text still reads as the one quoted: each ingest that
reads a source from its official address records when it did and the hash of what it read
(`checked`), and each index it builds records the hash of the text it holds (`indexed`). The two
differ only when the official text changed and the index has not caught up (the rebuild failed, or
the check ran without one).

Both live in the index's own metadata (the keys below), so the answer reads them from the index
it searched.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from groundchat.corpus.dates import utc_from_timestamp

# The index's metadata keys: {source: {"checked_at", "hash"}} and {source: hash}.
CHECKS_KEY = "source_checks"
INDEXED_KEY = "source_contents"


@dataclass(frozen=True)
class SourceCheck:
    checked_at: str  # UTC, in the stored form of corpus/dates.py
    changed: bool  # the official source's text differs from the indexed one


def checked_sources(meta: dict[str, str]) -> dict[str, SourceCheck]:
    """The sources the ingest checked against their official address, from an index's metadata;
    a source never checked (read from a local folder), or checked against an index that records no
    hash of its text (built before these keys), is left out: nothing can be said of it."""
    try:
        checks = json.loads(meta.get(CHECKS_KEY, "{}"))
        indexed = json.loads(meta.get(INDEXED_KEY, "{}"))
    except json.JSONDecodeError:
        return {}
    out = {}
    for source, check in checks.items():
        if isinstance(check, dict) and check.get("checked_at") and check.get("hash") and source in indexed:
            out[source] = SourceCheck(checked_at=str(check["checked_at"]), changed=check["hash"] != indexed.get(source))
    return out


def recorded_checks(meta: dict[str, str] | None, fetched: dict[str, str], now: float) -> str:
    """The checks to record: the earlier ones of an index's metadata, with `fetched` ({source: hash of
    what was read from its official address}) checked at `now` (seconds since the epoch)."""
    try:
        checks = json.loads((meta or {}).get(CHECKS_KEY, "{}"))
    except json.JSONDecodeError:
        checks = {}
    checked_at = utc_from_timestamp(now)
    checks.update({source: {"checked_at": checked_at, "hash": digest} for source, digest in fetched.items()})
    return json.dumps(checks, sort_keys=True)


__all__ = ["CHECKS_KEY", "INDEXED_KEY", "SourceCheck", "checked_sources", "recorded_checks"]
