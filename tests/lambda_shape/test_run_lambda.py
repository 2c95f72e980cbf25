"""`make run-lambda` as the README shows it: the stack started on a port of its own (the README's
8070 read as that port), then the README's `groundchat try --url …` line from another shell
answers; a SIGTERM ends the stack and its functions. Its expected failures are one line each.

The README run costs about 70 s of one worker (most of it `make run`'s own preparation: the sample
runs loaded and the question bank embedded into a fresh state), so it runs where CI=true, or with
TEST_RUN_LAMBDA=1, and skips elsewhere saying so."""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from groundchat_cli.local_lambda import HOSTS, free_port
from tests.cli.test_serve_stack import shell  # noqa: F401  (fixture)
from tests.conftest import REPO_ROOT
from tests.lambda_shape.local_stack import require_local_lambda

README_PORT = "8070"
START_SECONDS = 240


def descendants(root: int) -> dict[int, str]:
    """Every live process under `root` (by parent, across sessions and groups): pid -> command line."""
    from pathlib import Path

    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = {}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                try:
                    found[pid] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                except OSError:
                    continue
                frontier.append(pid)
    return found


def _alive(pid: int, cmd: str) -> bool:
    from pathlib import Path

    try:  # the same process (a pid reused by another is not ours), and not a zombie
        same = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace") == cmd
        return same and Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def readme_try_lines() -> list[str]:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The deployed shape, locally: `make run-lambda`", 1)[1].split("\n## ", 1)[0]
    return [line for line in re.findall(r"`([^`]+)`", section.replace("\n", " "))
            if line.startswith(".venv/bin/groundchat try ")]


def run_lambda(env: dict[str, str], port: str) -> subprocess.Popen:
    # A group of its own, as a terminal's job is: a signal to the group reaches it and nothing else.
    return subprocess.Popen([sys.executable, "-m", "groundchat_cli.lambda_stack"], cwd=REPO_ROOT,
                            env={**env, "PORT": port}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


@pytest.fixture(params=HOSTS)
def stack(request, shell):  # noqa: F811
    if not any(os.environ.get(name, "").lower() in ("1", "true", "yes") for name in ("CI", "TEST_RUN_LAMBDA")):
        pytest.skip("the README's make run-lambda lines take some 70 s: CI runs them, or set TEST_RUN_LAMBDA=1")
    if request.param == "cargo-lambda" and require_local_lambda().cargo_lambda is None:
        pytest.skip("cargo-lambda's emulator is not built (make lambda-tools)")
    require_local_lambda()
    port = free_port()
    proc = run_lambda({**shell, "LAMBDA_HOST": request.param}, str(port))
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("groundchat (packaged"):
                ready.set()

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + START_SECONDS
    while not ready.wait(0.5):
        assert proc.poll() is None and time.monotonic() < deadline, "".join(lines)
    yield {"port": port, "proc": proc, "lines": lines, "env": shell}
    if proc.poll() is None:
        proc.kill()
        proc.wait(30)


def test_the_readme_try_line_answers_through_the_packaged_functions(stack):
    lines = readme_try_lines()
    assert lines and all(f"127.0.0.1:{README_PORT}" in line for line in lines)
    for line in lines:
        line = line.replace(f"127.0.0.1:{README_PORT}", f"127.0.0.1:{stack['port']}")
        done = subprocess.run(["bash", "-c", line], cwd=REPO_ROOT, env=stack["env"], capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0 and "done: complete" in done.stdout, (line, done.stdout, done.stderr, "".join(stack["lines"]))
        assert "Traceback" not in done.stderr
    # SIGTERM to its group (a supervisor's stop, a closed terminal's job) takes the Ctrl-C path: the
    # functions stopped, the address file removed, exit 0.
    proc = stack["proc"]
    started = descendants(proc.pid)
    # The emulator, the adapter and the app's server of each function, whatever group each is in.
    assert any("lambda-adapter" in cmd for cmd in started.values()) and any("uvicorn" in cmd for cmd in started.values())
    os.killpg(proc.pid, signal.SIGTERM)
    assert proc.wait(60) == 0, "".join(stack["lines"])
    left = {pid: cmd for pid, cmd in started.items() if _alive(pid, cmd)}
    assert left == {}, "run-lambda left processes running"
    assert not any(p.name == f"stack-{stack['port']}.json" for p in (REPO_ROOT / ".groundchat").glob("stack-*.json"))


def test_a_bad_port_is_one_line(shell):  # noqa: F811
    done = run_lambda(shell, "not-a-port")
    out, _ = done.communicate(timeout=60)
    assert done.returncode == 1 and out.strip().splitlines() == ["run-lambda: PORT='not-a-port' is not a port number"]


def test_a_taken_port_or_missing_tools_is_one_line(shell):  # noqa: F811
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = run_lambda(shell, str(taken.getsockname()[1]))
        out, _ = done.communicate(timeout=60)
    [line] = out.strip().splitlines()
    assert done.returncode == 1 and line.startswith("run-lambda: ") and "Traceback" not in out
    assert "is in use" in line or "make lambda-tools" in line or "root" in line
