"""moto as the local stack's DynamoDB and S3: its server on a free port of 127.0.0.1, made to
behave (and cost) as the real services do where our code meets the difference, its DynamoDB state
kept in a write log and its S3 objects in files.
"""
from __future__ import annotations

from pathlib import Path

from groundchat_cli.stack_address import StackError, free_port


def make_moto_faithful():
    """Two places where moto's DynamoDB differs from the real one, in ways our budget meets:

    - It checks and writes a transaction item by item with no lock, so concurrent requests can
      interleave inside one transaction, which DynamoDB never allows (concurrent chats could then
      pass a spending cap locally). One request at a time gives moto DynamoDB's atomicity; the
      requests still race as they would against AWS.
    - Arithmetic that lands on zero stores a number like "0E-7", which moto itself then fails to
      read back (it parses numbers without a point as int). DynamoDB normalises numbers; so do we.

    Under the same lock, each successful write is appended to the state log when one is active
    (`dynamodb_log`), before its response is returned. Nothing else holds it for long: the log's
    compaction builds its snapshot with the lock free (`log_compaction`).

    Idempotent; returns the original request handler, to undo the first."""
    from decimal import Decimal

    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.responses import DynamoHandler

    from groundchat_cli import dynamodb_log

    # Transactions and Queries cost per item, as in DynamoDB (the runs' views write ~30 items a run).
    make_moto_costs_faithful()
    original = DynamoHandler.call_action
    if getattr(original, "_serialized", False):
        return original
    lock = dynamodb_log.REQUEST_LOCK

    def call_action(self):
        with lock:
            refused = dynamodb_log.refuse_if_unlogged(self)
            if refused is not None:
                return refused
            result = original(self)
            dynamodb_log.record(self, result)
            return result

    call_action._serialized = True  # type: ignore[attr-defined]
    DynamoHandler.call_action = call_action

    original_init = DynamoType.__init__

    def normalised_init(self, type_as_dict):
        original_init(self, type_as_dict)
        if self.type == "N" and isinstance(self.value, str) and "E" in self.value.upper():
            text = format(Decimal(self.value).normalize(), "f")
            self.value = "0" if text in ("-0", "") else text

    DynamoType.__init__ = normalised_init
    return original


class LocalDynamo:
    """moto's server on a free port of 127.0.0.1; with `log`, its DynamoDB state is that file, and
    with `s3_root`, its S3 objects are the files in that folder (s3_state.py)."""

    def __init__(self, log: Path | None = None, reset: bool = False, s3_root: Path | None = None) -> None:
        self.log_path = Path(log) if log else None
        self.reset = reset
        self.s3_root = Path(s3_root) if s3_root else None
        self.server = None
        self.endpoint = ""
        self.replayed = None
        self.s3_objects = 0
        self._log = None
        self._lock = None
        self._s3 = None

    def start(self) -> "LocalDynamo":
        import logging

        from moto.server import ThreadedMotoServer

        from groundchat_cli import dynamodb_log

        # moto's server logs every request; the local stack's own output is what a user needs to see.
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        make_moto_faithful()
        dynamodb_log.reset_moto_dynamodb()  # moto's DynamoDB is one per process: this server's
        try:
            if self.log_path is not None:
                self._take_log()
                self.replayed = dynamodb_log.load(self.log_path)  # before anyone can reach the server
                self._log = dynamodb_log.WriteLog(self.log_path)
                dynamodb_log.activate(self._log)
            if self.s3_root is not None:
                self._start_s3_state()
            port = free_port()
            self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
            self.server.start()
        except BaseException:
            self.stop()
            raise
        self.endpoint = f"http://127.0.0.1:{port}"
        return self

    def _start_s3_state(self) -> None:
        import shutil

        from groundchat_cli import s3_state

        if self.reset and self.s3_root.exists():
            shutil.rmtree(self.s3_root)
        s3_state.make_moto_s3_durable()
        mirror = s3_state.S3Mirror(self.s3_root)
        self.s3_objects = s3_state.load(mirror)  # before anyone can reach the server
        s3_state.activate(mirror)
        self._s3 = mirror

    @property
    def log(self):
        """The open state log (`dynamodb_log.WriteLog`), or None in memory."""
        return self._log

    def _take_log(self) -> None:
        """One server per log: a second one would fork the state."""
        import fcntl

        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = open(self.log_path.with_name(self.log_path.name + ".lock"), "w")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.close()
            self._lock = None
            raise StackError(f"{self.log_path} is in use by another `groundchat serve`") from None
        from groundchat_cli.log_compaction import discard_leftovers

        discard_leftovers(self.log_path)  # a compaction cut short by a kill: the log is still whole
        if self.reset:
            self.log_path.unlink(missing_ok=True)

    def forget_deleted(self) -> int | None:
        """After a sweep: when writes since the last compaction deleted items or rewrote a
        message's words, compact the log now, so a deleted conversation's words are not left on
        disk in its earlier records. Requests go on meanwhile (log_compaction.py); this returns
        once the new log is in place: the number of records it holds, or None (nothing to do)."""
        from groundchat_cli.log_compaction import compact_live

        if self._log is None or not self._log.forgotten:
            return None
        return compact_live(self._log)

    def stop(self) -> None:
        from groundchat_cli import dynamodb_log

        if self.server is not None:
            self.server.stop()
            if self.server._server is not None:
                self.server._server.server_close()
            self.server = None
        if self._log is not None:
            dynamodb_log.deactivate(self._log)
            self._log.close()
            self._log = None
        if self._s3 is not None:
            from groundchat_cli import s3_state

            s3_state.deactivate(self._s3)
            self._s3 = None
        if self._lock is not None:
            self._lock.close()
            self._lock = None


