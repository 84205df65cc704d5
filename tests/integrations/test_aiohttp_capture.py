"""LLM calls made with ``aiohttp`` in a traced run: ``llm`` spans like httpx calls, the
response the caller reads unchanged (streams as they arrive), the hook only while a
capture is active, and never imported by scenarist itself."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import aiohttp
import pytest
from tests.helpers.limits import HANG_S
from tests.integrations.conftest import (
    ANTHROPIC_KEY,
    OPENAI_KEY,
    active_run,
    assert_no_secrets,
    llm_spans,
    serving,
)
from tests.replay.cassette_support import ConnectionCounter, echo_script

from scenarist.replay import cassette
from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM
from scenarist.tracing.http import capture_llm_calls

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
BODY = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
STREAM = {**BODY, "stream": True, "stream_options": {"include_usage": True}}
OPENAI_HEADERS = {"authorization": f"Bearer {OPENAI_KEY}"}
ANTHROPIC = {"model": "claude-3-5-haiku-latest", "max_tokens": 64, "messages": BODY["messages"]}
ANTHROPIC_HEADERS = {"x-api-key": ANTHROPIC_KEY, "anthropic-version": "2023-06-01"}


def _sse_text(raw: bytes) -> str:
    """The text of an OpenAI chat stream, from its raw bytes."""
    events = [json.loads(line[6:]) for line in raw.splitlines() if line.startswith(b"data: {")]
    return "".join(e["choices"][0]["delta"].get("content") or "" for e in events if e["choices"])


async def _lines(reply: aiohttp.ClientResponse) -> bytes:
    return b"".join([line async for line in reply.content])


async def _iter_any(reply: aiohttp.ClientResponse) -> bytes:
    return b"".join([chunk async for chunk in reply.content.iter_any()])


async def _iter_chunked(reply: aiohttp.ClientResponse) -> bytes:
    return b"".join([chunk async for chunk in reply.content.iter_chunked(7)])


async def _readline(reply: aiohttp.ClientResponse) -> bytes:
    raw = b""
    while line := await reply.content.readline():
        raw += line
    return raw


async def _read(reply: aiohttp.ClientResponse) -> bytes:
    return await reply.read()


async def _text(reply: aiohttp.ClientResponse) -> bytes:
    return (await reply.text()).encode()


READERS = [_lines, _iter_any, _iter_chunked, _readline, _read, _text]


async def test_a_json_call_is_an_llm_span_and_the_caller_reads_it_unchanged(
    server: FakeLLMServer,
) -> None:
    url = server.openai_url + "/chat/completions?api_key=leaky"
    with active_run() as ctx:
        async with (
            aiohttp.ClientSession(headers=OPENAI_HEADERS) as http,
            http.post(url, json=BODY) as reply,
        ):
            assert reply.status == 200 and reply.reason == "OK"
            assert reply.content_type == "application/json"
            raw = await reply.read()
            assert reply.content_length == len(raw)
            assert await reply.json() == json.loads(raw)
            assert await reply.text() == raw.decode()
    (span,) = llm_spans(ctx)
    assert (span.name, span.status) == ("openai.chat.completions", "success")
    assert span.model == "gpt-4o-mini"
    assert span.input == BODY
    assert span.output == json.loads(raw)
    assert (span.tokens_in, span.tokens_out) == (12, 5)
    assert span.cost_usd is not None and span.cost_usd > 0
    assert span.metadata["http_status"] == 200
    assert span.metadata["request_id"].startswith("req_fake_")
    assert span.metadata["url"].endswith("/v1/chat/completions?api_key=%5Bredacted%5D")
    assert "leaky" not in span.model_dump_json()
    assert_no_secrets(ctx)


@pytest.mark.parametrize("read", READERS, ids=lambda f: f.__name__.strip("_"))
async def test_a_stream_read_any_way_is_assembled(
    read: Callable[[aiohttp.ClientResponse], Awaitable[bytes]], server: FakeLLMServer
) -> None:
    url = server.openai_url + "/chat/completions"
    with active_run() as ctx:
        async with aiohttp.ClientSession() as http, http.post(url, json=STREAM) as reply:
            assert reply.headers["content-type"] == "text/event-stream"
            raw = await read(reply)
    assert raw.endswith(b"data: [DONE]\n\n")
    assert _sse_text(raw) == "The answer is 42."
    (span,) = llm_spans(ctx)
    assert span.status == "success"
    assert span.output["choices"][0]["message"]["content"] == "The answer is 42."
    assert (span.tokens_in, span.tokens_out) == (12, 5)
    assert span.metadata["stream"] is True
    assert span.metadata["stream_sse"].encode() == raw  # exactly the bytes the caller read
    assert span.metadata["ttft_ms"] >= 0


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_anthropic_messages_sent_as_bytes(stream: bool, server: FakeLLMServer) -> None:
    request = {**ANTHROPIC, "stream": True} if stream else ANTHROPIC
    headers = {**ANTHROPIC_HEADERS, "content-type": "application/json"}
    with active_run() as ctx:
        async with (
            aiohttp.ClientSession() as http,
            http.post(
                server.url + "/v1/messages", data=json.dumps(request).encode(), headers=headers
            ) as reply,
        ):
            raw = await reply.read()
    (span,) = llm_spans(ctx)
    assert (span.name, span.model, span.status) == (
        "anthropic.messages",
        "claude-3-5-haiku-latest",
        "success",
    )
    assert span.input == request
    assert span.output["content"][0]["text"] == "The answer is 42."
    assert (span.tokens_in, span.tokens_out) == (12, 5)
    if stream:
        assert b"event: message_stop" in raw
        assert span.metadata["stream_sse"].encode() == raw
    else:
        assert json.loads(raw) == span.output
    assert_no_secrets(ctx)


class _Gated(BaseHTTPRequestHandler):
    """An SSE stream whose first event is sent at once, the rest once ``gate`` is set."""

    protocol_version = "HTTP/1.1"
    gate: ClassVar[threading.Event]
    waited: ClassVar[list[bool]]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        first = {"model": "gpt-4o-mini", "choices": [{"index": 0, "delta": {"content": "first"}}]}
        rest = {"model": "gpt-4o-mini", "choices": [{"index": 0, "delta": {"content": " rest"}}]}
        try:
            self._chunk(b"data: " + json.dumps(first).encode() + b"\n\n")
            self.waited.append(self.gate.wait(HANG_S))  # False: the client never saw "first"
            self._chunk(b"data: " + json.dumps(rest).encode() + b"\n\ndata: [DONE]\n\n")
            self._chunk(b"")
        except OSError:  # the client hung up (it stopped reading): normal
            pass


@pytest.fixture
def gated() -> Iterator[tuple[str, threading.Event, list[bool]]]:
    class Handler(_Gated):
        gate: ClassVar[threading.Event] = threading.Event()
        waited: ClassVar[list[bool]] = []

    with serving(Handler) as url:
        yield url + "/v1/chat/completions", Handler.gate, Handler.waited
        Handler.gate.set()


async def test_stream_bytes_reach_the_caller_as_they_arrive(
    gated: tuple[str, threading.Event, list[bool]],
) -> None:
    url, gate, waited = gated
    with active_run() as ctx:
        async with aiohttp.ClientSession() as http, http.post(url, json=STREAM) as reply:
            first = await reply.content.readline()  # before the server sent the rest
            assert b'"first"' in first
            gate.set()
            rest = await reply.read()
    assert waited == [True]
    assert _sse_text(first + rest) == "first rest"
    (span,) = llm_spans(ctx)
    assert span.output["choices"][0]["message"]["content"] == "first rest"
    assert "stream_closed_early" not in span.metadata


async def _no_task_left(before: set[asyncio.Task[Any]]) -> bool:
    """Whether every task started since ``before`` ends (the loop given time to run)."""
    for _ in range(100):
        if not asyncio.all_tasks() - before:
            return True
        await asyncio.sleep(0)
    return False


async def test_a_stream_released_unread_closes_its_span_early(
    gated: tuple[str, threading.Event, list[bool]],
) -> None:
    url, gate, _ = gated
    before = asyncio.all_tasks()
    with active_run() as ctx:
        async with aiohttp.ClientSession() as http:
            async with http.post(url, json=STREAM) as reply:
                assert reply.status == 200  # and never read: the connection is closed
            gate.set()
            with pytest.raises(aiohttp.ClientConnectionError):
                await reply.read()
    assert await _no_task_left(before)  # the call's task did not wait on forever
    (span,) = llm_spans(ctx)
    assert span.status == "success"
    assert span.metadata["stream_closed_early"] is True


async def test_a_stream_released_early_is_closed_and_recorded_at_once(
    gated: tuple[str, threading.Event, list[bool]], tmp_path: Path
) -> None:
    url, gate, _ = gated
    path = tmp_path / "early.jsonl"
    before = asyncio.all_tasks()
    async with aiohttp.ClientSession() as http:
        with active_run() as ctx, cassette(path, "record"):
            reply = await http.post(url, json=STREAM)
            first = await reply.content.readline()  # one event, then the agent stops
            reply.release()
            (span,) = llm_spans(ctx)  # no await since the release: closed right then
            assert span.status == "success" and span.metadata["stream_closed_early"] is True
            assert span.output["choices"][0]["message"]["content"] == "first"
        gate.set()
    assert await _no_task_left(before)
    with ConnectionCounter() as port, cassette(path, "replay") as tape:
        port_url = port.url + "/v1/chat/completions"
        async with aiohttp.ClientSession() as http, http.post(port_url, json=STREAM) as served:
            assert await served.read() == first + b"\n"  # what had arrived, as an event
    assert tape.stats.faithful and port.connections == 0


@pytest.mark.parametrize("status", [400, 429, 500, 503])
async def test_error_statuses_are_error_spans_the_caller_sees_as_sent(status: int) -> None:
    script = ScriptedLLM([Reply(status=status, error="slow down"), Reply(status=status)])
    before = asyncio.all_tasks()
    with FakeLLMServer(script) as server, active_run() as ctx:
        url = server.openai_url + "/chat/completions"
        async with aiohttp.ClientSession() as http, http.post(url, json=BODY) as reply:
            assert reply.status == status and not reply.ok
            assert (await reply.json())["error"]["message"] == "slow down"
            with pytest.raises(aiohttp.ClientResponseError) as raised:
                reply.raise_for_status()
            assert raised.value.status == status
        async with aiohttp.ClientSession(raise_for_status=True) as strict:
            with pytest.raises(aiohttp.ClientResponseError) as raised:
                await strict.post(url, json=BODY)  # released unread by aiohttp itself
            assert raised.value.status == status
        assert await _no_task_left(before)
    first, second = llm_spans(ctx)
    for span in (first, second):
        assert span.status == "error"
        assert span.metadata["http_status"] == status
        assert span.error is not None and span.error.type == "HTTPStatusError"
        assert span.cost_usd is None
    assert first.error is not None and "slow down" in first.error.message


async def test_a_failed_connection_is_an_error_span_and_the_callers_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed when the block ends: nothing listens there
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    with active_run() as ctx:
        async with aiohttp.ClientSession() as http:
            with pytest.raises(aiohttp.ClientConnectorError):
                await http.post(url, json=BODY)
    (span,) = llm_spans(ctx)
    assert span.status == "error"
    assert span.error is not None and span.error.type == "ClientConnectorError"
    assert span.model == "gpt-4o-mini"  # from the request


async def test_non_llm_requests_pass_untouched(server: FakeLLMServer, tmp_path: Path) -> None:
    path = tmp_path / "recorded.jsonl"
    with active_run() as ctx, cassette(path, "record") as tape:
        async with aiohttp.ClientSession() as http:
            async with http.get(server.openai_url + "/models") as reply:
                assert (await reply.json())["data"][0]["id"] == "fake"
            async with http.post(server.url + "/search", json={"q": "x"}) as reply:
                assert reply.status == 404
    assert llm_spans(ctx) == []
    assert [r.path for r in server.requests] == ["/search"]
    assert tape.stats.live == 0 and path.read_text().count("\n") == 1  # the header only


async def test_concurrent_calls_and_runs_each_keep_their_own(server: FakeLLMServer) -> None:
    server.script = echo_script()

    async def run(name: str) -> tuple[list[str], list[Any]]:
        with active_run(name) as ctx:
            async with aiohttp.ClientSession() as http:

                async def ask(i: int) -> str:
                    body = {**BODY, "messages": [{"role": "user", "content": f"{name} {i}"}]}
                    url = server.openai_url + "/chat/completions"
                    async with http.post(url, json=body) as reply:
                        return str((await reply.json())["choices"][0]["message"]["content"])

                answers = await asyncio.gather(*(ask(i) for i in range(10)))
        return answers, llm_spans(ctx)

    (a_answers, a_spans), (b_answers, b_spans) = await asyncio.gather(run("a"), run("b"))
    for name, answers, spans in (("a", a_answers, a_spans), ("b", b_answers, b_spans)):
        assert [a.split(": ")[1] for a in answers] == [f"{name} {i}" for i in range(10)]
        assert len(spans) == 10
        by_input = {s.input["messages"][0]["content"]: s.output for s in spans}
        for i, answer in enumerate(answers):
            assert by_input[f"{name} {i}"]["choices"][0]["message"]["content"] == answer


async def test_a_compressed_response_is_decoded(gzip_server: str) -> None:
    with active_run() as ctx:
        async with (
            aiohttp.ClientSession() as http,
            http.post(gzip_server + "/v1/messages", json={"model": "x"}) as reply,
        ):
            assert "content-encoding" not in reply.headers  # the body the caller gets is plain
            assert (await reply.json())["model"] == "claude-3-5-haiku-latest"
    (span,) = llm_spans(ctx)
    assert span.output["model"] == "claude-3-5-haiku-latest"
    assert (span.tokens_in, span.tokens_out) == (13, 2)  # cache reads count as input
    assert "capture_error" not in span.metadata


def _connect() -> Any:
    return aiohttp.connector.BaseConnector.__dict__["connect"]


def test_the_hook_exists_only_while_a_capture_is_active() -> None:
    original = _connect()
    assert not hasattr(original, "__wrapped__")
    with capture_llm_calls(), capture_llm_calls():
        assert _connect().__wrapped__ is original
    assert _connect() is original


def _run_python(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return out.stdout.split()


def test_scenarist_never_imports_aiohttp_and_hooks_it_once_the_agent_does() -> None:
    code = """
