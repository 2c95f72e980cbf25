"""The local state log is compacted while the stack serves without holding the lock every
DynamoDB request takes, except to note where the log ends and to swap the files; the state it
leaves, at ten times the sample's data, is the state after a restart; a kill at any point of a
compaction loses nothing."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from groundchat.config import get_settings
from groundchat.store.dynamo import Dynamo, create_tables
from groundchat.store.tables import USERS
from groundchat_cli import dynamodb_log, log_compaction
from groundchat_cli.moto_store import LocalDynamo
from groundchat_cli.sample import load_sample_if_empty_sync
from tests.conftest import REPO_ROOT

SCALE = 10


@pytest.fixture(autouse=True)
def _no_running_stack(monkeypatch):
    for name in ("PORT", "GROUNDCHAT_DYNAMODB_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)


def dynamo_on(local: LocalDynamo) -> Dynamo:
    return Dynamo(get_settings().model_copy(update={"dynamodb_endpoint": local.endpoint}))


def lock_is_free_to_others() -> bool:
    """Whether another thread could take the request lock now (it is re-entrant, so asking from
    this thread would say yes even while this thread held it)."""
    free: list[bool] = []

    def probe() -> None:
        got = dynamodb_log.REQUEST_LOCK.acquire(blocking=False)
        free.append(got)
        if got:
            dynamodb_log.REQUEST_LOCK.release()

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join()
    return free == [True]


def scaled_log(source: Path, target: Path, copies: int) -> int:
    """`source` (a compacted log) with its items written `copies` times, each copy under its own
    hash keys: the same tables, item shapes and sizes, `copies` times over. Items written."""
    records = dynamodb_log.read_records(source)
    hash_keys = {r["body"]["TableName"]: next(k["AttributeName"] for k in r["body"]["KeySchema"] if k["KeyType"] == "HASH")
                 for r in records if r["op"] == "CreateTable"}
    written = 0
    with open(target, "wb") as out:
        for record in records:
            if record["op"] != dynamodb_log.LOAD_ITEMS:
                out.write(dynamodb_log.encode(record))
        for copy in range(copies):
            for record in records:
                if record["op"] != dynamodb_log.LOAD_ITEMS:
                    continue
                attr = hash_keys[record["body"]["TableName"]]
                items = []
                for item in record["body"]["Items"]:
                    (kind, value), = item[attr].items()
                    items.append({**item, attr: {kind: f"{value}~{copy}" if kind == "S" else value}})
                written += len(items)
                out.write(dynamodb_log.encode({**record, "body": {**record["body"], "Items": items}}))
    return written


def items_by_table(dynamo: Dynamo) -> dict[str, int]:
    """Items per table, as the local DynamoDB counts them now (its ItemCount is live)."""
    return {name: dynamo.client.describe_table(TableName=name)["Table"]["ItemCount"]
            for name in dynamo.client.list_tables()["TableNames"]}


def test_ten_times_the_sample_is_compacted_with_the_lock_free_and_survives_a_restart(tmp_path, prices_file):
    # The sample as the local stack stores it, compacted; then ten times its items.
    sample_log = tmp_path / "sample.log"
    local = LocalDynamo(sample_log).start()
    try:
        dynamo = dynamo_on(local)
        create_tables(dynamo)
        assert load_sample_if_empty_sync(dynamo) == 480
        assert log_compaction.compact_live(local.log) is not None
    finally:
        local.stop()
    log = tmp_path / "state" / "dynamodb.log"
    log.parent.mkdir()
    written = scaled_log(sample_log, log, SCALE)
    assert written > 100_000  # the sample is about ten thousand items

    local = LocalDynamo(log).start()
    try:
        dynamo = dynamo_on(local)
        before = items_by_table(dynamo)
        assert sum(before.values()) == written
        users = dynamo.table(USERS)
        users.put_item(Item={"user_id": "gone", "note": "zanzibarquill"})
        users.delete_item(Key={"user_id": "gone"})
        seen: dict[str, object] = {}

        def build(path: Path, upto: int, out: Path) -> int:
            # While the snapshot is built, the lock is free and requests are served and logged.
            seen["free before"] = lock_is_free_to_others()
            users.put_item(Item={"user_id": "during", "note": "written while the snapshot was built"})
            records = log_compaction.build_in_subprocess(path, upto, out)
            users.put_item(Item={"user_id": "after", "note": "written after it was built"})
            users.delete_item(Key={"user_id": "during"})
            seen["free after"] = lock_is_free_to_others()
            seen["upto"] = upto
            return records

        records = log_compaction.compact_live(local.log, build=build)
        assert seen["free before"] is True and seen["free after"] is True
        ops = [json.loads(line)["op"] for line in log.read_text().splitlines()]
        assert len(ops) == records
        # The tail written meanwhile follows the snapshot, in order.
        assert ops[-3:] == ["PutItem", "PutItem", "DeleteItem"]
        assert "zanzibarquill" not in log.read_text()
        # The delete made during the build still holds what it deleted in the tail's first record:
        # the next compaction takes it out.
        assert local.log.forgotten == 1
        assert not log_compaction.compacting_path(log).exists()
        users.put_item(Item={"user_id": "later"})  # the log takes writes again, in the new file
    finally:
        local.stop()

    local = LocalDynamo(log).start()
    try:
        assert local.replayed.failed == 0
        dynamo = dynamo_on(local)
        after = items_by_table(dynamo)
        users_table = dynamo.name(USERS)
        assert {k: v for k, v in after.items() if k != users_table} == {k: v for k, v in before.items() if k != users_table}
        kept = {i["user_id"] for i in dynamo.table(USERS).scan()["Items"]}
        assert {"after", "later"} <= kept and not {"during", "gone"} & kept
        assert after[users_table] == before[users_table] + 2
    finally:
        local.stop()


CHILD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from groundchat.config import get_settings
    from groundchat.store.dynamo import Dynamo, create_tables
    from groundchat.store.tables import USERS
    from groundchat_cli import log_compaction
    from groundchat_cli.moto_store import LocalDynamo

    log, stop_at = Path(sys.argv[1]), sys.argv[2]
    local = LocalDynamo(log).start()
    dynamo = Dynamo(get_settings().model_copy(update={"dynamodb_endpoint": local.endpoint}))
    create_tables(dynamo, [USERS])
    users = dynamo.table(USERS)
    for n in range(40):
        users.put_item(Item={"user_id": f"u{n}", "n": n})
    users.delete_item(Key={"user_id": "u0"})

    def build(path, upto, out):
        if stop_at == "building":  # half a snapshot on disk
            out.write_bytes(b'{"op":"CreateTable"')
        else:
            log_compaction.build_in_subprocess(path, upto, out)
        users.put_item(Item={"user_id": "meanwhile", "n": -1})
        print("ready", flush=True)
        sys.stdin.read()  # wait here to be killed

    log_compaction.compact_live(local.log, build=build)
""")


