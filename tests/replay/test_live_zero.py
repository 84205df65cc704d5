"""live=0 is true: while a strict replay is active (a cassette in replay mode, what
``scenarist run --replay`` enters, or a strict trace-backed replay) no LLM call leaves the
process, whatever the client library and whichever thread makes it.

Every (thread path x client) pair runs against the fake provider on loopback, and the
fake provider must receive nothing: the call is served by the replay, or refused and
counted (never sent, never a certificate saying live=0 with the call gone out).
"""

from __future__ import annotations

import asyncio
import contextvars
import http.client
import json
import socket
import urllib.request
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import requests
import urllib3
from tests.helpers.thread_paths import bare_thread, pool_submit, run_in_executor, to_thread
from tests.replay.cassette_support import OPENAI_KEY, echo_script

from scenarist import Client, RunContext
from scenarist.errors import LiveCallBlockedError, ReplayMissError
from scenarist.replay import cassette
from scenarist.replay.step_replay import ReplayOptions
from scenarist.store import MemoryStore
from scenarist.testing import FakeLLMServer

MOCKED = ReplayOptions(mock_llm_responses=True)
PATH = "/v1/chat/completions"


def _body(question: str) -> bytes:
    chat = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": question}]}
    return json.dumps(chat).encode()


def _answer(raw: bytes | str) -> str:
    return str(json.loads(raw)["choices"][0]["message"]["content"])


def ask_httpx(base: str, question: str) -> str:
    with httpx.Client(base_url=base) as http:
        reply = http.post(PATH, content=_body(question))
        reply.raise_for_status()
    return _answer(reply.content)


def ask_requests(base: str, question: str) -> str:
    headers = {"Authorization": f"Bearer {OPENAI_KEY}", "content-type": "application/json"}
    reply = requests.post(base + PATH, data=_body(question), headers=headers, timeout=30)
    reply.raise_for_status()
    return _answer(reply.content)


def ask_urllib3(base: str, question: str) -> str:
    with urllib3.PoolManager() as pool:
        reply = pool.request("POST", base + PATH, body=_body(question), retries=False)
    assert reply.status == 200, reply.status
    return _answer(reply.data)


def ask_urllib(base: str, question: str) -> str:
    request = urllib.request.Request(
        base + PATH, data=_body(question), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as reply:
        return _answer(reply.read())


def ask_http_client(base: str, question: str) -> str:
    url = urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname or "", url.port, timeout=30)
    try:
        connection.request("POST", PATH, _body(question), {"content-type": "application/json"})
        return _answer(connection.getresponse().read())
    finally:
        connection.close()


