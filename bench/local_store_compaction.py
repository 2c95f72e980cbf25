"""Request latency of the local stack's DynamoDB while its state log is compacted: a client keeps
asking (a GetItem, a PutItem and a budget-shaped transaction in turn) while the log is compacted
off the request path (log_compaction.py), and, for comparison, while the same snapshot is taken
under the request lock as it was before. The state is `--items` items of about the sample's size
(the sample stores about 10,500). Prints; asserts nothing.

    .venv/bin/python bench/local_store_compaction.py [--items 10500] [--rounds 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")

import boto3  # noqa: E402

from groundchat_cli import dynamodb_log, log_compaction  # noqa: E402
from groundchat_cli.moto_store import LocalDynamo  # noqa: E402

TABLE = "bench-state"
REGION, ACCOUNT = "eu-west-1", "123456789012"
TEXT = "An answer of a few hundred characters, as the sample's runs and messages hold. " * 9


def client(endpoint: str):
    return boto3.client("dynamodb", endpoint_url=endpoint, region_name=REGION)


def seeded_log(path: Path, items: int) -> None:
    """A log holding `items` items (as a compaction writes them), then one deleting write, so a
    compaction has something to forget."""
    local = LocalDynamo(path).start()
    try:
        client(local.endpoint).create_table(
            TableName=TABLE, BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}])
    finally:
        local.stop()
    with open(path, "ab") as log:
        for start in range(0, items, dynamodb_log.ITEMS_PER_RECORD):
            batch = [{"pk": {"S": f"p{n % 500}"}, "sk": {"S": f"s{n:07d}"}, "text": {"S": TEXT}, "n": {"N": str(n)}}
                     for n in range(start, min(items, start + dynamodb_log.ITEMS_PER_RECORD))]
            log.write(dynamodb_log.encode({"op": dynamodb_log.LOAD_ITEMS, "region": REGION, "account": ACCOUNT,
                                           "body": {"TableName": TABLE, "Items": batch}}))


def ask(ddb, n: int) -> None:
    kind = n % 3
    if kind == 0:
        ddb.get_item(TableName=TABLE, Key={"pk": {"S": "p1"}, "sk": {"S": "s0000001"}})
    elif kind == 1:
        ddb.put_item(TableName=TABLE, Item={"pk": {"S": "live"}, "sk": {"S": f"w{n:07d}"}, "text": {"S": "x" * 300}})
    else:
        ddb.transact_write_items(TransactItems=[
            {"Update": {"TableName": TABLE, "Key": {"pk": {"S": "budget"}, "sk": {"S": "chat"}},
                        "UpdateExpression": "ADD spent :c", "ExpressionAttributeValues": {":c": {"N": "0.0001"}}}},
            {"Delete": {"TableName": TABLE, "Key": {"pk": {"S": "live"}, "sk": {"S": f"w{n - 1:07d}"}}}},
        ])


def under_the_lock(log: dynamodb_log.WriteLog) -> int:
    """The same snapshot taken the way it was before: in the server, holding the request lock."""
    with dynamodb_log.REQUEST_LOCK:
        compacted = dynamodb_log.snapshot(dynamodb_log.read_records(log.path))
        dynamodb_log.write_atomically(log.path, compacted)
        log.reopen()
        log.forgotten = 0
        return len(compacted)


def measure(local: LocalDynamo, compact, rounds: int) -> tuple[list[float], list[float], list[float]]:
    """(latencies while compacting, latencies between compactions, compaction durations), ms."""
    ddb = client(local.endpoint)
    for n in range(30):
        ask(ddb, n)
    compacting = threading.Event()
    stop = threading.Event()
    during: list[float] = []
    between: list[float] = []

    def requests() -> None:
        n = 30
        while not stop.is_set():
            busy = compacting.is_set()
            start = time.perf_counter()
            ask(ddb, n)
            elapsed = (time.perf_counter() - start) * 1000
            (during if busy or compacting.is_set() else between).append(elapsed)
            n += 1

    thread = threading.Thread(target=requests)
    thread.start()
    durations = []
    try:
        for _ in range(rounds):
            time.sleep(1.0)
            compacting.set()
            start = time.perf_counter()
            compact(local.log)
            durations.append((time.perf_counter() - start) * 1000)
            compacting.clear()
        time.sleep(1.0)
    finally:
        stop.set()
        thread.join()
    return during, between, durations


def figures(times: list[float]) -> str:
    if not times:
        return "no requests"
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"{len(ordered):6d} requests  p50 {statistics.median(ordered):8.1f}  p99 {p99:8.1f}  max {ordered[-1]:8.1f}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=10_500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, compact in (("off the request path", log_compaction.compact_live), ("under the lock (before)", under_the_lock)):
            log = Path(tmp) / f"{name.split()[0]}.log"
            seeded_log(log, args.items)
            local = LocalDynamo(log).start()
            try:
                results[name] = measure(local, compact, args.rounds)
            finally:
                local.stop()
    print(f"local DynamoDB with {args.items} items: request latency in ms from a boto3 client, "
          f"{args.rounds} compactions each way")
    for name, (during, between, durations) in results.items():
        print(f"compaction {name}: each took {statistics.median(durations):.0f} ms (median)")
        print(f"  while compacting   {figures(during)}")
        print(f"  between            {figures(between)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