import sys
import scenarist
from scenarist.tracing.http import capture_llm_calls
from scenarist.replay import cassette
print("aiohttp" in sys.modules)
with capture_llm_calls():
    print("aiohttp" in sys.modules)
    import aiohttp  # the agent imports it in the middle of a run
    print(hasattr(aiohttp.connector.BaseConnector.connect, "__wrapped__"))
print(hasattr(aiohttp.connector.BaseConnector.connect, "__wrapped__"))
"""
    assert _run_python(code) == ["False", "False", "True", "False"]


class _NeverResolves(aiohttp.abc.AbstractResolver):
    """A DNS resolver that never answers: every connect times out."""

    async def resolve(self, host: str, port: int = 0, family: int = 0) -> Any:
        await asyncio.Event().wait()

    async def close(self) -> None:
        return None


async def _timed_out_connect() -> BaseException:
    connector = aiohttp.TCPConnector(resolver=_NeverResolves())
    timeout = aiohttp.ClientTimeout(connect=0.05)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
        with pytest.raises(aiohttp.ClientError) as raised:
            await http.post("http://llm.invalid/v1/chat/completions", json=BODY)
    return raised.value


async def test_a_connect_timeout_is_aiohttps_own_error() -> None:
    plain = await _timed_out_connect()
    with active_run() as ctx:
        hooked = await _timed_out_connect()
    assert type(hooked) is type(plain)
    assert (
        str(hooked)
        == str(plain)
        == "Connection timeout to host http://llm.invalid/v1/chat/completions"
    )
    (span,) = llm_spans(ctx)
    assert span.status == "error" and span.error is not None
    assert span.error.type == type(plain).__name__