@pytest.mark.parametrize("stop_at", ["building", "built"])
def test_a_kill_during_a_compaction_loses_nothing(tmp_path, stop_at):
    log = tmp_path / "dynamodb.log"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(log), stop_at], cwd=REPO_ROOT, env=dict(os.environ),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        assert log_compaction.compacting_path(log).exists()
        child.send_signal(signal.SIGKILL)
        assert child.wait(30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
    local = LocalDynamo(log).start()
    try:
        assert local.replayed.failed == 0
        assert not log_compaction.compacting_path(log).exists()
        users = dynamo_on(local).table(USERS)
        assert sorted(int(i["n"]) for i in users.scan()["Items"]) == [-1, *range(1, 40)]
    finally:
        local.stop()


def test_a_failed_build_leaves_the_log_as_it_was(tmp_path):
    log = tmp_path / "dynamodb.log"
    local = LocalDynamo(log).start()
    try:
        dynamo = dynamo_on(local)
        create_tables(dynamo, [USERS])
        dynamo.table(USERS).put_item(Item={"user_id": "ann"})
        before = log.read_bytes()

        def broken(path: Path, upto: int, out: Path) -> int:
            out.write_bytes(b"half")
            raise log_compaction.CompactionFailed("the builder died")

        with pytest.raises(log_compaction.CompactionFailed):
            log_compaction.compact_live(local.log, build=broken)
        assert log.read_bytes() == before and not log_compaction.compacting_path(log).exists()
        dynamo.table(USERS).put_item(Item={"user_id": "bo"})  # still logging to the same file
        assert len(log.read_bytes().splitlines()) == len(before.splitlines()) + 1
    finally:
        local.stop()
