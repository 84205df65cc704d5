"""live=0 is true beyond the paths the payload classifier knows: a request written by
hand over an asyncio TLS stream, a request to an LLM provider's host on a path the
classifier does not know (named by ``Host``, by TLS server name, by a proxy's
``CONNECT``, or by the user), from a thread started without the replay's context.

Provider names cannot be resolved offline, so every client here connects to the fake
provider on loopback by address and names the provider's host as a real client would
through DNS: the ``Host`` header, the TLS server name (a certificate the test made for
that name), or a ``CONNECT`` line to a loopback proxy that routes the name to the fake
provider. The fake provider must receive nothing, and the refusal is counted.
"""

from __future__ import annotations

import asyncio
import contextvars
import http.client
import json
import socket
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests
from tests.helpers.thread_paths import bare_thread, pool_submit, run_in_executor
from tests.helpers.tls import Certificate, self_signed
from tests.replay.cassette_support import echo_script

from scenarist import Client, RunContext
from scenarist.errors import LiveCallBlockedError, ReplayMissError
from scenarist.replay import cassette
from scenarist.replay.step_replay import ReplayOptions
from scenarist.store import MemoryStore
from scenarist.testing import FakeLLMServer, TestClient

COHERE = "api.cohere.com"
"""A provider whose chat path (``/v2/chat``) the payload classifier does not know."""
OWN_HOST = "llm.internal.test"
"""A host only the user knows serves an LLM (a model server of their own)."""


def _body(question: str) -> bytes:
    return json.dumps(
        {"model": "command-r", "messages": [{"role": "user", "content": question}]}
    ).encode()


def _request(path: str, host: str, question: str = "q") -> bytes:
    body = _body(question)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode()
    return head + body


def _status(raw: bytes) -> str:
    return raw.split(b"\r\n", 1)[0].decode()


class TunnelProxy:
    """An HTTP proxy on loopback answering ``CONNECT name:port`` by opening a tunnel to
    the address the test routes that name to; ``tunnels`` lists the targets asked."""

    def __init__(self, routes: dict[str, tuple[str, int]]) -> None:
        self.routes = routes
        self.tunnels: list[str] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def __enter__(self) -> TunnelProxy:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._tunnel, args=(conn,), daemon=True).start()

    def _tunnel(self, conn: socket.socket) -> None:
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(4096)
                if not chunk:
                    return  # the client hung up (its CONNECT was refused)
                head += chunk
            method, target, _ = head.split(b"\r\n", 1)[0].decode().split(" ")
            self.tunnels.append(target)
            route = self.routes.get(target.rsplit(":", 1)[0])
            if method != "CONNECT" or route is None:
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")
                return
            with socket.create_connection(route) as upstream:
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                threading.Thread(target=_pipe, args=(upstream, conn), daemon=True).start()
                _pipe(conn, upstream)


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    with suppress(OSError):
        while chunk := source.recv(65536):
            sink.sendall(chunk)
        sink.shutdown(socket.SHUT_WR)


@dataclass
class Servers:
    plain: FakeLLMServer
    tls: FakeLLMServer
    proxy: TunnelProxy
    cert: Certificate

    @property
    def plain_port(self) -> int:
        return int(self.plain.url.rsplit(":", 1)[1])

    @property
    def tls_port(self) -> int:
        return int(self.tls.url.rsplit(":", 1)[1])

    def received(self) -> int:
        return len(self.plain.requests) + len(self.tls.requests) + len(self.proxy.tunnels)


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    names = ["api.openai.com", COHERE, OWN_HOST, "localhost"]
    return self_signed(tmp_path_factory.mktemp("tls"), names)


@pytest.fixture
def servers(cert: Certificate) -> Iterator[Servers]:
    with (
        FakeLLMServer(echo_script()) as plain,
        FakeLLMServer(echo_script(), tls=cert.server_context()) as tls,
    ):
        route = ("127.0.0.1", int(tls.url.rsplit(":", 1)[1]))
        with TunnelProxy({"api.openai.com": route, COHERE: route}) as proxy:
            yield Servers(plain, tls, proxy, cert)


