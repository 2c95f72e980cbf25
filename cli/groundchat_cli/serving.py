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


def wait_until_answering(url: str, child: Any, what: str, seconds: float = 60.0) -> None:
    """Returns once `url`/api/chat/status answers 200 from the process `child` (a Popen); fails
    with what it printed (its piped stderr, else stdout) if it exits first, or after `seconds`."""
    import httpx

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if child.poll() is not None:
            printed = child.stderr or child.stdout
            raise AssertionError(f"{what} exited with {child.returncode}:\n{printed.read() if printed else ''}")
        try:
            if httpx.get(f"{url}/api/chat/status", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{what} did not answer on {url}")


class Servers:
    """Apps served by `serve_in_thread` for one test, all stopped at its end (`stop_all`)."""

    def __init__(self) -> None:
        self.started: list[tuple[Any, threading.Thread]] = []

    def serve(self, app: Any) -> str:
        server, thread, url = serve_in_thread(app)
        self.started.append((server, thread))
        return url

    def stop_all(self) -> None:
        for server, thread in self.started:
            server.should_exit = True
            thread.join(5)
