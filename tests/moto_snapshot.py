"""Runs stored once per test worker, then given to each test as a copy of moto's tables.

Importing the sample through the store writes ~30 items a run, each through botocore and moto's
request handling: about seven seconds for the 480 runs, paid again by every test that wants them.
What the import leaves in moto's memory is the same each time (the sample is seeded), so the first
import's tables are kept and each later test gets a deep copy of them, in well under a second. The
import itself is still what fills them (and `tests/benchmark/test_sample.py` tests it as written).

A snapshot is keyed by what was imported and by the tables' names (a test with another table prefix
gets its own), and restored only into a store whose tables are still empty, so a test that wrote
something first is never overwritten: it imports as before.
"""
from __future__ import annotations

import copy
import hashlib
import json
from typing import Any, Callable

from moto.core import DEFAULT_ACCOUNT_ID

_SNAPSHOTS: dict[tuple[str, str, tuple[str, ...]], tuple[dict[str, Any], Any]] = {}


def _backend(region: str):
    from moto.dynamodb.models import dynamodb_backends

    return dynamodb_backends[DEFAULT_ACCOUNT_ID][region]


def _all_empty(backend) -> bool:
    return all(not table.items for table in backend.tables.values())


def stored_once(region: str, what: str, store: Callable[[], Any]) -> Any:
    """`store()`'s effect on moto's tables (of `region`), from a copy when this worker has stored
    `what` before. Returns what `store()` returned the first time."""
    backend = _backend(region)
    key = (what, region, tuple(sorted(backend.tables)))
    if key in _SNAPSHOTS and _all_empty(backend):
        tables, result = _SNAPSHOTS[key]
        backend.tables = copy.deepcopy(tables)
        return result
    fresh = _all_empty(backend)
    result = store()
    if fresh:
        _SNAPSHOTS[key] = (copy.deepcopy(backend.tables), result)
    return result


def sample_loaded(dynamo: Any) -> int:
    """The seeded sample in the store, as `load_sample_if_empty_sync` leaves it; its count of runs."""
    from groundchat_cli.sample import load_sample_if_empty_sync

    return stored_once(dynamo.settings.aws_region, "sample", lambda: load_sample_if_empty_sync(dynamo))


async def sample_loaded_async(dynamo: Any) -> int:
    return await dynamo.run(sample_loaded, dynamo)


def runs_imported(lines: list[dict], store: Callable[[], Any]) -> Any:
    """`store()` importing `lines`, from a copy when the same lines were imported before."""
    from groundchat.config import get_settings

    digest = hashlib.sha256(json.dumps(lines, sort_keys=True).encode()).hexdigest()
    return stored_once(get_settings().aws_region, f"runs:{digest}", store)
