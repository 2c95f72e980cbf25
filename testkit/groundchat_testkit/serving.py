"""An ASGI app served by uvicorn on 127.0.0.1 in a daemon thread: for the stubs, the browser tests
and the screenshots, which need a real address while the caller goes on in the same process."""
from __future__ import annotations

import socket
import threading
import time
from typing import Any

STARTUP_SECONDS = 5.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_in_thread(app: Any, port: int = 0, name: str = "asgi-server") -> tuple[Any, threading.Thread, str]:
    """Starts serving `app` and returns once it accepts connections: (server, thread, base URL).
    Stop it with `server.should_exit = True` and `thread.join()`."""
    import uvicorn

    port = port or free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, name=name, daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_SECONDS
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"{name} did not start on 127.0.0.1:{port}")
        time.sleep(0.02)
    return server, thread, f"http://127.0.0.1:{port}"
