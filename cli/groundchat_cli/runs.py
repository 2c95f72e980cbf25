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
    from groundchat_cli.localstack import use_running_stack
    from groundchat.store.dynamo import Dynamo, create_tables
    from groundchat.store.runs import RunWriter
    from groundchat.store.tables import RUN_VIEWS, RUNS

    # Beside `groundchat serve`, the runs go into the running stack's DynamoDB.
    dynamo = Dynamo(use_running_stack(endpoint))
    create_tables(dynamo, [RUNS, RUN_VIEWS])  # idempotent: a first import on a fresh stack needs them
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
    """Two places where moto's DynamoDB costs what DynamoDB does not, met by the runs' views:

    - A transaction deep-copies every table it touches, once per item, to roll back on failure:
      one run's transaction (about 30 items) would copy the runs and views tables 30 times, so
      importing the sample took minutes and 50,000 runs never finished. Here only the items the
      transaction names are saved and put back, which is the same rollback.
    - A Query on a table's own key walks and sorts every item of the table, not the partition
      asked for. Here each partition's order is kept (until a write to it), and a Query is handed
      that partition from its start key, only Limit + 1 items of it when it has a Limit: the
      same page, at the cost of the items it returns, as in DynamoDB.
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


def _put_back(table, hash_key, range_key, item) -> None:
    table.__dict__.get("_sorted_partitions", {}).pop(hash_key, None)
    if range_key is None:
        if item is None:
            table.items.pop(hash_key, None)
        else:
            table.items[hash_key] = item
    elif item is None:
        table.items.get(hash_key, {}).pop(range_key, None)
    else:
        table.items[hash_key][range_key] = item


def _patch_partition_queries(table_type) -> None:
    import bisect
    import threading

    asked = threading.local()
    original_query, original_all_items = table_type.query, table_type.all_items
    original_put, original_delete = table_type.put_item, table_type.delete_item

    def forget(table, hash_key) -> None:  # any write to a partition drops its kept order
        table.__dict__.get("_sorted_partitions", {}).pop(hash_key, None)

    def put_item(self, item_attrs, *args, **kwargs):
        item = original_put(self, item_attrs, *args, **kwargs)
        forget(self, item.hash_key)
        return item

    def delete_item(self, hash_key, range_key):
        forget(self, hash_key)
        return original_delete(self, hash_key, range_key)

    def partition(table, hash_key):
        kept = table.__dict__.setdefault("_sorted_partitions", {})
        if hash_key not in kept:
            items = sorted(table.items.get(hash_key, {}).values(), key=lambda item: item.range_key.cast_value)
            kept[hash_key] = ([item.range_key.cast_value for item in items], items)
        return kept[hash_key]

    def page(table, hash_key, range_comparison, range_objs, limit, start_key, forward):
        """The items a Query can return, in key order: those past the start key, and when it has a
        Limit only the first Limit + 1 of them that meet the key condition (one more than a page,
        so moto still sees that there are more and says where to go on)."""
        keys, items = partition(table, hash_key)
        if start_key and table.range_key_attr in start_key:
            from moto.dynamodb.models.dynamo_type import DynamoType

            at = DynamoType(start_key[table.range_key_attr]).cast_value
            items = items[bisect.bisect_right(keys, at):] if forward else items[:bisect.bisect_left(keys, at)]
        if not limit:
            return items
        ordered = items if forward else reversed(items)
        chosen = []
        for item in ordered:
            if range_comparison is None or item.range_key.compare(range_comparison, range_objs):
                chosen.append(item)
                if len(chosen) > limit:
                    break
        return chosen if forward else chosen[::-1]

    def query(self, hash_key, range_comparison, range_objs, limit, exclusive_start_key, scan_index_forward,
              projection_expressions, index_name=None, *args, **kwargs):
        call = (self, hash_key, range_comparison, range_objs, limit, exclusive_start_key, scan_index_forward,
                projection_expressions, index_name, *args)
        legacy_filters = {k: v for k, v in kwargs.items() if k not in ("filter_expression", "hash_key_conditions",
                                                                       "range_key_conditions")}
        if index_name or hash_key is None or not self.range_key_attr:
            return original_query(*call, **kwargs)
        if legacy_filters:  # KeyConditions-era filters: the whole partition, for moto to apply them
            chosen = partition(self, hash_key)[1]
        else:
            chosen = page(self, hash_key, range_comparison, range_objs, limit, exclusive_start_key, scan_index_forward is not False)
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

    table_type.query, table_type.all_items = query, all_items
    table_type.put_item, table_type.delete_item = put_item, delete_item


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
