"""`groundchat serve` as `make run` starts it, on any PORT, with the CLI beside it in another shell
that exports nothing: the commands find the stack, the state survives kill -9 and a restart, a clean
exit removes the address file, two stacks keep their own, and an external DynamoDB is used as is."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from groundchat_cli.moto_store import LocalDynamo
from groundchat_cli.stack_address import free_port
from groundchat_cli.serving import wait_until_answering
from tests.conftest import REPO_ROOT

GROUNDCHAT = str(Path(sys.executable).parent / "groundchat")


@pytest.fixture
def shell(tmp_path):
    """The environment of a developer's shell: this test's GROUNDCHAT_HOME and secret, no corpus to
    index (so starting is quick), the offline answerer, and no PORT."""
    env = {k: v for k, v in os.environ.items() if k not in ("PORT", "GROUNDCHAT_DYNAMODB_ENDPOINT")}
    env.update(GROUNDCHAT_CORPUS_DIR=str(tmp_path / "no-corpus"), GROUNDCHAT_DOCS_DIR=str(tmp_path / "no-docs"),
               GROUNDCHAT_MODEL="offline")
    return env


@pytest.fixture
def stacks(shell):
    """Start `groundchat serve` processes; each is stopped (and, if need be, killed) by the test."""
    started: list[subprocess.Popen] = []

    def start(port: int, *args: str, wait: bool = True, **env: str) -> subprocess.Popen:
        proc = subprocess.Popen([GROUNDCHAT, "serve", *args], cwd=REPO_ROOT, env={**shell, "PORT": str(port), **env},
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        proc.port = port
        started.append(proc)
        if wait:
            wait_until_answering(f"http://127.0.0.1:{proc.port}", proc, "serve")
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def stop(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGINT)  # Ctrl-C
    return proc.wait(30)


def cli(shell: dict, *argv: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([GROUNDCHAT, *argv], cwd=REPO_ROOT, env={**shell, **env}, capture_output=True, text=True, timeout=120)


def conversations(url: str) -> list[str]:
    from groundchat.auth.tokens import issue_dev_token
    from groundchat.config import get_settings

    token = issue_dev_token(get_settings(), "dev", days=1)  # the shell's secret: GROUNDCHAT_DEV_SECRET
    resp = httpx.get(f"{url}/api/conversations", headers={"authorization": f"Bearer {token}"}, timeout=10)
    return [c["conversation_id"] for c in resp.json()["conversations"]]


def test_the_cli_finds_the_stack_on_any_port_and_its_state_survives_kill_9(stacks, shell):
    home = Path(shell["GROUNDCHAT_HOME"])
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    first = stacks(port)
    assert json.loads((home / f"stack-{port}.json").read_text())["url"] == url

    granted = cli(shell, "users", "grant", "alice", "chat.use")
    assert (granted.returncode, granted.stdout) == (0, "alice: chat.use\n")
    asked = cli(shell, "try", "Which context level is best?")
    assert asked.returncode == 0, asked.stderr
    [conversation] = re.findall(r"conversation: ([0-9a-f]{32})", asked.stdout)
    status = cli(shell, "budget", "status")
    assert json.loads(status.stdout)["chat"]["cap"] == "1"

    first.send_signal(signal.SIGKILL)
    first.wait(30)
    left = cli(shell, "users", "list")  # the address file of the killed stack is not believed
    assert (left.returncode, left.stdout) == (1, "")
    assert left.stderr == "no local stack on port 8000: start it with `make run` (or set PORT / --endpoint)\n"

    second = stacks(port)
    listed = cli(shell, "users", "list")
    assert listed.stdout.splitlines() == ["alice: chat.use", "dev: chat.use, docs.read, recall.read, runs.read, traces.read, views.show"]
    assert conversations(url) == [conversation]
    assert stop(second) == 0
    assert not (home / f"stack-{port}.json").exists()

    third = stacks(port, "--reset-state")
    assert cli(shell, "users", "list").stdout.splitlines() == ["dev: chat.use, docs.read, recall.read, runs.read, traces.read, views.show"]
    assert conversations(url) == []
    assert stop(third) == 0


def test_two_stacks_keep_their_own_address_and_an_external_dynamodb_is_used_as_is(stacks, shell):
    from groundchat.config import get_settings
    from groundchat.store.dynamo import Dynamo
    from groundchat.store.tables import USERS

    home = Path(shell["GROUNDCHAT_HOME"])
    external = LocalDynamo().start()  # someone else's DynamoDB, in memory, in this process
    try:
        p1, p2 = free_port(), free_port()
        for proc in [stacks(p1, wait=False, GROUNDCHAT_DYNAMODB_ENDPOINT=external.endpoint), stacks(p2, wait=False)]:
            wait_until_answering(f"http://127.0.0.1:{proc.port}", proc, "serve")
        addresses = {p: json.loads((home / f"stack-{p}.json").read_text()) for p in (p1, p2)}
        assert addresses[p1]["dynamodb_endpoint"] == external.endpoint
        assert addresses[p2]["dynamodb_endpoint"] != external.endpoint
        assert not (home / f"dynamodb-{p1}.log").exists() and (home / f"dynamodb-{p2}.log").exists()

        both = sorted((p1, p2))
        several = cli(shell, "users", "list")
        assert (several.returncode, several.stderr) == (1, f"2 local stacks are running (ports {both[0]}, {both[1]}): set PORT or pass --endpoint\n")
        several = cli(shell, "try", "hello")
        assert several.stderr == f"2 local stacks are running (ports {both[0]}, {both[1]}): set PORT or pass --url\n"

        assert cli(shell, "users", "grant", "bob", "docs.read", PORT=str(p1)).returncode == 0
        outside = Dynamo(get_settings().model_copy(update={"dynamodb_endpoint": external.endpoint}))
        assert outside.table(USERS).get_item(Key={"user_id": "bob"})["Item"]["grants"] == {"docs.read"}
        assert "bob" not in cli(shell, "users", "list", PORT=str(p2)).stdout
        asked = cli(shell, "try", "What do agents get wrong most often?", PORT=str(p2))
        assert asked.returncode == 0 and "done: complete" in asked.stdout
        asked = cli(shell, "try", "What do agents get wrong most often?", "--url", f"http://127.0.0.1:{p1}")
        assert asked.returncode == 0 and "done: complete" in asked.stdout
    finally:
        external.stop()
