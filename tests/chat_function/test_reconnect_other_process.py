"""A reconnect served by another process than the one answering, as on Lambda (another instance)
or beside `make run`: both read one DynamoDB (moto's server, as the local stack runs it), and the
second process knows of the answer only what the store says."""
from __future__ import annotations

import os
import subprocess
import sys
import threading

import httpx
import pytest

from groundchat.auth.callers import CHAT_USE, RUNS_READ
from groundchat.auth.tokens import issue_dev_token
from groundchat_testkit.scripted import Step
from groundchat_cli.serving import serve_in_thread, wait_until_answering
from tests.chat_function.test_reconnect_and_stop import GatedModel, StreamReader, gated_tool

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def shared_store(monkeypatch):
    from groundchat.config import get_settings, reset_settings_cache
    from groundchat.store.dynamo import Dynamo, create_tables
    from groundchat_cli.moto_store import LocalDynamo

    local = LocalDynamo().start()
    monkeypatch.setenv("GROUNDCHAT_DYNAMODB_ENDPOINT", local.endpoint)
    reset_settings_cache()
    dynamo = Dynamo(get_settings())
    create_tables(dynamo)
    yield dynamo
    local.stop()


def second_process(port: int) -> subprocess.Popen:
    """The local stack's app (offline answerer, no model of the test's) in a process of its own."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory", "groundchat_cli.local_app:combined_app",
                             "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                            cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def test_a_reload_served_by_another_process_shows_the_answer_without_a_second_model_call(shared_store):
    from chat_function.app import create_app
    from groundchat.config import get_settings
    from groundchat.services import Services
    from groundchat_cli.stack_address import free_port

    settings = get_settings()
    gate = threading.Event()
    model = GatedModel([Step(tool_calls=[("compare_contexts", {})]), Step(text="Full context is best: 3.5 violations.")])
    services = Services(settings=settings, dynamo=shared_store, model_override=model, tools_override=[gated_tool(gate)])
    services.users.table.put_item(Item={"user_id": "alice", "grants": {CHAT_USE, RUNS_READ}})
    server, thread, answering = serve_in_thread(create_app(services))
    port = free_port()
    child = second_process(port)
    other = f"http://127.0.0.1:{port}"
    try:
        wait_until_answering(other, child, "the second process")
        token = {"authorization": f"Bearer {issue_dev_token(settings, 'alice')}"}
        model.release(0)
        stream = StreamReader(answering, token, {"message": "Which context level is best?"})
        conversation_id = stream.start_frame()["conversation_id"]
        with httpx.Client(base_url=other, headers=token, timeout=30) as reload:
            running = reload.get(f"/api/conversations/{conversation_id}/answer").json()
            assert running["state"] == "running" and running["question"] == "Which context level is best?"
            gate.set()
            model.release(1)
            ended = reload.get(f"/api/conversations/{conversation_id}/answer", params={"wait": 15}).json()
            assert ended["state"] == "answered"
            messages = reload.get(f"/api/conversations/{conversation_id}").json()["messages"]
        assert messages[-1]["content"] == "Full context is best: 3.5 violations."
        assert stream.done()["reason"] == "complete"
        assert model.calls == 2
    finally:
        child.terminate()
        child.wait(10)
        server.should_exit = True
        thread.join(5)