def ask_socket(base: str, question: str) -> str:
    """An LLM call written by hand on a raw socket (no HTTP library at all)."""
    url = urlsplit(base)
    body = _body(question)
    head = (
        f"POST {PATH} HTTP/1.1\r\nHost: {url.netloc}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode()
    with socket.socket() as sock:  # closed also when the guard refuses the connect
        sock.settimeout(30)
        sock.connect((url.hostname or "", url.port or 80))
        sock.sendall(head + body)
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    return _answer(raw.split(b"\r\n\r\n", 1)[1])


def _request(base: str, question: str) -> bytes:
    url = urlsplit(base)
    body = _body(question)
    head = (
        f"POST {PATH} HTTP/1.1\r\nHost: {url.netloc}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode()
    return head + body


def _read_answer(sock: socket.socket) -> str:
    raw = b""
    while chunk := sock.recv(65536):
        raw += chunk
    return _answer(raw.split(b"\r\n\r\n", 1)[1])


def ask_sendmsg(base: str, question: str) -> str:
    """The request written with ``sendmsg``, its request line split over buffers."""
    url = urlsplit(base)
    request = _request(base, question)
    with socket.socket() as sock:
        sock.settimeout(30)
        sock.connect((url.hostname or "", url.port or 80))
        sock.sendmsg([request[:3], request[3:12], request[12:]])
        return _read_answer(sock)


def ask_sendto(base: str, question: str) -> str:
    """Connected and written in one ``sendto`` (TCP Fast Open: no ``connect`` call)."""
    url = urlsplit(base)
    with socket.socket() as sock:
        sock.settimeout(30)
        sock.sendto(_request(base, question), socket.MSG_FASTOPEN, (url.hostname, url.port))
        return _read_answer(sock)


def _on_own_loop(make: Callable[[], Any]) -> str:
    """``make()``'s coroutine run on a loop of its own (in a thread of the same context
    when called on the run's loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return str(asyncio.run(make()))
    context = contextvars.copy_context()
    return pool_submit(lambda: context.run(asyncio.run, make()))


def ask_asyncio_stream(base: str, question: str) -> str:
    """A request written by hand on an asyncio stream (the selector transport)."""
    url = urlsplit(base)

    async def post() -> str:
        reader, writer = await asyncio.open_connection(url.hostname, url.port)
        try:
            writer.write(_request(base, question))
            await writer.drain()
            raw = await reader.read()
        finally:
            writer.close()
        return _answer(raw.split(b"\r\n\r\n", 1)[1])

    return _on_own_loop(post)


def ask_aiohttp(base: str, question: str) -> str:
    import aiohttp

    async def post() -> str:
        headers = {"content-type": "application/json"}
        async with (
            aiohttp.ClientSession() as http,
            http.post(base + PATH, data=_body(question), headers=headers) as reply,
        ):
            return _answer(await reply.read())

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(post())
    # a sync agent called on the run's loop: its own loop in a thread, same context
    context = contextvars.copy_context()
    return pool_submit(lambda: context.run(asyncio.run, post()))


HOOKED = {ask_httpx, ask_requests, ask_urllib3, ask_aiohttp}
"""Clients the capture serves from a recording; the others are refused (no hook)."""

CLIENTS = [ask_httpx, ask_requests, ask_urllib3, ask_aiohttp, ask_urllib, ask_http_client]
CLIENTS += [ask_socket, ask_sendmsg, ask_sendto, ask_asyncio_stream]


def own_task(call: Callable[[], str]) -> str:
    return call()


STARTERS = [own_task, pool_submit, run_in_executor, bare_thread, to_thread]
CONTEXT_KEEPING = {own_task, to_thread}


def _sent(server: FakeLLMServer) -> int:
    return len(server.requests)


@pytest.mark.parametrize("start", STARTERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("ask", CLIENTS, ids=lambda f: f.__name__)
def test_a_cassette_replay_sends_nothing(
    tmp_path: Path, start: Callable[[Callable[[], str]], str], ask: Callable[[str, str], str]
) -> None:
    path = tmp_path / "tape.jsonl"
    with FakeLLMServer(echo_script()) as server:
        with cassette(path, "record"):
            recorded = (ask if ask in HOOKED else ask_httpx)(server.url, "q")
        before = _sent(server)
        tape = cassette(path, "replay")
        answer: list[str] = []
        # refused inside: the cassette raises it again when left
        inside = (OSError, httpx.HTTPError, ReplayMissError, LiveCallBlockedError)
        with suppress(LiveCallBlockedError, ReplayMissError), tape, suppress(*inside):
            answer.append(start(lambda: ask(server.url, "q")))
        assert _sent(server) == before, "the call reached the provider"
    stats = tape.stats
    if ask in HOOKED:
        assert answer == [recorded] and stats.replayed == 1 and stats.faithful, stats
    else:
        assert not answer and stats.refused == 1 and not stats.faithful, stats


@pytest.mark.parametrize("start", STARTERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("ask", CLIENTS, ids=lambda f: f.__name__)
def test_a_strict_trace_replay_sends_nothing(
    start: Callable[[Callable[[], str]], str], ask: Callable[[str, str], str]
) -> None:
    client = Client(store=MemoryStore())
    with FakeLLMServer(echo_script()) as server:

        def recorded_agent(ctx: RunContext) -> str:
            label = ctx.track_step("label", ctx.input, lambda: "q")
            return (ask if ask in HOOKED else ask_httpx)(server.url, label)

        def replayed_agent(ctx: RunContext) -> str:
            label = ctx.track_step("label", ctx.input, lambda: "q")
            return start(lambda: ask(server.url, label))

        live = client.run("agent", recorded_agent, input="hi")
        (record,) = client.store.traces.values()  # type: ignore[attr-defined]
        before = _sent(server)
        result = client.replay(record, replayed_agent, MOCKED)
        assert _sent(server) == before, "the call reached the provider"
    certificate = result.certificate
    assert certificate is not None and certificate.guarantee == "in-process"
    assert certificate.live == 0  # and the provider received nothing (above)
    if ask in HOOKED:
        assert result.output == live and result.passed, result.failures
        assert certificate.replayed == 1 and certificate.clean, certificate
    else:
        assert not result.passed
        assert any("refused" in f or "blocked" in f.lower() for f in result.failures), (
            result.failures
        )
        assert certificate.refused == 1 and certificate.replayed == 0, certificate


def test_a_replay_that_runs_live_is_certified_live() -> None:
    """Veval's default replay reruns the agent live: its call reaches the provider, and
    its certificate says so (live=1, guarantee none), never live=0."""
    client = Client(store=MemoryStore())
    with FakeLLMServer(echo_script()) as server:

        def agent(ctx: RunContext) -> str:
            return ask_httpx(server.url, "q")

        client.run("agent", agent, input="hi")
        (record,) = client.store.traces.values()  # type: ignore[attr-defined]
        before = _sent(server)
        result = client.replay(record, agent)  # ReplayOptions(): live, as Veval's
        assert _sent(server) == before + 1
    assert result.certificate is not None
    assert result.certificate.live == 1 and result.certificate.guarantee == "none"
    replayed = result.replayed_record
    assert replayed is not None and replayed.metadata["replay_guarantee"] == "none"


def test_a_trace_backed_item_reports_its_certificate_and_a_sneaked_call_refused() -> None:
    from scenarist.model.items import ScenarioItem

    client = Client(store=MemoryStore())
    with FakeLLMServer(echo_script()) as server:

        def recorded(ctx: RunContext) -> str:
            label = ctx.track_step("label", ctx.input, lambda: "q")
            return ask_httpx(server.url, label)

        def sneaky(ctx: RunContext) -> str:
            label = ctx.track_step("label", ctx.input, lambda: "q")
            answer = ask_httpx(server.url, label)
            with suppress(LiveCallBlockedError):  # swallowed: the replay fails closed
                bare_thread(lambda: ask_socket(server.url, "q"))
            return answer

        client.run("agent", recorded, input="hi")
        (record,) = client.store.traces.values()  # type: ignore[attr-defined]
        before = _sent(server)
        item = ScenarioItem(trace_id=record.trace_id)
        clean = client.run_scenario("items", recorded, items=[item])
        sneaked = client.run_scenario("items", sneaky, items=[item])
        assert _sent(server) == before
    assert clean.certificate is not None and clean.certificate.summary() == (
        "1 replayed, 0 missed, 0 refused, 0 live (guarantee: in-process)"
    )
    assert not sneaked.passed
    assert sneaked.certificate is not None and sneaked.certificate.refused == 1
    assert sneaked.certificate.live == 0
    lines = "\n".join(sneaked.report_lines())
    assert "replay certificate: 1 replayed, 0 missed, 1 refused, 0 live" in lines
    stored = sneaked.to_record(sneaked.started_at)
    assert stored.certificate == sneaked.certificate
    assert stored.items[0].certificate == sneaked.certificate
