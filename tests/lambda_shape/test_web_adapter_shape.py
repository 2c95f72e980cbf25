"""The chat function as the Lambda Web Adapter runs it: the built artifact's run.sh starts uvicorn,
the adapter waits for the readiness path, then sends each invocation as HTTP to 127.0.0.1 and passes
the response body on chunk by chunk. Here a plain HTTP client plays the adapter, moto's server plays
DynamoDB, and the offline answerer is the model (no key, no cost).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from groundchat.auth.callers import CHAT_USE, DOCS_READ, RUNS_READ, TRACES_READ, VIEWS_SHOW
from groundchat_cli.stack_address import free_port
from tests.infra.conftest import REPO, function_env, load_template

sys.path.insert(0, str(REPO / "infra"))
import package  # noqa: E402


@pytest.fixture
def dynamodb_server(settings):
    from moto.server import ThreadedMotoServer

    from groundchat.store.dynamo import Dynamo, create_tables

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    dynamo = Dynamo(settings.model_copy(update={"dynamodb_endpoint": endpoint}))
    create_tables(dynamo)
    dynamo.table(__import__("groundchat.store.tables", fromlist=["USERS"]).USERS).put_item(
        Item={"user_id": "alice", "grants": {CHAT_USE, RUNS_READ, DOCS_READ, VIEWS_SHOW, TRACES_READ}})
    yield endpoint
    server.stop()


@pytest.fixture
def adapter_target(dynamodb_server, settings, tmp_path):
    """run.sh started from the built artifact, as the adapter starts it; yields its base URL."""
    functions = package.build_functions(tmp_path / "build")
    template = load_template()
    lambda_env = function_env(template, "ChatFunction")
    port = free_port()
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PORT": str(port),
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "eu-west-1",
        "GROUNDCHAT_DYNAMODB_ENDPOINT": dynamodb_server,
        "GROUNDCHAT_HOME": str(settings.home),
        "GROUNDCHAT_DEV_SECRET": settings.dev_secret,
        "GROUNDCHAT_MODEL": "offline",
        "GROUNDCHAT_DOCS_DIR": str(REPO / "docs"),
    }
    process = subprocess.Popen(["./run.sh"], cwd=functions["chat"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    readiness = lambda_env["AWS_LWA_READINESS_CHECK_PATH"]
    deadline = time.monotonic() + 60
    while True:  # the adapter's readiness check: poll until the app answers
        assert process.poll() is None, process.stdout.read().decode()
        try:
            if httpx.get(base + readiness, timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "uvicorn did not become ready"
        time.sleep(0.1)
    yield base
    process.terminate()
    process.wait(10)


@pytest.fixture
def token(settings):
    from groundchat.auth.tokens import issue_dev_token

    return {"authorization": f"Bearer {issue_dev_token(settings, 'alice')}"}


def _frames(lines) -> list[tuple[str, dict]]:
    frames, event = [], None
    for line in lines:
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            frames.append((event, json.loads(line[6:])))
    return frames


def test_answer_streams_as_chunked_sse(adapter_target, token):
    with httpx.Client(timeout=60) as client:
        with client.stream("POST", f"{adapter_target}/api/chat", headers=token,
                           json={"stream": True, "message": "What does the axe rule color-contrast check?"}) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            # Streamed, not buffered: no length known up front, the body comes in chunks.
            assert "content-length" not in response.headers
            assert response.headers.get("transfer-encoding") == "chunked"
            frames = _frames(response.iter_lines())
    types = [t for t, _ in frames]
    assert types[0] == "start" and types[-1] == "done"
    assert types.count("done") == 1
    assert frames[-1][1]["reason"] == "complete"
    assert "tool-call" in types and "text" in types


def test_client_that_leaves_mid_stream_still_gets_its_exchange_committed(adapter_target, token):
    with httpx.Client(timeout=60) as client:
        with client.stream("POST", f"{adapter_target}/api/chat", headers=token,
                           json={"stream": True, "message": "Which rules are broken most?"}) as response:
            lines = response.iter_lines()
            first = _frames([next(lines), next(lines)])
        # Leaving the `with` closed the connection after the first frame.
        assert first[0][0] == "start"
        conversation_id = first[0][1]["conversation_id"]
        stored = None
        for _ in range(200):
            r = client.get(f"{adapter_target}/api/conversations/{conversation_id}", headers=token)
            if r.status_code == 200:
                stored = r.json()
                break
            time.sleep(0.05)
    assert stored is not None, "the exchange was not committed after the client left"
    roles = [m["role"] for m in stored["messages"]]
    assert roles[0] == "user" and roles[-1] == "assistant"
    assert stored["messages"][0]["content"] == "Which rules are broken most?"


def test_refusals_are_plain_buffered_json(adapter_target):
    r = httpx.post(f"{adapter_target}/api/chat", json={"stream": True, "message": "hi"}, timeout=10)
    assert r.status_code == 401
    assert r.headers["content-type"] == "application/json"
    assert r.json()["error"]["code"] == "unauthenticated"
