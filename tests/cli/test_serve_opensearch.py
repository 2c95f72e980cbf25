"""`GROUNDCHAT_SEARCH_BACKEND=opensearch make run`: the stack starts a real OpenSearch node, ingests
into it, serves its search from it, names it in its address file so `groundchat search` finds it,
and stops it with the stack; a node a killed stack left behind is ended at the next start; and where
Java or Maven is missing, the start says so in one line."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from groundchat_cli.stack_address import free_port
from tests.cli.test_serve_stack import GROUNDCHAT, cli, stacks, stop  # noqa: F401 (fixture)
from tests.conftest import REPO_ROOT
from tests.opensearch_node_support import built_or_skip

DOC = """# Keyboard traps

A keyboard trap keeps the focus inside a widget: the person using a keyboard cannot leave it.
Agents often build modal dialogs that trap focus without a way out.
"""


@pytest.fixture
def shell(tmp_path):
    """A developer's shell choosing the OpenSearch backend, with one small doc as the corpus."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "keyboard-traps.md").write_text(DOC)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PORT", "GROUNDCHAT_DYNAMODB_ENDPOINT", "GROUNDCHAT_OPENSEARCH_ENDPOINT")}
    env.update(GROUNDCHAT_CORPUS_DIR=str(tmp_path / "no-corpus"), GROUNDCHAT_DOCS_DIR=str(docs),
               GROUNDCHAT_MODEL="offline", GROUNDCHAT_SEARCH_BACKEND="opensearch")
    return env


def _stack_file(shell: dict, port: int) -> dict:
    return json.loads((Path(shell["GROUNDCHAT_HOME"]) / f"stack-{port}.json").read_text())


def _answers(endpoint: str) -> bool:
    try:
        return httpx.get(f"{endpoint}/_cluster/health", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def test_the_stack_runs_its_node_the_cli_searches_it_a_killed_stacks_node_is_ended_and_ctrl_c_stops_it(
        stacks, shell):
    built_or_skip()
    port = free_port()
    first = stacks(port)
    endpoint = _stack_file(shell, port)["opensearch_endpoint"]
    assert endpoint.startswith("http://127.0.0.1:")
    aliases = httpx.get(f"{endpoint}/_cat/aliases?format=json", timeout=5).json()
    assert [a["alias"] for a in aliases] == ["groundchat-corpus"]

    # Another shell that chose nothing finds the stack's node, as it finds its DynamoDB.
    found = cli(shell, "search", "keyboard trap in a modal dialog", "--json", "-k", "3", PORT=str(port),
                GROUNDCHAT_SEARCH_BACKEND="")
    assert found.returncode == 0, found.stderr
    result = json.loads(found.stdout)
    assert result["outcome"] == "hit"
    assert result["hits"][0]["source"] == "docs" and "Keyboard traps" in result["hits"][0]["title"]
    text = cli(shell, "search", "keyboard trap", "-k", "1", PORT=str(port), GROUNDCHAT_SEARCH_BACKEND="")
    assert f"-- opensearch {endpoint} " in text.stdout
    embedded = cli(shell, "search", "keyboard trap", "-k", "1", "--backend", "embedded", PORT=str(port))
    assert "-- embedded " in embedded.stdout

    first.kill()  # kill -9: the node, in a session of its own, outlives it
    first.wait(30)
    assert _answers(endpoint)

    second = stacks(port)
    restarted = _stack_file(shell, port)["opensearch_endpoint"]
    assert not _answers(endpoint)
    assert _answers(restarted)
    assert stop(second) == 0
    assert not _answers(restarted)
    assert not (Path(shell["GROUNDCHAT_HOME"]) / f"opensearch-{port}" / "node.pid").exists()
    log = second.stdout.read()
    assert "a previous stack left running" in log
    assert "nothing changed" in log  # the index the first start built was kept, not rebuilt


def test_without_java_the_start_says_what_to_install_in_one_line(shell, tmp_path):
    bare = tmp_path / "bin"
    bare.mkdir()
    # A PATH with the interpreter's own folder and the system's basics, but no java or mvn.
    for tool in ("sh", "env"):
        found = subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True, text=True).stdout.strip()
        if found:
            (bare / tool).symlink_to(found)
    env = {**shell, "PATH": f"{Path(GROUNDCHAT).parent}:{bare}", "PORT": str(free_port()),
           "GROUNDCHAT_TOOLS_CACHE": str(tmp_path / "empty-cache")}
    started = time.monotonic()
    done = subprocess.run([GROUNDCHAT, "serve"], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(errors) == 1, done.stderr
    assert "needs java and mvn" in errors[0] and "apt-get install" in errors[0]
    assert time.monotonic() - started < 60
    assert not list(Path(shell["GROUNDCHAT_HOME"]).glob("stack-*.json"))


def test_make_test_prepares_the_node_and_under_ci_a_machine_without_it_fails(tmp_path):
    env = {**os.environ, "PATH": f"{tmp_path}", "GROUNDCHAT_TOOLS_CACHE": str(tmp_path / "empty-cache")}
    python = str(Path(GROUNDCHAT).parent / "python")
    local = subprocess.run([python, "-m", "groundchat_cli.opensearch_node", "prepare"], env={**env, "CI": ""},
                           capture_output=True, text=True, timeout=60)
    assert local.returncode == 0
    assert local.stderr.strip().endswith("the OpenSearch tests will skip")
    ci = subprocess.run([python, "-m", "groundchat_cli.opensearch_node", "prepare"], env={**env, "CI": "true"},
                        capture_output=True, text=True, timeout=60)
    assert ci.returncode == 1
    assert "CI must run the OpenSearch tests" in ci.stderr
