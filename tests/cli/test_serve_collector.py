"""`GROUNDCHAT_LOCAL_COLLECTOR=jaeger make run`: the stack starts Jaeger beside it and exports to it;
one question asked over HTTP with a `traceparent` is read back from Jaeger's own query API as a
span tree under the caller's trace, with its model steps, tool calls, tokens and cost."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from groundchat_cli.stack_address import StackError, free_port
from groundchat_cli import collector as jaeger
from groundchat_cli.collector import spans_of
from groundchat_cli.serving import wait_until_answering
from tests.conftest import REPO_ROOT

GROUNDCHAT = str(Path(sys.executable).parent / "groundchat")
CALLER_TRACE = "5bf92f3577b34da6a3ce929d0e0e4799"
CALLER_SPAN = "10f067aa0ba902b8"


def test_an_unknown_local_collector_is_refused_in_one_line():
    from groundchat_cli.local_collector import start_local_collector

    with pytest.raises(StackError, match="GROUNDCHAT_LOCAL_COLLECTOR='zipkin'.*jaeger"):
        start_local_collector("zipkin")


def test_one_question_through_make_run_reads_back_from_jaeger(tmp_path):
    if not jaeger.jaeger_binary().exists():
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("Jaeger is not built: `make test` builds it (python -m groundchat_cli.collector build)")
        pytest.skip("Jaeger is not built: python -m groundchat_cli.collector build")
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PORT", "GROUNDCHAT_DYNAMODB_ENDPOINT") and not k.startswith("OTEL_")}
    env.update(PORT=str(port), GROUNDCHAT_CORPUS_DIR=str(tmp_path / "no-corpus"), GROUNDCHAT_DOCS_DIR=str(tmp_path / "no-docs"),
               GROUNDCHAT_MODEL="offline", GROUNDCHAT_LOCAL_COLLECTOR="jaeger", OTEL_BSP_SCHEDULE_DELAY="200")
    proc = subprocess.Popen([GROUNDCHAT, "serve"], cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        query_url = _collector_address(proc)
        url = f"http://127.0.0.1:{port}"
        wait_until_answering(url, proc, "serve", seconds=240)  # a stack and a collector starting on a busy machine
        from groundchat.auth.tokens import issue_dev_token
        from groundchat.config import get_settings

        token = issue_dev_token(get_settings(), "dev", days=1)
        response = httpx.post(f"{url}/api/chat", json={"message": "Which context level is best, and what does it cost?"},
                              headers={"authorization": f"Bearer {token}", "accept": "text/event-stream",
                                       "traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"}, timeout=120)
        assert response.status_code == 200 and "event: done" in response.text, response.text[:500]
        spans = _read_back(query_url, CALLER_TRACE)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    [answer] = [s for s in spans if s["name"] == "invoke_agent groundchat"]
    assert answer["parent"] == CALLER_SPAN and answer["trace"] == CALLER_TRACE
    assert answer["attrs"]["groundchat.answer.outcome"] == "complete"
    assert answer["attrs"]["groundchat.answer.cost_usd"] == "0"  # the offline answerer costs nothing
    steps = [s for s in spans if s["attrs"].get("gen_ai.operation.name") == "chat"]
    tools = [s for s in spans if s["attrs"].get("gen_ai.operation.name") == "execute_tool"]
    assert len(steps) >= 2 and all(s["parent"] == answer["id"] for s in steps)
    assert all("gen_ai.usage.input_tokens" in s["attrs"] and "gen_ai.usage.output_tokens" in s["attrs"] for s in steps)
    assert "compare_contexts" in {s["attrs"]["gen_ai.tool.name"] for s in tools}
    assert all(s["parent"] == answer["id"] for s in tools)


def _collector_address(proc: subprocess.Popen) -> str:
    """The query API's address from the line the stack prints once Jaeger answers."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            raise AssertionError(f"serve exited with {proc.returncode}")
        found = re.search(r"collector: Jaeger at (http://127\.0\.0\.1:\d+)/search", line)
        if found:
            # Keep draining the stack's output so it never blocks on a full pipe.
            import threading

            threading.Thread(target=proc.stdout.read, daemon=True).start()
            return found.group(1)
    raise AssertionError("the stack never said where Jaeger is")


def _read_back(query_url: str, trace_id: str) -> list[dict]:
    deadline = time.monotonic() + 30
    spans: list[dict] = []
    while time.monotonic() < deadline:
        found = httpx.get(f"{query_url}/api/v3/traces/{trace_id}", timeout=10)
        if found.status_code == 200:
            spans = spans_of(found.json())
            if any(s["name"].startswith("invoke_agent") for s in spans):
                return spans
        time.sleep(0.3)
    return spans
