"""Serving an ASGI app with real uvicorn on loopback, in a thread, for a test."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn


@dataclass
class Running:
    """A uvicorn server running in a thread."""

    url: str
    server: uvicorn.Server

    def wait_idle(self, timeout: float = 30) -> None:
        """Return once no request is being handled: a client that hung up does not stop the app
        from finishing its request, and what that request stores lands after the client is gone."""
        state = self.server.server_state
        deadline = time.monotonic() + timeout
        while state.tasks or state.connections:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(state.tasks)} requests still running after {timeout} s")
            time.sleep(0.005)


@contextmanager
def running(app: Any) -> Iterator[Running]:
    """Starts the server, then stops it on exit, lifespan included."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, access_log=False,
                            lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield Running(f"http://127.0.0.1:{port}", server)
    finally:
        server.should_exit = True
        thread.join(30)


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """Yields the base URL (``http://127.0.0.1:PORT``)."""
    with running(app) as run:
        yield run.url
