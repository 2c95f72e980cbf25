"""`groundchat runs import FILE…`, `runs sample` and `runs repair`: the benchmark's runs from the shell."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_runs_commands(subparsers: argparse._SubParsersAction) -> None:
    from groundchat_cli.localstack import add_endpoint_option

    runs = subparsers.add_parser("runs", help="benchmark runs: import axe-core results, load sample data, check the aggregates")
    sub = runs.add_subparsers(dest="runs_command", required=True)

    p = sub.add_parser("import", help="import JSONL files of runs (each run's `axe` is an axe-core result)")
    p.add_argument("files", nargs="+", type=Path)
    add_endpoint_option(p)
    p.set_defaults(func=_cmd_import)

    p = sub.add_parser("sample", help="write the sample benchmark as JSONL, or load it into an empty store")
    p.add_argument("--out", type=Path, help="write the JSONL here instead of loading it ('-' for stdout)")
    p.add_argument("--seed", type=int, default=None, help="generator seed (default: the documented one)")
    add_endpoint_option(p)
    p.set_defaults(func=_cmd_sample)

    p = sub.add_parser("repair", help="recompute the aggregates and run lists from the runs and report any difference")
    p.add_argument("--fix", action="store_true", help="also rewrite what differs (each write conditional on what was read)")
    add_endpoint_option(p)
    p.set_defaults(func=_cmd_repair)


def _writer(endpoint: str | None):
    from groundchat_cli.localstack import StackError, use_running_stack
    from groundchat.store.dynamo import Dynamo, create_tables
    from groundchat.store.runs import RunWriter
    from groundchat.store.table_indexes import IndexNotReady, add_missing_indexes
    from groundchat.store.tables import RUN_VIEWS, RUNS

    # Beside `groundchat serve`, the runs go into the running stack's DynamoDB.
    dynamo = Dynamo(use_running_stack(endpoint))
    create_tables(dynamo, [RUNS, RUN_VIEWS])  # idempotent: a first import on a fresh stack needs them
    # A local store made before the run views had their indexes (the local stack adds them when it
    # starts). Never the deployed tables: their indexes are the stack's (template.yaml).
    try:
        added = add_missing_indexes(dynamo, [RUNS, RUN_VIEWS]) if dynamo.settings.dynamodb_endpoint else []
    except IndexNotReady as exc:
        raise StackError(str(exc)) from None
    if added:
        print(f"index(es) added: {', '.join(added)}; `groundchat runs repair --fix` gives the runs stored before "
              "them their index keys", file=sys.stderr)
    return dynamo, RunWriter(dynamo)


def _cmd_import(args: argparse.Namespace) -> int:
    from groundchat.benchmark.runs_import import import_file

    missing = [str(p) for p in args.files if not p.is_file()]
    if missing:
        print(f"no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    _, writer = _writer(args.endpoint)
    failed = False
    # Each file stands alone: a bad file is reported and left out, the good ones still load.
    for path in args.files:
        report = import_file(writer, path)
        if report.errors:
            failed = True
            print(f"{path}: not imported ({len(report.errors)} bad line(s)); nothing from this file was written", file=sys.stderr)
            for err in report.errors[:50]:
                print(f"  {err}", file=sys.stderr)
            if len(report.errors) > 50:
                print(f"  … and {len(report.errors) - 50} more", file=sys.stderr)
            continue
        print(f"{path}: {len(report.imported)} run(s) imported, {len(report.skipped)} already present")
    return 1 if failed else 0


def _cmd_sample(args: argparse.Namespace) -> int:
    from groundchat_cli import sample

    seed = sample.SEED if args.seed is None else args.seed
    if args.out is not None:
        text = sample.sample_jsonl(seed)
        if str(args.out) == "-":
            sys.stdout.write(text)
        else:
            args.out.write_text(text, encoding="utf-8")
            print(f"wrote {text.count(chr(10))} runs to {args.out}")
        return 0
    dynamo, _ = _writer(args.endpoint)
    loaded = sample.load_sample_if_empty_sync(dynamo, seed)
    print(f"sample of {loaded} runs loaded" if loaded else "the runs table already holds runs: sample not loaded")
    return 0


def _cmd_repair(args: argparse.Namespace) -> int:
    """Exit 0 when the views agree with the runs (or were fixed), 1 when they differ."""
    from groundchat.store.run_repair import check_views

    dynamo, _ = _writer(args.endpoint)
    report = check_views(dynamo, fix=args.fix)
    for line in report.lines():
        print(line)
    return 0 if report.clean or (args.fix and report.fixed_all) else 1


# ---- moto ----------------------------------------------------------------------------------------


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