# --- the clients: each makes one call the classifier alone would not refuse -----------


def _on_own_loop(make: Callable[[], Any]) -> str:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return str(asyncio.run(make()))
    context = contextvars.copy_context()
    return pool_submit(lambda: context.run(asyncio.run, make()))


def _asyncio_tls(s: Servers, name: str, request: bytes) -> str:
    async def post() -> str:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", s.tls_port, ssl=s.cert.client_context(), server_hostname=name
        )
        try:
            writer.write(request)
            await writer.drain()
            raw = await reader.read()
        finally:
            writer.close()
        return _status(raw)

    return _on_own_loop(post)


def asyncio_tls_llm_path(s: Servers) -> str:
    """An LLM path over asyncio TLS: the socket sees only ciphertext."""
    return _asyncio_tls(s, "localhost", _request("/v1/chat/completions", "localhost"))


def asyncio_tls_llm_host(s: Servers) -> str:
    """An unknown path over asyncio TLS to an LLM host (its TLS name and Host)."""
    return _asyncio_tls(s, COHERE, _request("/v2/chat", COHERE))


def ssl_socket_llm_host(s: Servers) -> str:
    """An unknown path on an ``SSLSocket`` whose TLS server name is an LLM host's (the
    request itself names only the address)."""
    context = s.cert.client_context()
    with (
        socket.create_connection(("127.0.0.1", s.tls_port), timeout=30) as raw,
        context.wrap_socket(raw, server_hostname=COHERE) as sock,
    ):
        sock.sendall(_request("/v2/chat", f"127.0.0.1:{s.tls_port}"))
        return _status(sock.recv(65536))


def httpx_host_header(s: Servers) -> str:
    with httpx.Client() as http:
        reply = http.post(
            f"http://127.0.0.1:{s.plain_port}/v2/chat", content=_body("q"), headers={"Host": COHERE}
        )
    return str(reply.status_code)


def aiohttp_host_header(s: Servers) -> str:
    import aiohttp

    async def post() -> str:
        async with (
            aiohttp.ClientSession() as http,
            http.post(
                f"http://127.0.0.1:{s.plain_port}/v2/chat",
                data=_body("q"),
                headers={"Host": COHERE},
            ) as reply,
        ):
            return str(reply.status)

    return _on_own_loop(post)


def requests_host_header(s: Servers) -> str:
    """requests (urllib3, http.client): the Host header is seen on the socket."""
    reply = requests.post(
        f"http://127.0.0.1:{s.plain_port}/v2/chat",
        data=_body("q"),
        headers={"Host": COHERE},
        timeout=30,
    )
    return str(reply.status_code)


def socket_connect_line(s: Servers) -> str:
    """A tunnel to an LLM host asked of a proxy by hand (``CONNECT name:443``)."""
    url = s.proxy.url.rsplit(":", 1)
    with socket.create_connection((url[0][7:], int(url[1])), timeout=30) as raw:
        raw.sendall(b"CONNECT api.openai.com:443 HTTP/1.1\r\nHost: api.openai.com:443\r\n\r\n")
        assert raw.recv(4096).startswith(b"HTTP/1.1 200")
        with s.cert.client_context().wrap_socket(raw, server_hostname="localhost") as sock:
            sock.sendall(_request("/v1/chat/completions", "localhost"))
            return _status(sock.recv(65536))


def requests_via_proxy(s: Servers) -> str:
    reply = requests.post(
        f"https://{COHERE}/v2/chat",
        data=_body("q"),
        proxies={"https": s.proxy.url},
        verify=str(s.cert.cert),
        timeout=30,
    )
    return str(reply.status_code)


def http_client_tunnel(s: Servers) -> str:
    port = int(s.proxy.url.rsplit(":", 1)[1])
    connection = http.client.HTTPSConnection(
        "127.0.0.1", port, context=s.cert.client_context(), timeout=30
    )
    connection.set_tunnel(COHERE, 443)
    try:
        connection.request("POST", "/v2/chat", _body("q"))
        return str(connection.getresponse().status)
    finally:
        connection.close()


