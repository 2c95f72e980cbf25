"""Every command that reads state finds the stack started from this checkout: on PORT, or the one
running, or the one named by --url / --endpoint; without one it says what to do in one line."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from groundchat.config import get_settings, reset_settings_cache
from groundchat_cli.moto_store import LocalDynamo
from groundchat_cli.stack_address import (
    Stack, StackError, find_stack, remove_stack_file, stack_file, use_running_stack, write_stack_file,
)
from groundchat_cli.main import main
from tests.benchmark.conftest import jsonl

NO_STACK = "no local stack on port {port}: start it with `make run` (or set PORT / {flag})"


@pytest.fixture(autouse=True)
def _no_port(monkeypatch):
    """The shell of a test exports no PORT, like the README's reader; what a command sets in its
    environment to reach the stack is undone after each test."""
    for name in ("PORT", "GROUNDCHAT_DYNAMODB_ENDPOINT"):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)


@pytest.fixture
def listening():
    """Endpoints that accept connections (a stack's address file is believed only when they do)."""
    sockets = []

    def make() -> str:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen()
        sockets.append(s)
        return f"http://127.0.0.1:{s.getsockname()[1]}"

    yield make
    for s in sockets:
        s.close()


def announce(port: int, endpoint: str, url: str | None = None, pid: int | None = None) -> Stack:
    """What `groundchat serve` writes when it starts on `port`."""
    stack = Stack(port=port, url=url or f"http://127.0.0.1:{port}", dynamodb_endpoint=endpoint,
                  pid=os.getpid() if pid is None else pid, table_prefix=get_settings().table_prefix)
    write_stack_file(get_settings(), stack)
    return stack


@pytest.fixture
def moto_stack():
    """moto's DynamoDB server on 127.0.0.1 (in memory), announced as the stack on port 8123."""
    local = LocalDynamo().start()
    try:
        yield announce(8123, local.endpoint)
    finally:
        local.stop()
        reset_settings_cache()


def dynamo_at(endpoint: str):
    from groundchat.store.dynamo import Dynamo

    return Dynamo(get_settings().model_copy(update={"dynamodb_endpoint": endpoint}))


def one_line(capsys) -> str:
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


# ---- runs import / runs sample beside the stack --------------------------------------------------


def test_runs_import_and_sample_write_into_the_running_stack(moto_stack, sample_lines, tmp_path, capsys):
    from groundchat.store.tables import RUNS

    good = tmp_path / "good.jsonl"
    good.write_text(jsonl(sample_lines[:3]), encoding="utf-8")
    assert main(["runs", "import", str(good)]) == 0
    assert "3 run(s) imported, 0 already present" in capsys.readouterr().out
    dynamo = dynamo_at(moto_stack.dynamodb_endpoint)
    assert dynamo.client.scan(TableName=dynamo.name(RUNS), Select="COUNT")["Count"] == 6  # two items a run
    assert main(["runs", "sample"]) == 0
    assert capsys.readouterr().out.strip() == "the runs table already holds runs: sample not loaded"


# ---- no stack: one line, non-zero --------------------------------------------------------------


STATE_COMMANDS = [
    (["users", "list"], "--endpoint"),
    (["users", "grant", "alice", "chat.use"], "--endpoint"),
    (["tool", "top_rules", '{"limit": 1}', "--as", "dev"], "--endpoint"),
    (["runs", "sample"], "--endpoint"),
    (["runs", "import", "RUNS"], "--endpoint"),
    (["budget", "status"], "--endpoint"),
    (["budget", "sweep"], "--endpoint"),
    (["budget", "reset", "--scope", "chat", "--yes"], "--endpoint"),
    (["try", "Which context level is best?"], "--url"),
    (["examples"], "--url"),
]


@pytest.mark.parametrize("argv,flag", STATE_COMMANDS, ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_without_a_stack_each_command_says_what_to_do_in_one_line(argv, flag, sample_lines, tmp_path, capsys, monkeypatch):
    runs = tmp_path / "runs.jsonl"
    runs.write_text(jsonl(sample_lines[:1]), encoding="utf-8")
    argv = [str(runs) if a == "RUNS" else a for a in argv]
    assert main(argv) == 1
    assert one_line(capsys) == NO_STACK.format(port=8000, flag=flag)
    monkeypatch.setenv("PORT", "8765")
    assert main(argv) == 1
    assert one_line(capsys) == NO_STACK.format(port=8765, flag=flag)


def test_a_file_left_by_a_killed_stack_is_ignored(listening, capsys):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    announce(8000, listening(), pid=int(gone.stdout))
    assert main(["users", "list"]) == 1
    assert one_line(capsys) == NO_STACK.format(port=8000, flag="--endpoint")


# ---- which stack -------------------------------------------------------------------------------


def test_port_names_the_stack_and_two_running_stacks_need_a_choice(listening, monkeypatch, capsys):
    first, second = announce(8000, listening()), announce(8765, listening())
    settings = get_settings()
    assert {p.name for p in Path(settings.home).glob("stack-*.json")} == {"stack-8000.json", "stack-8765.json"}
    assert main(["users", "list"]) == 1
    assert one_line(capsys) == "2 local stacks are running (ports 8000, 8765): set PORT or pass --endpoint"
    assert main(["try", "hello"]) == 1
    assert one_line(capsys) == "2 local stacks are running (ports 8000, 8765): set PORT or pass --url"
    monkeypatch.setenv("PORT", "8765")
    assert use_running_stack().dynamodb_endpoint == second.dynamodb_endpoint
    monkeypatch.setenv("PORT", "8000")
    assert use_running_stack().dynamodb_endpoint == first.dynamodb_endpoint


def test_one_running_stack_is_used_whatever_its_port(listening):
    stack = announce(8765, listening())
    assert find_stack(get_settings()).port == 8765
    assert use_running_stack().dynamodb_endpoint == stack.dynamodb_endpoint


def test_explicit_endpoint_and_the_environment_come_before_the_address_file(listening, monkeypatch):
    announce(8000, listening())
    external = listening()
    assert use_running_stack("http://127.0.0.1:9").dynamodb_endpoint == "http://127.0.0.1:9"
    assert use_running_stack("aws").dynamodb_endpoint == ""
    monkeypatch.setenv("GROUNDCHAT_DYNAMODB_ENDPOINT", external)
    reset_settings_cache()
    assert use_running_stack().dynamodb_endpoint == external


def test_a_deployed_stack_is_named_by_its_table_prefix_alone(listening, monkeypatch):
    """docs/guide/deploy.md: `GROUNDCHAT_TABLE_PREFIX=<TablePrefix> groundchat users grant …` means AWS."""
    announce(8000, listening())  # a local stack with the default prefix is not that stack
    monkeypatch.setenv("GROUNDCHAT_TABLE_PREFIX", "prod-stack-")
    reset_settings_cache()
    settings = use_running_stack()
    assert (settings.dynamodb_endpoint, settings.table_prefix) == ("", "prod-stack-")


def test_an_address_file_is_removed_only_by_the_stack_that_wrote_it(listening):
    settings = get_settings()
    announce(8000, listening())
    announce(8765, listening(), pid=os.getppid())
    remove_stack_file(settings, 8000)
    remove_stack_file(settings, 8765)
    assert not stack_file(settings, 8000).exists()
    assert json.loads(stack_file(settings, 8765).read_text())["pid"] == os.getppid()


def test_a_bad_port_is_one_line(monkeypatch, capsys):
    monkeypatch.setenv("PORT", "eighty")
    assert main(["users", "list"]) == 1
    assert one_line(capsys) == "PORT='eighty' is not a port number"
    with pytest.raises(StackError):
        find_stack(get_settings())


# ---- try / examples ask the stack's app ----------------------------------------------------------


def test_try_asks_the_stack_running_on_its_port(make_env, listening, monkeypatch, capsys):
    from groundchat_testkit.scripted import ScriptedModel, Step
    from tests.chat_function.test_disconnect import serve_in_thread

    env = make_env(ScriptedModel([Step(text="Full context is best.")]))
    server, thread, url = serve_in_thread(env.app)
    try:
        port = int(url.rsplit(":", 1)[1])
        announce(port, listening(), url=url)
        assert main(["try", "Which context level is best?", "--as", "alice"]) == 0
        out = capsys.readouterr().out
        assert "Full context is best." in out and "done: complete" in out
        monkeypatch.setenv("PORT", str(port + 1))
        assert main(["try", "again?", "--as", "alice"]) == 1
        assert one_line(capsys) == NO_STACK.format(port=port + 1, flag="--url")
    finally:
        server.should_exit = True
        thread.join(5)


@pytest.mark.parametrize("command", ["try", "examples"])
def test_try_and_examples_say_in_one_line_when_the_app_does_not_answer(command, capsys):
    argv = [command, "hello"] if command == "try" else [command]
    assert main([*argv, "--url", "http://127.0.0.1:9"]) == 1
    assert one_line(capsys).startswith("error: the app at http://127.0.0.1:9 does not answer")
