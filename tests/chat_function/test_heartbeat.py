"""A stream that survives a proxy which closes idle connections: while a long tool call runs, the
heartbeat (an SSE comment) keeps bytes flowing. Served by uvicorn through an idle-timeout proxy of
the test's own, at a smaller scale than the deployed figures (a 3 s idle timeout, a 6 s tool call;
the default heartbeat is 5 s, for proxies of 10 s and more), with and without the heartbeat."""
from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest
from pydantic import BaseModel

from groundchat.auth.callers import RUNS_READ
from groundchat.tools.base import Tool
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.conftest import parse_sse

# Pings twelve times as often as the proxy's idle limit: a busy machine (the whole suite on two
# cores) can stall the server's loop for a second, never for three.
IDLE_TIMEOUT = 3.0
TOOL_SECONDS = 6.0


class Nothing(BaseModel):
    pass


def slow_tool(seconds: float) -> Tool:
    async def slow_lookup(ctx, args):
        await asyncio.sleep(seconds)
        return {"rows": [{"model": "m1", "mean_violations": 3.5}]}

    return Tool(name="slow_lookup", grounding="figures", drawer="plain", offline_template="generic", description="slow", input_model=Nothing, permission=RUNS_READ, handler=slow_lookup)


async def idle_timeout_proxy(upstream_port: int, idle_timeout: float = IDLE_TIMEOUT) -> tuple[asyncio.AbstractServer, int]:
    """Forwards to the app; closes a connection whose server side has been silent for IDLE_TIMEOUT,
    as API Gateway, load balancers and corporate proxies do."""
    async def handle(client_reader, client_writer):
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", upstream_port)

        async def to_server():
            while data := await client_reader.read(65536):
                up_writer.write(data)
                await up_writer.drain()

        forward = asyncio.create_task(to_server())
        try:
            while True:
                data = await asyncio.wait_for(up_reader.read(65536), idle_timeout)
                if not data:
                    break
                client_writer.write(data)
                await client_writer.drain()
        except asyncio.TimeoutError:
            pass  # idle too long: the proxy hangs up
        finally:
            forward.cancel()
            client_writer.close()
            up_writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


# The small scale, and the deployed figures themselves: the default 5 s heartbeat through a proxy
# that hangs up after 10 s of silence, during a 30 s tool call.
@pytest.mark.parametrize("heartbeat, idle, tool_seconds, survives", [
    (0.25, IDLE_TIMEOUT, TOOL_SECONDS, True), (0, IDLE_TIMEOUT, TOOL_SECONDS, False),
    (5.0, 10.0, 30.0, True), (0, 10.0, 30.0, False),
], ids=["heartbeat", "silent", "deployed-heartbeat", "deployed-silent"])
async def test_a_long_tool_call_survives_an_idle_timeout_proxy_only_with_the_heartbeat(make_env, settings, monkeypatch,
                                                                                      heartbeat, idle, tool_seconds, survives):
    import uvicorn

    from groundchat_cli.localstack import local_server_config
    from groundchat_cli.stack_address import free_port

    monkeypatch.setattr(settings, "sse_heartbeat_seconds", heartbeat)
    env = make_env(ScriptedModel([Step(tool_calls=[("slow_lookup", {})]), Step(text="Model m1 had 3.5 violations.")]),
                   tools=[slow_tool(tool_seconds)])
    port = free_port()
    server = uvicorn.Server(local_server_config(env.app, port))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    proxy = None
    try:
        for _ in range(200):
            if server.started:
                break
            await asyncio.sleep(0.05)
        proxy, proxy_port = await idle_timeout_proxy(port, idle)
        started = time.monotonic()
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{proxy_port}", timeout=tool_seconds + 30) as client:
            try:
                answer = await client.post("/api/chat", json={"stream": True, "message": "Which model had fewest violations?"},
                                           headers=env.token("alice"))
                body = answer.text
            except httpx.HTTPError as exc:  # the proxy cut the stream mid-body
                body = f"cut: {type(exc).__name__}"
        frames = parse_sse(body) if not body.startswith("cut:") else []
    finally:
        if proxy is not None:
            proxy.close()
        server.should_exit = True
        thread.join(timeout=10)
    done = [data for event, data in frames if event == "done"]
    if survives:
        assert done and done[0]["reason"] == "complete", body[-300:]
        assert ": ping" in body and time.monotonic() - started >= tool_seconds
    else:
        assert not done  # without the heartbeat the proxy hangs up during the tool call
    # Either way the answer ran to its end and committed: nobody listening does not stop it.
    for _ in range(int(tool_seconds * 10) + 100):
        if env.model.calls == 2:
            break
        await asyncio.sleep(0.1)
    assert env.model.calls == 2
