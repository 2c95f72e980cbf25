"""The local stack's DynamoDB survives a restart: every successful write is logged (fsync'd before
its response) and replayed at start; refused conditional writes are not logged; a kill -9 right
after a charge keeps the charge."""
from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import textwrap
from decimal import Decimal

import pytest
from botocore.exceptions import ClientError

from groundchat.config import get_settings
from groundchat.models.messages import UsageEvent
from groundchat.spending.budget_guard import BudgetGuard
from groundchat.store import budget_counters as bc
from groundchat.store.dynamo import Dynamo, condition_failed, create_tables
from groundchat.store.tables import BUDGET, CONVERSATIONS, USERS
from groundchat_cli import dynamodb_log
from groundchat_cli.moto_store import LocalDynamo
from tests.conftest import REPO_ROOT
from tests.spending.helpers import counter, first_request, registry, usage_rows


@pytest.fixture
def state(tmp_path, prices_file, monkeypatch):
    """Start (and restart) the logged local DynamoDB on one log file; every server is stopped."""
    for name in ("PORT", "GROUNDCHAT_DYNAMODB_ENDPOINT"):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    log = tmp_path / "home" / "dynamodb-8000.log"
    started: list[LocalDynamo] = []

    def start(reset: bool = False) -> tuple[LocalDynamo, Dynamo]:
        for server in started:
            server.stop()
        local = LocalDynamo(log, reset=reset).start()
        started.append(local)
        return local, Dynamo(get_settings().model_copy(update={"dynamodb_endpoint": local.endpoint}))

    start.log = log
    yield start
    for server in started:
        server.stop()


def charge(dynamo: Dynamo, caller: str = "ann") -> Decimal:
    """One priced step through the budget guard: a reservation, then a settlement (transactions)."""
    async def step() -> Decimal:
        guard = BudgetGuard(dynamo, dynamo.settings, caller, "c", f"run-{caller}", "scripted")
        held = await guard.reserve(await first_request(registry(), caller, "q", 3000), 0)
        return Decimal((await guard.settle(held, UsageEvent(input_tokens=1000, output_tokens=500)))["charged"])

    return asyncio.run(step())


def claim_conversation(dynamo: Dynamo, conversation_id: str) -> bool:
    """A conditional put: only the first claim of an id succeeds."""
    try:
        dynamo.table(CONVERSATIONS).put_item(
            Item={"conversation_id": conversation_id, "owner": "ann", "created_at": f"2026-12-01T00:00:0{conversation_id[-1]}Z",
                  "title": "first"},
            ConditionExpression="attribute_not_exists(conversation_id)",
        )
    except ClientError as exc:
        assert condition_failed(exc)
        return False
    return True


def log_ops(path) -> list[str]:
    return [json.loads(line)["op"] for line in path.read_text().splitlines()]


def test_items_counters_and_conditions_are_the_same_after_a_restart(state):
    local, dynamo = state()
    create_tables(dynamo)
    assert claim_conversation(dynamo, "c1") is True
    dynamo.table(USERS).put_item(Item={"user_id": "ann", "grants": {"chat.use"}})
    charged = charge(dynamo)
    assert charged == Decimal("0.002")
    logged = log_ops(state.log)
    assert {"CreateTable", "UpdateTimeToLive", "PutItem", "TransactWriteItems"} <= set(logged)
    # A refused conditional write changes nothing and is not logged.
    assert claim_conversation(dynamo, "c1") is False
    assert log_ops(state.log) == logged

    local, dynamo = state()  # a new server, an empty moto, the same log
    assert local.replayed.records == len(logged) and local.replayed.failed == 0
    assert set(dynamo.client.list_tables()["TableNames"]) >= {dynamo.name(CONVERSATIONS), dynamo.name(BUDGET)}
    item = dynamo.table(CONVERSATIONS).get_item(Key={"conversation_id": "c1"})["Item"]
    assert item["title"] == "first"
    by_owner = dynamo.table(CONVERSATIONS).query(IndexName="by_owner", KeyConditionExpression="#o = :o",
                                                 ExpressionAttributeNames={"#o": "owner"}, ExpressionAttributeValues={":o": "ann"})
    assert [i["conversation_id"] for i in by_owner["Items"]] == ["c1"]
    assert dynamo.table(USERS).get_item(Key={"user_id": "ann"})["Item"]["grants"] == {"chat.use"}
    chat, ann = counter(dynamo, bc.CHAT_SCOPE), counter(dynamo, bc.user_scope("ann"))
    assert (chat.spent, chat.reserved, ann.spent) == (Decimal("0.002"), 0, Decimal("0.002"))
    assert len(usage_rows(dynamo)) == 1
    ttl = dynamo.client.describe_time_to_live(TableName=dynamo.name(CONVERSATIONS))["TimeToLiveDescription"]
    assert ttl["TimeToLiveStatus"] == "ENABLED"
    # Conditions see the replayed state: the claimed id is still claimed, a new one is free.
    assert claim_conversation(dynamo, "c1") is False
    assert claim_conversation(dynamo, "c2") is True
    # Counters go on from where they were.
    charge(dynamo)
    assert counter(dynamo, bc.CHAT_SCOPE).spent == Decimal("0.004")


