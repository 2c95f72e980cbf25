"""Local DynamoDB state that survives a restart: an append-only log of moto's successful writes.

moto keeps DynamoDB in memory. The local stack makes it durable per write: every request that
changes state and succeeds (HTTP 200) is appended to a JSON-lines log and fsync'd *before* its
response leaves the server, inside the lock that serialises moto's requests (see
`moto_store.make_moto_faithful`), so the log's order is the order moto applied the writes in. A
write the client saw succeed is therefore on disk, even if the process is killed right after; a
write refused by its condition (a spending cap, a claimed conversation) is never logged.

At start the log is replayed into moto through the same request handler, before the server listens;
when it holds well over one write per live item it is compacted (the table definitions as logged,
then the live items, a batch of them a record), so starting stays proportional to the state, not
to its history. While the server runs it is compacted off the request path (log_compaction.py).
One record a line:

    {"op": "PutItem", "region": "eu-west-1", "account": "123456789012", "body": {...the request...}}
    {"op": "LoadItems", ..., "body": {"TableName": "...", "Items": [...]}}   (a compaction's items)
"""
from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

# Requests that never change state are not logged; anything else that succeeds is (an unknown
# operation is logged rather than lost: replaying a read is harmless).
READS = frozenset({
    "GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems", "DescribeTable", "ListTables",
    "DescribeTimeToLive", "ListTagsOfResource", "DescribeContinuousBackups", "DescribeEndpoints",
    "DescribeLimits", "ListBackups", "DescribeBackup", "ListGlobalTables", "DescribeGlobalTable",
    "DescribeKinesisStreamingDestination", "ListExports", "DescribeExport", "ListImports",
    "DescribeImport", "DescribeContributorInsights", "ListContributorInsights", "GetResourcePolicy",
    "DescribeTableReplicaAutoScaling", "DescribeGlobalTableSettings",
})
# Writes whose effect compaction folds into one PutItem per live item; every other logged request
# (CreateTable, UpdateTimeToLive, DeleteTable, tags…) is kept as it was, in order.
ITEM_WRITES = frozenset({
    LOAD_ITEMS := "LoadItems", "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems",
    "ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction",
})
TARGET_PREFIX = "DynamoDB_20120810."
# Items a compaction record carries: a few hundred KiB a line.
ITEMS_PER_RECORD = 500


class LogCorrupt(Exception):
    """A line in the middle of the log is not a record: refuse to start rather than drop writes."""


class LogUnavailable(Exception):
    """The log could not be written: the write was not made durable and is refused."""