def httpx_via_proxy(s: Servers) -> str:
    with httpx.Client(proxy=s.proxy.url, verify=s.cert.client_context()) as http:
        reply = http.post(f"https://{COHERE}/v2/chat", content=_body("q"))
    return str(reply.status_code)


def aiohttp_via_proxy(s: Servers) -> str:
    import aiohttp

    async def post() -> str:
        async with (
            aiohttp.ClientSession() as http,
            http.post(
                f"https://{COHERE}/v2/chat",
                data=_body("q"),
                proxy=s.proxy.url,
                ssl=s.cert.client_context(),
            ) as reply,
        ):
            return str(reply.status)

    return _on_own_loop(post)


def urllib_via_proxy(s: Servers) -> str:
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({"https": s.proxy.url}),
        urllib.request.HTTPSHandler(context=s.cert.client_context()),
    )
    request = urllib.request.Request(f"https://{COHERE}/v2/chat", data=_body("q"))
    try:
        with opener.open(request, timeout=30) as reply:
            return str(reply.status)
    except urllib.error.HTTPError as error:  # the fake provider's 404: it was reached
        return str(error.code)


CLIENTS = [
    asyncio_tls_llm_path,
    asyncio_tls_llm_host,
    ssl_socket_llm_host,
    httpx_host_header,
    aiohttp_host_header,
    requests_host_header,
    socket_connect_line,
    requests_via_proxy,
    http_client_tunnel,
    httpx_via_proxy,
    aiohttp_via_proxy,
    urllib_via_proxy,
]
STRAYS = [pool_submit, run_in_executor, bare_thread]
"""Threads started without the replay's context."""


# --- the replays ------------------------------------------------------------------------


def cassette_replay(tmp_path: Path, call: Callable[[], str], llm_hosts: Sequence[str] = ()) -> int:
    """``call`` made during a cassette replay (after a served call); its refusals."""
    with FakeLLMServer(echo_script()) as recorded:
        path = tmp_path / "tape.jsonl"
        with cassette(path, "record"):
            _ask(recorded.url)
        named = {"llm_hosts": llm_hosts} if llm_hosts else {}  # the option, when given
        tape = cassette(path, "replay", **named)
        with suppress(LiveCallBlockedError, ReplayMissError), tape:
            _ask(recorded.url)
            with suppress(Exception):  # the client's own error for the refusal
                call()
    assert tape.stats.replayed == 1, tape.stats
    return tape.stats.refused


def trace_replay(tmp_path: Path, call: Callable[[], str], llm_hosts: Sequence[str] = ()) -> int:
    """``call`` made during a strict replay of a recorded trace; its refusals."""
    client = Client(store=MemoryStore())
    with FakeLLMServer(echo_script()) as recorded:

        def agent(ctx: RunContext) -> str:
            return _ask(recorded.url)

        def sneaky(ctx: RunContext) -> str:
            answer = _ask(recorded.url)
            with suppress(Exception):
                call()
            return answer

        client.run("agent", agent, input="hi")
        (record,) = client.store.traces.values()  # type: ignore[attr-defined]
        named = {"llm_hosts": list(llm_hosts)} if llm_hosts else {}
        options = ReplayOptions(mock_llm_responses=True, **named)
        result = client.replay(record, sneaky, options)
    certificate = result.certificate
    assert certificate is not None and certificate.replayed == 1 and certificate.live == 0
    assert certificate.refused == 0 or not result.passed
    return certificate.refused


def _ask(base: str) -> str:
    with httpx.Client(base_url=base) as http:
        body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "q"}]}
        reply = http.post("/v1/chat/completions", json=body)
    return str(json.loads(reply.content)["choices"][0]["message"]["content"])


REPLAYS = [cassette_replay, trace_replay]


