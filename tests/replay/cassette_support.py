"""Helpers for the cassette tests: a port that counts connections, secrets, an echo script."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

from scenarist.testing import FakeRequest, Reply, ScriptedLLM

OPENAI_KEY = "sk-test-OPENAI-cassette-secret"
ANTHROPIC_KEY = "sk-ant-test-ANTHROPIC-cassette-secret"
OPENAI_MODEL = "gpt-4o-mini"
ANTHROPIC_MODEL = "claude-3-5-haiku-latest"


def echo_script() -> ScriptedLLM:
    """Answers ``echo: <last message>`` with a call number, so each answer is distinct."""
    calls = iter(range(1, 10_000))

    def answer(request: FakeRequest) -> Reply:
        return Reply(f"echo {next(calls)}: {request.text}", tokens_in=11, tokens_out=4)

    return ScriptedLLM(answer)


class ConnectionCounter:
    """A port on 127.0.0.1 that accepts connections, counts them, and answers nothing.

    Pointing a replaying client here proves replay never reached the network: any
    connection at all shows up in :attr:`connections`.
    """

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self._sock.settimeout(0.02)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self.connections = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    @property
    def openai_url(self) -> str:
        return self.url + "/v1"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            connection.close()

    def __enter__(self) -> ConnectionCounter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sock.close()


def assert_no_secrets(path: Path) -> None:
    text = path.read_text()
    for secret in (OPENAI_KEY, ANTHROPIC_KEY, "Bearer", "authorization", "x-api-key"):
        assert secret.lower() not in text.lower(), secret