class WriteLog:
    """The open log. `append` returns only once the record is on disk."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        created = not self.path.exists()
        self._file = open(self.path, "ab")
        if created:  # the new file's name is on disk too, not only its bytes
            fsync_dir(self.path.parent)
        self.broken: str | None = None  # set after a failed write: later writes are refused
        self.closed = False
        self.appended = 0
        # One compaction at a time (log_compaction.py); requests never wait for it.
        self.compaction = threading.Lock()
        # Writes since the last compaction that deleted an item or rewrote a message's words: the
        # log still holds what they removed until it is compacted (`compact_live`).
        self.forgotten = 0

    def append(self, op: str, region: str, account: str, body: Any) -> None:
        line = encode({"op": op, "region": region, "account": account, "body": body})
        try:
            self._file.write(line)
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError as exc:
            self.broken = f"{self.path}: {exc}"
            raise LogUnavailable(self.broken) from exc
        self.appended += 1
        if forgets(op, body):
            self.forgotten += 1

    def offset(self) -> int:
        """Where the next record will start: every byte before it is a whole record, on disk.
        Called under REQUEST_LOCK, so no record is being written."""
        return self._file.tell()

    def reopen(self) -> None:
        """After the file was replaced (a compaction), append to the new one."""
        self._file.close()
        self._file = open(self.path, "ab")

    def close(self) -> None:
        with REQUEST_LOCK:  # never in the middle of a request's append or a compaction's swap
            self.closed = True
            self._file.close()


def forgets(op: str, body: Any) -> bool:
    """Whether a logged write removes words the log still holds in an earlier record: a deleted
    item, or a message whose words were rewritten (a redaction sets `content`)."""
    if op == "DeleteItem":
        return True
    if op == "UpdateItem":
        return "content" in str((body or {}).get("UpdateExpression", ""))
    if op == "TransactWriteItems":
        return any("Delete" in action for action in (body or {}).get("TransactItems", []))
    if op == "BatchWriteItem":
        return any("DeleteRequest" in request for requests in (body or {}).get("RequestItems", {}).values()
                   for request in requests)
    return False


# The lock that serialises moto's requests (`moto_store.make_moto_faithful`): held by every request,
# and by a compaction only while it notes where the log ends and while it swaps the files.
REQUEST_LOCK = threading.RLock()


# The log moto's request handler appends to. moto's backends are one per process, so is this.
_active: WriteLog | None = None
_active_lock = threading.Lock()


def activate(log: WriteLog) -> None:
    global _active
    with _active_lock:
        if _active is not None:
            raise RuntimeError(f"a DynamoDB log is already active in this process ({_active.path})")
        _active = log


def deactivate(log: WriteLog) -> None:
    global _active
    with _active_lock:
        if _active is log:
            _active = None


def refuse_if_unlogged(handler: Any) -> tuple[int, dict[str, str], str] | None:
    """Called before moto handles a request: a write the log cannot take is not applied either."""
    log = _active
    if log is None or log.broken is None or handler._get_action() in READS:
        return None
    body = json.dumps({"__type": "com.amazonaws.dynamodb.v20120810#InternalServerError",
                       "message": f"the local state log cannot be written: {log.broken}"})
    return 500, {"content-type": "application/x-amz-json-1.0"}, body


def record(handler: Any, result: Any) -> None:
    """Called by moto's patched handler, under its lock, after each request: log a successful write."""
    log = _active
    if log is None:
        return
    op = handler._get_action()
    if op in READS or int(result[0]) != 200:
        return
    raw = handler.raw_body
    text = raw.decode("utf-8") if isinstance(raw, (bytes, bytearray)) else (raw or "")
    log.append(op, handler.region, handler.current_account, json.loads(text) if text.strip() else {})


# ---- reading, replaying, compacting ---------------------------------------------------------


def read_records(path: Path, upto: int | None = None) -> list[dict[str, Any]]:
    """Every record in the log. A last line cut short (the process died while writing it, so its
    request never answered) is dropped and cut from the file; a bad line before the end is an error.
    With `upto` (an `offset()` of the open log), only the records before it, and the file is
    left as it is: the server may be appending past it."""
    path = Path(path)
    if not path.exists():
        return []
    if upto is not None:
        with open(path, "rb") as f:
            data = f.read(upto)
        if len(data) != upto or (data and not data.endswith(b"\n")):
            raise LogCorrupt(f"{path}: the first {upto} bytes are not whole records")
        return [json.loads(line) for line in data.splitlines()]
    data = path.read_bytes()
    records: list[dict[str, Any]] = []
    offset = 0
    for number, line in enumerate(data.splitlines(keepends=True), start=1):
        try:
            if not line.endswith(b"\n"):
                raise ValueError("no end of line")
            rec = json.loads(line)
            if not isinstance(rec, dict) or "op" not in rec:
                raise ValueError("not a record")
        except ValueError as exc:
            if offset + len(line) == len(data):  # the torn tail of an interrupted write
                with open(path, "r+b") as f:
                    f.truncate(offset)
                    os.fsync(f.fileno())
                break
            raise LogCorrupt(f"{path}, line {number}: {exc}; move the file away to start empty") from exc
        records.append(rec)
        offset += len(line)
    return records