@pytest.mark.parametrize("replay", REPLAYS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("start", STRAYS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("ask", CLIENTS, ids=lambda f: f.__name__)
def test_a_stray_call_to_an_llm_api_is_refused(
    tmp_path: Path,
    servers: Servers,
    replay: Callable[[Path, Callable[[], str]], int],
    start: Callable[[Callable[[], str]], str],
    ask: Callable[[Servers], str],
) -> None:
    refused = replay(tmp_path, lambda: start(lambda: ask(servers)))
    assert servers.received() == 0, "the call reached the provider (or asked a tunnel)"
    assert refused == 1


@pytest.mark.parametrize("ask", CLIENTS, ids=lambda f: f.__name__)
def test_without_a_replay_each_call_reaches_the_provider(
    servers: Servers, ask: Callable[[Servers], str]
) -> None:
    """The clients above are sound: unguarded, each call gets the provider's answer."""
    status = bare_thread(lambda: ask(servers))
    assert status in {"200", "404", "HTTP/1.0 200 OK", "HTTP/1.0 404 Not Found"} or (
        status.startswith("HTTP/1.")
    ), status
    assert len(servers.plain.requests) + len(servers.tls.requests) == 1


def _own_host(s: Servers) -> str:
    with httpx.Client() as http:
        reply = http.post(
            f"http://127.0.0.1:{s.plain_port}/generate",
            content=_body("q"),
            headers={"Host": OWN_HOST},
        )
    return str(reply.status_code)


@pytest.mark.parametrize("replay", REPLAYS, ids=lambda f: f.__name__)
def test_a_host_the_user_names_is_an_llm_api(
    tmp_path: Path, servers: Servers, replay: Callable[..., int]
) -> None:
    refused = replay(tmp_path, lambda: bare_thread(lambda: _own_host(servers)), [OWN_HOST])
    assert servers.received() == 0 and refused == 1
    # not named: an unknown host's unknown path is not an LLM call, and a stray thread's
    # other connections pass (the process's servers and exporters keep working)
    assert replay(tmp_path, lambda: bare_thread(lambda: _own_host(servers))) == 0
    assert len(servers.plain.requests) == 1


def test_hosts_named_by_the_environment(
    tmp_path: Path, servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCENARIST_LLM_HOSTS", "other.test, *.internal.test")
    refused = cassette_replay(tmp_path, lambda: pool_submit(lambda: _own_host(servers)))
    assert servers.received() == 0 and refused == 1


def test_a_bad_llm_host_names_the_option() -> None:
    from scenarist.errors import UserError

    with pytest.raises(UserError, match=r"llm_hosts entry 'https://x\.test'"):
        cassette("tape.jsonl", "replay", llm_hosts=["https://x.test"])


def test_test_client_blocks_an_llm_host_on_an_unknown_path(servers: Servers) -> None:
    """``TestClient`` refuses live LLM calls: a provider's host is one, whatever the path."""
    client = TestClient()

    def agent(ctx: RunContext) -> str:
        return requests_host_header(servers)

    with pytest.raises(
        LiveCallBlockedError,
        match=f"TestClient blocked a live LLM call: POST /v2/chat \\(to {COHERE} at 127.0.0.1",
    ):
        client.run("agent", agent, input="hi")
    assert servers.received() == 0 and len(client.blocked) == 1


def test_the_write_checks_are_installed_only_while_a_guard_is_active(tmp_path: Path) -> None:
    """No guard, no cost: every patched method is the standard library's own outside
    a strict replay, and again after it."""
    methods = [
        (socket.socket, "connect"),
        (socket.socket, "send"),
        (socket.socket, "sendall"),
        (socket.socket, "sendto"),
        (socket.socket, "sendmsg"),
        (ssl.SSLSocket, "send"),
        (ssl.SSLSocket, "sendall"),
        (ssl.SSLObject, "write"),
        (http.client.HTTPConnection, "putrequest"),
    ]
    before = [cls.__dict__[name] for cls, name in methods]
    seen: list[list[object]] = []
    cassette_replay(tmp_path, lambda: seen.append([cls.__dict__[n] for cls, n in methods]) or "")
    assert all(a is not b for a, b in zip(before, seen[0], strict=True))
    assert [cls.__dict__[name] for cls, name in methods] == before
