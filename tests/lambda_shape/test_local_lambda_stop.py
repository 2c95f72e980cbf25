"""Stopping a local Lambda ends everything it started: the emulator starts the Web Adapter and the
app's server in process groups of their own, and `make run-lambda`'s Ctrl-C or SIGTERM (and every
test's teardown) went through a stop that signalled the emulator's group alone."""
from __future__ import annotations

import httpx
import pytest

from groundchat_cli.apigw_rest import RestApiStandIn
from groundchat_cli.local_lambda import HOSTS, load_template, session_members
from tests.lambda_shape.local_stack import build_package, chat_env, local_dynamo, require_local_lambda, start_function


def _names(pids: list[int]) -> list[str]:
    names = []
    for pid in pids:
        try:
            names.append(open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            pass
    return names


@pytest.mark.parametrize("host", HOSTS)
def test_stop_ends_the_emulator_the_adapter_and_the_apps_server(tmp_path, host):
    tools = require_local_lambda()
    template = load_template()
    build = build_package(tmp_path, tools)
    with local_dynamo() as db:
        chat = start_function(template, "ChatFunction", build, tmp_path / "chat", chat_env(db.endpoint, tmp_path / "home"), host)
        api = RestApiStandIn(template, {"ChatFunction": chat}).start()
        try:
            # The emulator starts the runtime (the adapter, then uvicorn) on the first invocation.
            assert httpx.get(api.stage_url + "/healthz", timeout=120).status_code == 200, chat.log()
            running = _names(session_members(chat.process.pid))
            assert any("lambda-adapter" in n for n in running) and any("uvicorn" in n for n in running), running
            if host == "cargo-lambda":
                assert any("cargo-lambda" in n for n in _names(session_members(chat.emulator.pid)))
        finally:
            api.stop()
            chat.stop()
        assert _names(session_members(chat.process.pid)) == []
        if chat.emulator is not None:  # cargo-lambda's, in a session of its own
            assert _names(session_members(chat.emulator.pid)) == []