def make_moto_costs_faithful() -> None:
    """Three places where moto's DynamoDB costs what DynamoDB does not, met by the runs' views:

    - A transaction deep-copies every table it touches, once per item, to roll back on failure:
      one run's transaction (about 30 items) would copy the runs and views tables 30 times, so
      importing the sample took minutes and 50,000 runs never finished. Here only the items the
      transaction names are saved and put back, which is the same rollback.
    - A Query walks and sorts every item of the table, not the partition asked for, on the
      table's key and on a global index alike. Here each table partition's order is kept (until
      a write to it), and each index's partitions are built in one walk of the table and kept
      (until any write to the table); a Query is handed its partition from its start key, only up
      to the item after a full page when it has a Limit: the same page, at the cost of the items
      it returns, as in DynamoDB.
    - Each condition expression is parsed three times per item written (half the server's time
      in an import). Here a parse is kept per distinct expression, names and values.

    Results are unchanged; only the cost is DynamoDB's (per item touched or read). Idempotent, and
    a no-op where moto is not installed."""
    try:
        import moto.dynamodb.models as backend_module
        from moto.dynamodb.models.table import Table
    except ImportError:
        return
    backend = backend_module.DynamoDBBackend
    if getattr(backend.transact_write_items, "_per_item", False):
        return
    _patch_transactions(backend_module, backend, Table)
    _patch_partition_queries(Table)
    _patch_condition_parsing(backend_module)


def _patch_transactions(backend_module, backend, table_type) -> None:
    import copy
    import types

    from moto.dynamodb.models.dynamo_type import DynamoType

    def deepcopy(value, memo=None):  # the whole-table backups become references; items are saved below
        return value if isinstance(value, table_type) else copy.deepcopy(value, memo)

    backend_module.copy = types.SimpleNamespace(deepcopy=deepcopy, copy=copy.copy)
    original = backend.transact_write_items

    def saved_items(self, transact_items):
        saved = []
        for entry in transact_items:
            op_type, op = next(iter(entry.items()))
            table = self.tables.get(op.get("TableName"))
            attrs = op.get("Item") if op_type == "Put" else op.get("Key")
            if table is None or not attrs or table.hash_key_attr not in attrs:
                continue
            hash_key = DynamoType(attrs[table.hash_key_attr])
            range_attr = table.range_key_attr
            range_key = DynamoType(attrs[range_attr]) if range_attr and range_attr in attrs else None
            if range_attr and range_key is None:
                continue
            saved.append((table, hash_key, range_key, copy.deepcopy(table.get_item(hash_key, range_key))))
        return saved

    def transact_write_items(self, transact_items):
        saved = saved_items(self, transact_items)
        try:
            return original(self, transact_items)
        except Exception:
            for table, hash_key, range_key, item in saved:
                _put_back(table, hash_key, range_key, item)
            raise

    transact_write_items._per_item = True  # type: ignore[attr-defined]
    backend.transact_write_items = transact_write_items


