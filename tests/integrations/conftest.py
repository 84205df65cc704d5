"""Fixtures for the LLM-call capture: a fake provider on 127.0.0.1 and an active run."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from scenarist.model.trace import Span
from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM
from scenarist.tracing import RunContext
from scenarist.tracing.http import capture_llm_calls

OPENAI_KEY = "sk-test-OPENAI-never-recorded"
ANTHROPIC_KEY = "sk-ant-test-ANTHROPIC-never-recorded"


@pytest.fixture
def script() -> ScriptedLLM:
    return ScriptedLLM(default=Reply("The answer is 42.", tokens_in=12, tokens_out=5))


@pytest.fixture
def server(script: ScriptedLLM) -> Iterator[FakeLLMServer]:
    with FakeLLMServer(script) as fake:
        yield fake


@contextmanager
def active_run(question: str = "q") -> Iterator[RunContext]:
    """What the run machinery does around an agent: a recorder plus the capture."""
    ctx = RunContext(input=question)
    with ctx.recorder, capture_llm_calls():
        yield ctx


def llm_spans(ctx: RunContext) -> list[Span]:
    return [s for s in ctx.spans if s.kind == "llm"]


def assert_no_secrets(ctx: RunContext) -> None:
    dumped = "".join(s.model_dump_json() for s in ctx.spans)
    assert OPENAI_KEY not in dumped
    assert ANTHROPIC_KEY not in dumped
    assert "authorization" not in dumped.lower()


class _GzipHandler(BaseHTTPRequestHandler):
    """A provider that compresses its JSON answers."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        usage = {"input_tokens": 3, "output_tokens": 2, "cache_read_input_tokens": 10}
        payload = {"model": "claude-3-5-haiku-latest", "content": [], "usage": usage}
        data = gzip.compress(json.dumps(payload).encode())
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-encoding", "gzip")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` on a free port of 127.0.0.1, its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def gzip_server() -> Iterator[str]:
    with serving(_GzipHandler) as url:
        yield url
