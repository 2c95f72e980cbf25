"""How soon the reconnect says `interrupted` after the answering process is killed (`kill -9`).

A child process serves the chat (a model that never finishes its first step) against moto's
DynamoDB server, as the local stack runs it; a question is asked of it, and once its `start` frame
arrived the child is killed with SIGKILL. This process then asks `GET …/answer` of its own app,
reading the same store, every 0.1 s, and prints how long after the kill the answer read
`interrupted`, over ROUNDS rounds (min, median, max). The kill lands at a random point of the
answer's 5 s beat, so the figures spread between the lease (15 s) minus one beat and the lease.
Prints figures, asserts nothing.

    .venv/bin/python bench/reconnect_after_kill.py [rounds]
"""
from __future__ import annotations

import asyncio
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROUNDS = 5
REPO = Path(__file__).resolve().parent.parent


class NeverEnds:
    """A model whose step never ends: the answer is mid-step when its process dies."""

    model_id = price_id = "scripted"

    async def __call__(self, request):
        while True:
            await asyncio.sleep(3600)
        yield  # an async generator, as a model is


def serve(port: int) -> None:
    """The child: the chat app with the model above, on `port`, until it is killed."""
    import uvicorn

    from chat_function.app import create_app
    from groundchat.config import get_settings
    from groundchat.services import Services
    from groundchat.store.dynamo import Dynamo

    settings = get_settings()
    app = create_app(Services(settings=settings, dynamo=Dynamo(settings), model_override=NeverEnds()))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def main(rounds: int) -> None:
    import httpx

    from groundchat.auth.callers import CHAT_USE
    from groundchat.auth.tokens import issue_dev_token
    from groundchat.config import get_settings, reset_settings_cache
    from groundchat.services import Services
    from groundchat.store.dynamo import Dynamo, create_tables
    from groundchat_cli.moto_store import LocalDynamo
    from groundchat_cli.stack_address import free_port
    from groundchat_cli.serving import serve_in_thread, wait_until_answering

    home = Path(tempfile.mkdtemp(prefix="groundchat-bench-"))
    prices = home / "prices.json"
    prices.write_text('{"scripted": {"input_per_mtok": "0", "output_per_mtok": "0", "trust_provider_cost": false}}')
    local = LocalDynamo().start()
    os.environ.update({"GROUNDCHAT_DYNAMODB_ENDPOINT": local.endpoint, "GROUNDCHAT_HOME": str(home),
                       "GROUNDCHAT_PRICES_FILE": str(prices), "GROUNDCHAT_DEV_SECRET": "bench-secret-for-hs256-signing-0123456789",
                       "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "eu-west-1"})
    reset_settings_cache()
    settings = get_settings()
    dynamo = Dynamo(settings)
    create_tables(dynamo)
    services = Services(settings=settings, dynamo=dynamo)
    services.users.table.put_item(Item={"user_id": "ann", "grants": {CHAT_USE}})
    token = {"authorization": f"Bearer {issue_dev_token(settings, 'ann')}"}
    from chat_function.app import create_app

    server, thread, reader = serve_in_thread(create_app(services), name="reader")
    seconds = []
    try:
        for _ in range(rounds):
            port = free_port()
            child = subprocess.Popen([sys.executable, __file__, "--serve", str(port)], cwd=REPO, env=os.environ.copy(),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            url = f"http://127.0.0.1:{port}"
            wait_until_answering(url, child, "the answering process")
            started = threading.Event()
            conversation: dict[str, str] = {}

            def ask() -> None:
                try:
                    with httpx.stream("POST", f"{url}/api/chat", json={"message": "Which context is best?"}, timeout=None,
                                      headers={**token, "accept": "text/event-stream"}) as r:
                        for line in r.iter_lines():
                            if line.startswith("data: ") and "conversation_id" in line and not conversation:
                                import json

                                conversation.update(json.loads(line[6:]))
                                started.set()
                except httpx.HTTPError:
                    pass  # the process is killed under it

            threading.Thread(target=ask, daemon=True).start()
            if not started.wait(30):
                raise RuntimeError("no start frame")
            time.sleep(random.uniform(0, 5))  # anywhere in the beat
            os.kill(child.pid, signal.SIGKILL)
            killed = time.monotonic()
            child.wait()
            answer = f"{reader}/api/conversations/{conversation['conversation_id']}/answer"
            while httpx.get(answer, headers=token).json()["state"] != "interrupted":
                time.sleep(0.1)
            seconds.append(time.monotonic() - killed)
            print(f"round {len(seconds)}: interrupted {seconds[-1]:.1f} s after the kill", flush=True)
    finally:
        server.should_exit = True
        thread.join()
        local.stop()
    print(f"interrupted after kill -9: min {min(seconds):.1f} s, median {statistics.median(seconds):.1f} s, "
          f"max {max(seconds):.1f} s over {len(seconds)} rounds")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve(int(sys.argv[2]))
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else ROUNDS)