def _forget(table, hash_key) -> None:
    """A write to a table: the kept order of the partition written and of every index partition
    of the table (an item may have entered, left or moved in any of them) is dropped."""
    table.__dict__.get("_sorted_partitions", {}).pop(hash_key, None)
    table.__dict__.pop("_sorted_indexes", None)


def _put_back(table, hash_key, range_key, item) -> None:
    _forget(table, hash_key)
    if range_key is None:
        if item is None:
            table.items.pop(hash_key, None)
        else:
            table.items[hash_key] = item
    elif item is None:
        table.items.get(hash_key, {}).pop(range_key, None)
    else:
        table.items[hash_key][range_key] = item


def _page_of(keys, items, start, forward: bool, meets, limit):
    """The items a Query can return, in key order: those past the start key (`start`, in the
    terms of `keys`), and when it has a Limit only up to the one that follows its Limit-th item
    meeting the key condition (`meets`): moto says there are more, and where to go on, when it
    meets an item after a full page, whether or not that item meets the condition. The items
    in between that do not meet it are handed over too, for moto to skip as it would."""
    import bisect

    if start is not None:
        items = items[bisect.bisect_right(keys, start):] if forward else items[:bisect.bisect_left(keys, start)]
    if not limit:
        return items
    chosen, met = [], 0
    for item in (items if forward else reversed(items)):
        chosen.append(item)
        if met == limit:
            break
        if meets(item):
            met += 1
    return chosen if forward else chosen[::-1]


def _every_item(table):
    for kept in table.items.values():
        yield from (kept.values() if table.range_key_attr else (kept,))


def _index_partitions(table, index):
    """A global index's partitions, each in the index's order (its range key, then the table's
    keys: moto's order): built in one walk of the table, kept until the table is written."""
    from collections import defaultdict

    kept = table.__dict__.setdefault("_sorted_indexes", {})
    if index.name in kept and kept[index.name][0] is index:
        return kept[index.name][1]
    hash_attr, range_attr = (next(k["AttributeName"] for k in index.schema if k["KeyType"] == kind) for kind in ("HASH", "RANGE"))
    groups = defaultdict(list)
    for item in _every_item(table):
        hashed, ranged = item.attrs.get(hash_attr), item.attrs.get(range_attr)
        if hashed and ranged and hashed.type in ("S", "N", "B"):  # moto's test for an indexed item
            groups[(hashed.type, hashed.cast_value)].append(item)
    partitions = {}
    for at, items in groups.items():
        items.sort(key=lambda item: _index_order(item, range_attr, table))
        partitions[at] = ([_index_order(item, range_attr, table) for item in items], items)
    kept[index.name] = (index, partitions)
    return partitions


def _index_order(item, range_attr, table) -> tuple:
    order = (item.attrs[range_attr].cast_value, item.hash_key.cast_value)
    return order + (item.range_key.cast_value,) if table.range_key_attr else order


