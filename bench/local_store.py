"""What durability costs the local stack: each DynamoDB write against moto's server in memory, and
against the same server with its state log (appended and fsync'd before the response), measured in
the same run: one server, the log switched off and on in alternating blocks, so both see the same
tables and the same machine load. Also how long a restart takes to replay what was logged.
Prints; asserts nothing.

    .venv/bin/python bench/local_store.py [--writes 300] [--block 25]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")

import boto3  # noqa: E402

from groundchat_cli import dynamodb_log  # noqa: E402
from groundchat_cli.moto_store import LocalDynamo  # noqa: E402

MESSAGES, BUDGET = "bench-messages", "bench-budget"


def client(endpoint: str):
    return boto3.client("dynamodb", endpoint_url=endpoint, region_name="eu-west-1")


def create(ddb) -> None:
    for table in (MESSAGES, BUDGET):
        ddb.create_table(TableName=table, BillingMode="PAY_PER_REQUEST",
                         KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
                         AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                               {"AttributeName": "sk", "AttributeType": "S"}])


def put(ddb, n: int) -> None:
    ddb.put_item(TableName=MESSAGES, Item={"pk": {"S": "conversation"}, "sk": {"S": f"m{n:05d}"},
                                        "text": {"S": "An answer of a few hundred characters. " * 8}})


def transact(ddb, n: int) -> None:
    """A budget-guard-shaped write: a capped counter update and a usage row, all or nothing."""
    ddb.transact_write_items(TransactItems=[
        {"Update": {"TableName": BUDGET, "Key": {"pk": {"S": "budget"}, "sk": {"S": "chat"}},
                    "UpdateExpression": "ADD spent :c", "ConditionExpression": "attribute_not_exists(spent) OR spent < :cap",
                    "ExpressionAttributeValues": {":c": {"N": "0.0001"}, ":cap": {"N": "1000"}}}},
        {"Put": {"TableName": BUDGET, "Item": {"pk": {"S": "usage"}, "sk": {"S": f"u{n:05d}"}, "charged": {"N": "0.0001"}}}},
    ])


def timed(fn, ddb, n: int) -> float:
    start = time.perf_counter()
    fn(ddb, n)
    return (time.perf_counter() - start) * 1000


def figures(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[max(0, int(len(ordered) * 0.95) - 1)]


def measure(local: LocalDynamo, writes: int, block: int) -> dict[str, dict[str, list[float]]]:
    """Alternating blocks of `block` writes of each kind, the log off (in memory) then on."""
    ddb = client(local.endpoint)
    create(ddb)
    for n in range(20):  # warm the connection and moto's parsers
        (put if n % 2 else transact)(ddb, -1 - n)
    times: dict[str, dict[str, list[float]]] = {mode: {"PutItem": [], "TransactWriteItems": []} for mode in ("in memory", "logged")}
    n = 0
    while len(times["logged"]["TransactWriteItems"]) < writes:
        for mode in ("in memory", "logged"):
            if mode == "in memory":
                dynamodb_log.deactivate(local.log)
            else:
                dynamodb_log.activate(local.log)
            for _ in range(block):
                times[mode]["PutItem"].append(timed(put, ddb, n))
                times[mode]["TransactWriteItems"].append(timed(transact, ddb, n))
                n += 1
    return times


def append_alone(path: Path, writes: int) -> tuple[float, float]:
    """The log's own share: one record appended and fsync'd, without moto or HTTP."""
    log = dynamodb_log.WriteLog(path)
    body = {"TableName": MESSAGES, "Item": {"pk": {"S": "conversation"}, "text": {"S": "x" * 300}}}
    times = []
    try:
        for _ in range(writes):
            start = time.perf_counter()
            log.append("PutItem", "eu-west-1", "123456789012", body)
            times.append((time.perf_counter() - start) * 1000)
    finally:
        log.close()
    return figures(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--block", type=int, default=25)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "dynamodb-bench.log"
        local = LocalDynamo(log).start()
        try:
            times = measure(local, args.writes, args.block)
        finally:
            local.stop()
        size, lines = log.stat().st_size, len(log.read_bytes().splitlines())
        start = time.perf_counter()
        local = LocalDynamo(log).start()
        replay_s = time.perf_counter() - start
        local.stop()
        alone = append_alone(Path(tmp) / "append-only.log", args.writes)

    print(f"local DynamoDB: {args.writes} writes of each kind in each mode, alternating blocks of {args.block};")
    print("ms per request from a boto3 client, median / p95")
    print(f"{'operation':20} {'in memory':>16} {'logged + fsync':>18} {'added (median)':>15}")
    for op in ("PutItem", "TransactWriteItems"):
        mem, logged = figures(times["in memory"][op]), figures(times["logged"][op])
        print(f"{op:20} {mem[0]:7.2f} / {mem[1]:6.2f} {logged[0]:9.2f} / {logged[1]:6.2f} {logged[0] - mem[0]:+14.2f}")
    print(f"{'(append + fsync alone)':20} {'':16} {alone[0]:9.2f} / {alone[1]:6.2f}")
    print(f"log: {lines} records, {size / 1024:.0f} KiB (the logged half); restart replays it in {replay_s * 1000:.0f} ms "
          f"({replay_s * 1000 / max(lines, 1):.2f} ms a record)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