def test_the_log_is_compacted_at_start_and_keeps_the_state(state):
    _, dynamo = state()
    create_tables(dynamo, [USERS])
    for n in range(30):
        dynamo.table(USERS).put_item(Item={"user_id": "ann", "grants": {f"p{n}"}, "n": n})
    dynamo.table(USERS).put_item(Item={"user_id": "bo", "grants": {"chat.use"}})
    dynamo.table(USERS).delete_item(Key={"user_id": "bo"})
    assert len(log_ops(state.log)) == 1 + 32

    local, dynamo = state()
    assert local.replayed.compacted_to == 2
    assert log_ops(state.log) == ["CreateTable", "LoadItems"]
    assert dynamo.table(USERS).get_item(Key={"user_id": "ann"})["Item"] == {"user_id": "ann", "grants": {"p29"}, "n": 29}
    assert "Item" not in dynamo.table(USERS).get_item(Key={"user_id": "bo"})

    _, dynamo = state()  # the compacted log replays to the same state
    assert [i["user_id"] for i in dynamo.table(USERS).scan()["Items"]] == ["ann"]


def test_reset_state_starts_empty(state):
    _, dynamo = state()
    create_tables(dynamo, [USERS])
    _, dynamo = state(reset=True)
    assert dynamo.client.list_tables()["TableNames"] == []
    assert not state.log.exists() or state.log.read_text() == ""


def test_a_torn_last_line_is_dropped_and_a_bad_line_before_it_stops_the_start(state):
    _, dynamo = state()
    create_tables(dynamo, [USERS])
    good = state.log.read_bytes()
    state.log.write_bytes(good + b'{"op": "PutItem", "region"')  # the process died mid-write
    _, dynamo = state()
    assert dynamo.client.list_tables()["TableNames"] == [dynamo.name(USERS)]
    assert state.log.read_bytes() == good  # the torn tail is cut, new records follow whole lines

    state.log.write_bytes(b"not json\n" + good)
    with pytest.raises(dynamodb_log.LogCorrupt, match="line 1"):
        state()


def test_a_write_the_log_cannot_take_is_refused_not_applied(state):
    local, dynamo = state()
    create_tables(dynamo, [USERS])
    local._log.broken = "disk full"
    with pytest.raises(ClientError, match="cannot be written"):
        dynamo.table(USERS).put_item(Item={"user_id": "ann"})
    assert dynamo.table(USERS).scan()["Items"] == []  # reads still work, and see no write


CHILD = textwrap.dedent("""
    import asyncio, json, sys
    from decimal import Decimal
    from groundchat.config import get_settings
    from groundchat.store.dynamo import Dynamo, create_tables
    from groundchat_cli.moto_store import LocalDynamo
    from tests.cli.test_local_state import charge

    local = LocalDynamo(sys.argv[1]).start()
    dynamo = Dynamo(get_settings().model_copy(update={"dynamodb_endpoint": local.endpoint}))
    create_tables(dynamo)
    print(json.dumps({"charged": str(charge(dynamo))}), flush=True)
    sys.stdin.read()  # wait here to be killed
""")


def test_a_charge_acknowledged_before_kill_9_is_counted_after_the_restart(state, tmp_path):
    env = {k: v for k, v in __import__("os").environ.items()}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(state.log)], cwd=REPO_ROOT, env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline()
        child.send_signal(signal.SIGKILL)  # right after the write returned
        assert child.wait(30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
    assert json.loads(line) == {"charged": "0.002"}

    local, dynamo = state()
    assert local.replayed.failed == 0
    chat, ann = counter(dynamo, bc.CHAT_SCOPE), counter(dynamo, bc.user_scope("ann"))
    assert (chat.spent, chat.reserved, ann.spent) == (Decimal("0.002"), 0, Decimal("0.002"))
    [row] = usage_rows(dynamo)
    assert Decimal(row["charged"]) == Decimal("0.002")


def test_a_deleted_items_words_leave_the_log_at_the_next_sweep_while_the_stack_runs(state):
    """A deleted conversation's words stay in the log's earlier records until it is compacted; the
    local sweep's `after` compacts it when something was deleted or a message rewritten."""
    local, dynamo = state()
    create_tables(dynamo, [USERS])
    dynamo.table(USERS).put_item(Item={"user_id": "ann", "grants": {"chat.use"}, "note": "kept-words"})
    dynamo.table(USERS).put_item(Item={"user_id": "bo", "grants": {"chat.use"}, "note": "zanzibarquill"})
    assert local.forget_deleted() is None  # nothing deleted yet: no compaction
    dynamo.table(USERS).delete_item(Key={"user_id": "bo"})
    assert "zanzibarquill" in state.log.read_text()
    assert local.forget_deleted() == 2  # CreateTable, and the one batch holding ann
    text = state.log.read_text()
    assert "zanzibarquill" not in text and "kept-words" in text
    dynamo.table(USERS).put_item(Item={"user_id": "cy", "grants": {"chat.use"}})  # the log takes writes again
    assert log_ops(state.log) == ["CreateTable", "LoadItems", "PutItem"]
    _, dynamo = state()  # and replays to the same state
    assert sorted(i["user_id"] for i in dynamo.table(USERS).scan()["Items"]) == ["ann", "cy"]


@pytest.mark.parametrize("op, body, forgets", [
    ("DeleteItem", {"TableName": "t", "Key": {}}, True),
    ("UpdateItem", {"UpdateExpression": "SET content = :c DELETE recalled_from :gone"}, True),
    ("UpdateItem", {"UpdateExpression": "SET active_until = :u"}, False),
    ("TransactWriteItems", {"TransactItems": [{"Put": {}}, {"Delete": {}}]}, True),
    ("TransactWriteItems", {"TransactItems": [{"Put": {}}, {"Update": {}}]}, False),
    ("BatchWriteItem", {"RequestItems": {"t": [{"DeleteRequest": {}}]}}, True),
    ("PutItem", {"Item": {}}, False),
])
def test_what_counts_as_forgetting(op, body, forgets):
    assert dynamodb_log.forgets(op, body) is forgets