def _index_page(table, index_name, limit, start_key, forward, hash_key_conditions, range_key_conditions):
    """The candidates of a Query on a global index with one hash and one range key, or None when
    the Query is of another shape (moto's own query then walks the table)."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    index = next((ix for ix in table.global_indexes or [] if ix.name == index_name), None)
    if index is None or sorted(k["KeyType"] for k in index.schema) != ["HASH", "RANGE"]:
        return None
    hash_attr, range_attr = (next(k["AttributeName"] for k in index.schema if k["KeyType"] == kind) for kind in ("HASH", "RANGE"))
    if len(hash_key_conditions or []) != 1 or hash_key_conditions[0][0] != hash_attr or len(range_key_conditions or []) > 1:
        return None
    wanted = hash_key_conditions[0][1]
    if wanted.type not in ("S", "N", "B"):
        return None
    start = None
    if start_key:
        named = [range_attr, table.hash_key_attr] + ([table.range_key_attr] if table.range_key_attr else [])
        if any(name not in start_key for name in [hash_attr, *named]) or DynamoType(start_key[hash_attr]) != wanted:
            return None
        start = tuple(DynamoType(start_key[name]).cast_value for name in named)
    keys, items = _index_partitions(table, index).get((wanted.type, wanted.cast_value), ([], []))
    condition = range_key_conditions[0] if range_key_conditions else None
    if condition is not None and condition[0] != range_attr:
        return None

    def meets(item) -> bool:
        return condition is None or item.attrs[range_attr].compare(condition[1], condition[2])

    return _page_of(keys, items, start, forward, meets, limit)


def _patch_partition_queries(table_type) -> None:
    import threading

    from moto.dynamodb.models import DynamoDBBackend

    asked = threading.local()
    original_query, original_all_items = table_type.query, table_type.all_items
    original_put, original_delete = table_type.put_item, table_type.delete_item
    original_update = DynamoDBBackend.update_item

    def put_item(self, item_attrs, *args, **kwargs):
        item = original_put(self, item_attrs, *args, **kwargs)
        _forget(self, item.hash_key)
        return item

    def delete_item(self, hash_key, range_key):
        _forget(self, hash_key)
        return original_delete(self, hash_key, range_key)

    def update_item(self, table_name, *args, **kwargs):  # changes an item in place: it may enter an index
        try:
            return original_update(self, table_name, *args, **kwargs)
        finally:
            table = self.tables.get(table_name)
            if table is not None:
                table.__dict__.pop("_sorted_indexes", None)

    def partition(table, hash_key):
        kept = table.__dict__.setdefault("_sorted_partitions", {})
        if hash_key not in kept:
            items = sorted(table.items.get(hash_key, {}).values(), key=lambda item: item.range_key.cast_value)
            kept[hash_key] = ([item.range_key.cast_value for item in items], items)
        return kept[hash_key]

    def table_page(table, hash_key, range_comparison, range_objs, limit, start_key, forward):
        keys, items = partition(table, hash_key)
        start = None
        if start_key and table.range_key_attr in start_key:
            from moto.dynamodb.models.dynamo_type import DynamoType

            start = DynamoType(start_key[table.range_key_attr]).cast_value

        def meets(item) -> bool:
            return range_comparison is None or item.range_key.compare(range_comparison, range_objs)

        return _page_of(keys, items, start, forward, meets, limit)

    def query(self, hash_key, range_comparison, range_objs, limit, exclusive_start_key, scan_index_forward,
              projection_expressions, index_name=None, *args, **kwargs):
        call = (self, hash_key, range_comparison, range_objs, limit, exclusive_start_key, scan_index_forward,
                projection_expressions, index_name, *args)
        legacy_filters = {k: v for k, v in kwargs.items() if k not in ("filter_expression", "hash_key_conditions",
                                                                       "range_key_conditions")}
        forward = scan_index_forward is not False
        if index_name:
            consistent = args[0] if args else kwargs.get("consistent_read", False)
            chosen = None if legacy_filters or consistent else _index_page(
                self, index_name, limit, exclusive_start_key, forward, kwargs.get("hash_key_conditions"),
                kwargs.get("range_key_conditions"))
            if chosen is None:
                return original_query(*call, **kwargs)
        elif hash_key is None or not self.range_key_attr:
            return original_query(*call, **kwargs)
        elif legacy_filters:  # KeyConditions-era filters: the whole partition, for moto to apply them
            chosen = partition(self, hash_key)[1]
        else:
            chosen = table_page(self, hash_key, range_comparison, range_objs, limit, exclusive_start_key, forward)
        asked.partition = (self, chosen)
        try:
            return original_query(*call, **kwargs)
        finally:
            asked.partition = None

    def all_items(self):
        partition_asked = getattr(asked, "partition", None)
        if partition_asked is not None and partition_asked[0] is self:
            return list(partition_asked[1])
        return original_all_items(self)

    query._moto_own = original_query  # type: ignore[attr-defined]  (tests compare the two)
    table_type.query, table_type.all_items = query, all_items
    table_type.put_item, table_type.delete_item = put_item, delete_item
    DynamoDBBackend.update_item = update_item


def _patch_condition_parsing(backend_module) -> None:
    import functools
    import json

    import moto.dynamodb.models.table as table_module
    from moto.dynamodb import comparisons

    @functools.lru_cache(maxsize=4096)
    def parsed(expr, names, values):
        return comparisons.get_filter_expression(expr, json.loads(names), json.loads(values))

    def get_filter_expression(expr, names, values):  # the parsed operators are never changed
        return parsed(expr, json.dumps(names, sort_keys=True), json.dumps(values, sort_keys=True))

    backend_module.get_filter_expression = table_module.get_filter_expression = get_filter_expression
