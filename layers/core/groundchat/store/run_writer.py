"""The one writer of the benchmark's runs: each run and its share of every view in one
TransactWriteItems (store/runs.py says what the items are; store/run_views.py the views)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from groundchat.benchmark.runs import Run
from groundchat.store import item_values
from groundchat.store.dynamo import Dynamo
from groundchat.store.run_items import record_item, summary_item
from groundchat.store.run_views import cell_keys, serialized, value_keys, view_writes
from groundchat.store.tables import RUN_VIEWS, RUNS
from groundchat.store.transactions import TransactionBusy, TransactionRefused, transact_sync

if TYPE_CHECKING:
    from groundchat.store.items import KeysToGet, PutAction, StoredItem

ItemKey = tuple[str, str]


class ViewsOutOfStep(Exception):
    """A run's list entries exist without the run: the views need `groundchat runs repair --fix`."""


@dataclass
class WriteReport:
    written: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)  # already in the store: left as they were


class RunWriter:
    """Writes runs; used by the import and the sample loader, never handed to a tool."""

    # Another import changed one of the run's cells between the read and the write: read again.
    MAX_ATTEMPTS = 20
    # Cells this writer last wrote or read, by key (None: known absent). A guess only:
    # every write is conditional on it, and a wrong guess is read again. Bounded per writer.
    MAX_KNOWN = 200_000

    def __init__(self, dynamo: Dynamo) -> None:
        self._client = dynamo.client
        self._resource = dynamo.resource
        self._name = dynamo.name(RUNS)
        self._views = dynamo.name(RUN_VIEWS)
        self._known: dict[ItemKey, StoredItem | None] = {}
        self._values: set[ItemKey] = set()  # values known to exist (never removed by an import)

    def is_empty(self) -> bool:
        page = self._client.scan(TableName=self._name, Limit=1, ProjectionExpression="run_id")
        return not page.get("Items")

    def put_runs(self, runs: list[Run]) -> WriteReport:
        report = WriteReport()
        for run in runs:
            (report.written if self.put_run(run) else report.existing).append(run.run_id)
        return report

    def put_run(self, run: Run) -> bool:
        """Stores a run and counts it in every view, all in one transaction; False if it was
        already stored (nothing is written: a re-import is a no-op).

        Every write in it is conditional: the summary only if absent (the commit marker), the
        record only if absent or left without its fields by an interrupted import of the first
        writer, each new value and list entry only if absent, and each cell only if its run count
        is still the one this writer knows (read, or written by it; an unknown cell is taken as
        new), so two imports can never both add to the same count. DynamoDB applies all or none;
        a transaction refused on a cell or value learns what it missed and is tried again."""
        summary = run.summary()
        cells, values = cell_keys(summary), value_keys(summary)
        head = [_put(self._name, summary_item(run), "attribute_not_exists(#k)", {"#k": "run_id"}),
                _put(self._name, record_item(run), "attribute_not_exists(#k) OR attribute_not_exists(#m)",
                     {"#k": "run_id", "#m": "record"})]
        for _ in range(self.MAX_ATTEMPTS):
            current = {key: item for key in cells if (item := self._known.get(key)) is not None}
            new_values = [key for key in values if key not in self._values]
            writes, written = view_writes(self._views, summary, current, new_values)
            try:
                transact_sync(self._client, head + writes)
            except TransactionRefused as exc:
                if exc.failed(0):
                    return False  # already stored (a re-import, or a concurrent import came first)
                self._learn(run.run_id, exc, cells, new_values, len(head) + len(writes))
                continue
            if len(self._known) > self.MAX_KNOWN:
                self._known.clear()
            self._known.update(zip(cells, written))
            self._values.update(values)
            return True
        raise TransactionBusy(f"run {run.run_id!r}: its cells kept changing under other imports")

    def _learn(self, run_id: str, exc: TransactionRefused, cells: list[ItemKey], new_values: list[ItemKey], size: int) -> None:
        """What a refused transaction says: cells changed by another import (read them again),
        values that exist already; anything else means the views are out of step with the runs."""
        at_values = 2 + len(cells)
        stale = [key for i, key in enumerate(cells, start=2) if exc.failed(i)]
        existing = [key for i, key in enumerate(new_values, start=at_values) if exc.failed(i)]
        if exc.failed(1) or any(exc.failed(i) for i in range(at_values + len(new_values), size)):
            raise ViewsOutOfStep(f"run {run_id!r} is not stored, yet its record or run list entries are: "
                                 "run `groundchat runs repair --fix`") from exc
        if not stale and not existing:
            raise exc
        self._values.update(existing)
        if stale:
            self._read(stale)

    def _read(self, keys: list[ItemKey]) -> None:
        """The cells as they are now (one BatchGetItem, strongly consistent)."""
        self._known.update({key: None for key in keys})
        request: dict[str, KeysToGet[StoredItem]] = {
            self._views: {"Keys": [{"view": v, "entry": e} for v, e in keys], "ConsistentRead": True}}
        while request:
            resp = self._resource.batch_get_item(RequestItems=request)
            self._known.update({(item_values.text(i, "view"), item_values.text(i, "entry")): i
                                for i in resp.get("Responses", {}).get(self._views, [])})
            request = resp.get("UnprocessedKeys") or {}


def _put(table: str, item: StoredItem, condition: str, names: dict[str, str]) -> PutAction:
    return {"Put": {"TableName": table, "Item": serialized(item), "ConditionExpression": condition,
                    "ExpressionAttributeNames": names}}
