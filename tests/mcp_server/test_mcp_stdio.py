"""`groundchat mcp` on stdio, started as an MCP host starts it and read with the SDK's stdio client,
against a DynamoDB served on 127.0.0.1 (moto's server, as the local stack runs it)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from groundchat.auth.callers import RUNS_READ


@pytest.fixture
def local_dynamo():
    from groundchat_cli.moto_store import LocalDynamo
    from groundchat_cli.sample import load_sample_if_empty_sync
    from groundchat.config import Settings
    from groundchat.store.dynamo import Dynamo, create_tables
    from groundchat.store.tables import USERS

    db = LocalDynamo().start()
    try:
        dynamo = Dynamo(Settings(dynamodb_endpoint=db.endpoint))
        create_tables(dynamo)
        load_sample_if_empty_sync(dynamo)
        dynamo.table(USERS).put_item(Item={"user_id": "rita", "grants": {RUNS_READ}})
        yield db.endpoint, dynamo
    finally:
        db.stop()


def _command(*args: str):
    from mcp import StdioServerParameters

    return StdioServerParameters(command=sys.executable, args=["-m", "groundchat_cli.main", "mcp", *args],
                                 env=dict(os.environ))


async def test_the_stdio_server_offers_the_users_tools_and_traces_a_call(local_dynamo):
    from mcp import ClientSession, stdio_client

    endpoint, dynamo = local_dynamo
    async with stdio_client(_command("--user", "rita", "--endpoint", endpoint)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            rules = await session.call_tool("top_rules", {"limit": 2})
            refused = await session.call_tool("search_docs", {"query": "contrast"})
    assert names == ["compare_contexts", "list_runs", "get_run", "top_rules"]  # runs.read only
    assert rules.is_error is False and len(json.loads(rules.content[0].text)["rules"]) == 2
    assert refused.is_error and refused.content[0].text == "error: tool 'search_docs' is not available to this caller"
    from groundchat.store.traces import TraceStore

    trace = await TraceStore(dynamo).get(rules.meta["groundchat/run_id"], "rita")
    assert trace["steps"][0]["name"] == "top_rules" and trace["steps"][0]["client"] == "mcp"


def test_without_a_running_stack_it_says_in_one_line_to_start_one():
    done = subprocess.run([sys.executable, "-m", "groundchat_cli.main", "mcp"], env=dict(os.environ),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stdout == ""  # stdout is the MCP channel: nothing but the protocol goes there
    [line] = done.stderr.splitlines()
    assert "make run" in line
