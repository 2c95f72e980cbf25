"""A client that leaves after the first frame does not cancel the exchange: it commits."""
import asyncio
import time

import httpx

from groundchat_testkit.scripted import ScriptedModel, Step
from groundchat_cli.serving import serve_in_thread  # noqa: F401  (other page tests import it from here)


class SlowScriptedModel(ScriptedModel):
    """Takes a moment per step, so the client is gone long before the answer ends."""

    async def __call__(self, request):
        await asyncio.sleep(0.3)
        async for event in super().__call__(request):
            yield event


def test_disconnect_after_first_frame_then_the_whole_exchange_is_committed(make_env):
    model = SlowScriptedModel([Step(tool_calls=[("compare_contexts", {"context": "full"})]), Step(text="Full context is best.")])
    env = make_env(model)
    server, thread, url = serve_in_thread(env.app)
    try:
        conversation_id = None
        with httpx.Client(headers=env.token("alice"), timeout=10) as client:
            with client.stream("POST", f"{url}/api/chat", json={"stream": True, "message": "Which context level is best?"}) as resp:
                assert resp.status_code == 200
                for line in resp.iter_lines():
                    if line.startswith("data: "):
                        conversation_id = line.split('"conversation_id": "')[1].split('"')[0]
                        break  # leave after the first frame
        assert model.calls <= 1  # the answer was still running when the client left
        stored = []
        for _ in range(100):
            stored = asyncio.run(env.services.conversations.read_history(conversation_id))
            if stored:
                break
            time.sleep(0.05)
        assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"]
        assert stored[-1].content == "Full context is best."
        assert model.calls == 2
    finally:
        server.should_exit = True
        thread.join(5)