def call(op: str, body: Any, region: str, account: str) -> tuple[int, Any]:
    """One request through moto's DynamoDB handler in this process, as its server would take it."""
    from moto.core.request import Request
    from moto.dynamodb.responses import DynamoHandler

    headers = {
        "Host": "127.0.0.1",
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": TARGET_PREFIX + op,
        "Authorization": f"AWS4-HMAC-SHA256 Credential=local/20200101/{region}/dynamodb/aws4_request, "
                         "SignedHeaders=host, Signature=0",
        "x-moto-account-id": account,
    }
    request = Request.from_primitives("POST", "http://127.0.0.1/", headers, json.dumps(body).encode("utf-8"))
    status, _, content = DynamoHandler.dispatch(request)
    text = content.decode("utf-8") if isinstance(content, (bytes, bytearray)) else content
    return int(status), (json.loads(text) if text else {})


@dataclass
class Replay:
    records: int = 0
    failed: int = 0  # logged writes moto refused on replay (never expected: the log is deterministic)
    compacted_to: int | None = None


def reset_moto_dynamodb() -> None:
    """Empty moto's DynamoDB in this process: the log, not memory, is the state."""
    from moto.dynamodb.models import dynamodb_backends

    for account in dynamodb_backends.values():
        account.reset()


def replay(records: list[dict[str, Any]]) -> Replay:
    summary = Replay(records=len(records))
    for rec in records:
        if rec["op"] == LOAD_ITEMS:
            summary.failed += load_items(rec["body"], rec["region"], rec["account"])
            continue
        status, _ = call(rec["op"], rec["body"], rec["region"], rec["account"])
        if status != 200:
            summary.failed += 1
    return summary


def _backend(region: str, account: str) -> Any:
    from moto.dynamodb.models import dynamodb_backends

    return dynamodb_backends[account][region]


def load_items(body: dict[str, Any], region: str, account: str) -> int:
    """A compaction's items put back as they were, straight into the table: they were already
    checked once, and parsing each as a request took most of a restart. How many failed."""
    table = _backend(region, account).tables.get(body.get("TableName"))
    if table is None:
        return 1
    for attrs in body.get("Items", []):
        table.put_item(attrs)
    return 0


def snapshot(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The log, compacted: table-level records in order, then every item moto now holds, in
    batches (`LoadItems`), read from moto's tables as they are (no request, no response to build)."""
    kept = [r for r in records if r["op"] not in ITEM_WRITES]
    places = list(dict.fromkeys((r["region"], r["account"]) for r in records))
    loads = []
    for region, account in places:
        for name, table in sorted(_backend(region, account).tables.items()):
            items = [item.to_json()["Attributes"] for item in _every_item(table)]
            for start in range(0, len(items), ITEMS_PER_RECORD):
                loads.append({"op": LOAD_ITEMS, "region": region, "account": account,
                              "body": {"TableName": name, "Items": items[start:start + ITEMS_PER_RECORD]}})
    return kept + loads


def _every_item(table: Any) -> Iterator[Any]:
    for kept in table.items.values():
        yield from (kept.values() if table.range_key_attr else (kept,))


def encode(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


def write_atomically(path: Path, records: list[dict[str, Any]]) -> None:
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        for rec in records:
            f.write(encode(rec))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def live_items(records: list[dict[str, Any]]) -> int:
    """How many items moto holds now, over every table the log touched."""
    places = dict.fromkeys((r["region"], r["account"]) for r in records)
    return sum(len(list(_every_item(table))) for region, account in places for table in _backend(region, account).tables.values())


def worth_compacting(records: list[dict[str, Any]]) -> bool:
    """The log holds well over one write per live item (a snapshot costs a scan of everything)."""
    item_writes = sum(1 for r in records if r["op"] in ITEM_WRITES)
    return item_writes > 2 * live_items(records) + COMPACT_SLACK


COMPACT_SLACK = 20


def load(path: Path, compact: bool = True) -> Replay:
    """Replay the log into an empty moto, then, if it has grown well past the state it holds,
    rewrite it as a snapshot (atomically: a crash leaves the old log or the new one)."""
    reset_moto_dynamodb()
    records = read_records(path)
    summary = replay(records)
    if compact and records and summary.failed == 0 and worth_compacting(records):
        compacted = snapshot(records)
        write_atomically(path, compacted)
        summary.compacted_to = len(compacted)
    return summary
