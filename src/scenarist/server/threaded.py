"""An app served by uvicorn in a background thread on a free loopback port.

For tests and benchmarks that need a real HTTP server (real sockets, real client libraries)
inside their own process: ``with ThreadedServer(create_app(url)) as server:`` then talk to
``server.url``. The thread is a daemon and the server is stopped on exit from the block.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

__all__ = ["ThreadedServer", "free_port"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class ThreadedServer:
    """``app`` on uvicorn at ``http://127.0.0.1:<free port>``; ``options`` are more
    ``uvicorn.Config`` settings. Starting waits until the server has started, or its thread
    has ended (a startup that failed: at once), or ``start_timeout_s`` has passed: a limit
    for a startup that hangs, long enough that a loaded machine's slow start never meets
    it (the app's startup opens and migrates its database)."""

    def __init__(self, app: Any, *, start_timeout_s: float = 600.0, **options: Any) -> None:
        import uvicorn

        self.app = app
        # The socket is bound here and handed to uvicorn: no other process (a parallel
        # test worker) can take the port between choosing it and listening on it.
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted connections inherit TCP_NODELAY from this socket. Without it an answer
        # written in two parts (headers, then body) waits for the client's delayed ACK:
        # about 40 ms a request on Linux, where uvicorn binding its own socket takes 2 ms.
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._socket.bind(("127.0.0.1", 0))
        self.port = int(self._socket.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        options.setdefault("log_level", "warning")
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, **options)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )
        self._start_timeout_s = start_timeout_s

    def __enter__(self) -> ThreadedServer:
        self.thread.start()
        deadline = time.monotonic() + self._start_timeout_s
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError(f"uvicorn did not start on {self.url}")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self._socket.close()
