"""The network guard of a strict replay: nothing the recording did not serve leaves.

While :func:`guard_network` is active for a replayed run (a trace-backed replay: its
recorder is current in the calling context) or for a context (a cassette in replay
mode: the ``with`` block, and tasks or threads started with a copy of its context), any
outbound connection made there that nothing served is
refused with :class:`~scenarist.errors.LiveCallBlockedError` naming the host and, where
the HTTP layer knows it, the path; each refusal is kept in :attr:`NetworkGuard.refused`,
which replay counts as live calls. Three seams, whatever the client library:

* ``httpx`` / ``httpx2`` and ``aiohttp`` requests the LLM-call capture does not serve
  (a path it does not know: a search API, a webhook...): refused in their hooks, with
  host and path (an ``aiohttp`` session may reuse a socket opened before the replay);
* ``http.client`` (``urllib``, ``requests`` / ``urllib3``): ``putrequest`` is refused,
  with host and path, before any connection is opened;
* any other socket (database drivers, raw sockets): ``socket.connect`` /
  ``connect_ex`` is refused, with host and port.

Loopback destinations the user allow-lists (``"127.0.0.1:5432"``, ``"localhost"``: the
agent's own test database) pass; Unix sockets always do. Outside a guarded run or
context (the store writing the replayed trace, other tasks) nothing is checked, nor
inside :func:`unguarded` (scenarist's own stores: a suite replayed from cassettes still
writes its results to a PostgreSQL or remote store). The patches are installed by the
first active guard and removed by the last.

Every active guard is also in a process-wide registry, for the LLM calls of threads
started without the agent's context (``run_in_executor``, a bare ``Thread``): from a
context with no run, response source or guard of its own, an LLM call is served by the
source of the one active guard (never sent), or refused and counted on each guard when
several are active (:func:`stray_source` for the hooks, :func:`check_request` for
``http.client`` and the writes below). An LLM call is one the payload classifier knows by
its path, or any request to an LLM API's host (``_llm_hosts``: the known providers',
``$SCENARIST_LLM_HOSTS``, the guards' ``llm_hosts``), seen wherever the host is named:

* the hooks (URL and ``Host`` header) and ``http.client.putrequest`` (its host, its
  tunnel host through a proxy, an absolute URL to a proxy);
* a request written by hand, seen at its first write: ``socket.send`` / ``sendall`` /
  ``sendto`` / ``sendmsg`` (its first buffers) and ``ssl.SSLSocket.send`` / ``sendall``
  read a write starting an HTTP/1.x request line (its path, its ``Host`` header, a
  proxy's ``CONNECT host:port``); ``ssl.SSLObject.write`` reads the plaintext of
  asyncio's and anyio's TLS streams (memory BIOs: their socket sees ciphertext);
* the TLS server name of an ``SSLSocket`` / ``SSLObject``: any write to an LLM host
  (HTTP/2 frames included), and ``connect((name, port))`` by an LLM host's name.

``sendto`` / ``sendmsg`` with an address are also checked as a ``connect`` in a guarded
context (TCP Fast Open connects without one). ``SSLSocket.sendmsg`` and a connected
``SSLSocket.sendto`` are refused by Python itself. Such a thread's other connections
pass: the process's own threads (servers, exporters, store pools) keep working. A
``llm_only`` guard (``TestClient``) refuses LLM calls only.

What this covers is the *in-process* guarantee: Python-level sockets, ``ssl`` objects
and the HTTP libraries, in every thread of this process. Network code below Python
(grpc core, pycurl, an extension's own sockets, uvloop's transports) and other processes
are out of its reach: the sandbox (``_sandbox``) covers those. Cost: the patches exist
only while a guard is active; then a write pays an index and a set lookup of its first
byte (and a TLS object a lookup of its server name), about 220 ns a write on a loaded
2-core machine (``bench/guard_write_cost.py``).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scenarist.errors import LiveCallBlockedError, UserError
from scenarist.tracing.http._llm_hosts import env_hosts, is_llm_host, parse_hosts
from scenarist.tracing.recorder import RunRecorder, current_recorder

if TYPE_CHECKING:
    import http.client
    import ssl

    from scenarist.tracing.http.capture import ResponseSource

__all__ = [
    "NetworkGuard",
    "check_request",
    "guard_network",
    "host_named",
    "stray_source",
    "unguarded",
]

_LOCAL_NAMES = {"localhost", "localhost.localdomain"}


def _is_loopback(host: str) -> bool:
    if host.lower() in _LOCAL_NAMES:
        return True
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _parse(entry: str) -> tuple[str, int | None]:
    if not isinstance(entry, str) or not entry:
        raise UserError(f"allow_network entries are 'host' or 'host:port' strings, got {entry!r}")
    host, sep, port = entry.rpartition(":")
    if not sep or not port.isdigit() or (host.count(":") and not host.startswith("[")):
        host, port = entry, ""
    host = host.strip("[]")
    if not _is_loopback(host):
        raise UserError(
            f"allow_network entry {entry!r} is not a loopback address: a strict replay "
            "only lets local services through (127.0.0.1, ::1, localhost)"
        )
    return host.lower(), int(port) if port else None


class NetworkGuard:
    """The refusals of one guarded replay, and the loopback destinations it lets pass.

    ``source`` is the response source of the replay (its cassette, its recorded calls):
    an LLM call from a thread outside any replay's context is served by it when this is
    the only strict guard of the process (see :func:`stray_source`).
    """

    llm_only = False
    """Refuse only LLM calls (``TestClient``), not every unserved connection."""

    def __init__(
        self,
        recorder: RunRecorder | None,
        where: str,
        allow: Sequence[str] = (),
        *,
        hint: str = "ReplayOptions(allow_network=['127.0.0.1:PORT'])",
        source: ResponseSource | None = None,
        llm_hosts: Sequence[str] = (),
    ) -> None:
        if isinstance(allow, str):
            raise UserError(f"allow_network takes a list of 'host:port' strings, got {allow!r}")
        self.recorder = recorder
        """The guarded run; ``None``: everything in the guarded context."""
        self.source = source
        self.where = where
        self._hint = hint
        self.refused: list[str] = []
        self._allow = [_parse(entry) for entry in allow]
        self.llm_hosts = parse_hosts(llm_hosts, "llm_hosts")
        """More LLM API hosts than the known ones (``_llm_hosts``), exact or ``*``."""
        self._lock = threading.Lock()

    def allows(self, host: str, port: int | None) -> bool:
        host = host.strip("[]").lower()
        local = _is_loopback(host)
        for allowed, allowed_port in self._allow:
            same_host = allowed == host or (local and _is_loopback(allowed))
            if same_host and (allowed_port is None or allowed_port == port):
                return True
        return False

    def allows_request(
        self,
        host: str,
        port: int | None,
        method: str | None,
        path: str,
        named: str | None = None,
    ) -> bool:
        """Whether a request the recording did not serve may leave (``method`` unknown:
        a connection; ``named``: the host the request names, when not ``host``)."""
        if self.llm_only:
            return not _is_llm(method, path, host, named)
        return self.allows(host, port)

    def refuse(
        self,
        host: str,
        port: int | None,
        path: str | None,
        *,
        stray: str = "",
        named: str | None = None,
    ) -> LiveCallBlockedError:
        """Count a refused connection (``stray``: why a call made outside the replay's
        context is refused; ``named``: the host the request names, when not ``host``)
        and return its error."""
        target = f"{host}:{port}" if port else host
        what = f"{target}{path}" if path else target
        if named and named.lower() != host.lower():
            what = f"{named}{path or ''} (at {target})"
        message = (
            f"Strict replay of {self.where} refused a live connection to {what}: nothing "
            "in the recording served it, and a replay never reaches the network. Record "
            f"the call (a capture-supported LLM API), or allow-list a local service with "
            f"{self._hint}."
        )
        return self._count(message + stray)

    def _count(self, message: str) -> LiveCallBlockedError:
        with self._lock:
            self.refused.append(message)
        return LiveCallBlockedError(message)


_guard: ContextVar[NetworkGuard | None] = ContextVar("scenarist_network_guard", default=None)
_exempt: ContextVar[bool] = ContextVar("scenarist_network_exempt", default=False)
_lock = threading.Lock()
_active = 0
_originals: dict[str, Any] = {}
_strict: list[NetworkGuard] = []
"""Every guard active in the process, oldest first (replaced, never mutated: read
without the lock)."""
_extra_hosts: tuple[str, ...] = ()
"""The LLM hosts named by ``$SCENARIST_LLM_HOSTS`` and the active guards' ``llm_hosts``."""

_STRAY = (
    " The call was made outside the replay's context (a thread started without it: "
    "loop.run_in_executor, threading.Thread, ThreadPoolExecutor.submit); run it with "
    "contextvars.copy_context().run(...) or asyncio.to_thread(...) so the replay serves it."
)


def _is_llm_call(method: str, path: str) -> bool:
    from scenarist.tracing.http._llm_payloads import classify

    return classify(method, path) is not None


def _is_llm(method: str | None, path: str, host: str, named: str | None = None) -> bool:
    """An LLM call by its path (the payload classifier) or its destination (a known or
    user-named LLM host: any method, any path)."""
    if method is not None and _is_llm_call(method, path):
        return True
    return is_llm_host(host, _extra_hosts) or (
        named is not None and is_llm_host(named, _extra_hosts)
    )


def _why(guards: list[NetworkGuard]) -> str:
    if len(guards) == 1:
        return _STRAY
    return (
        f" {len(guards)} strict replays are active in the process, so it cannot be "
        "attributed to one of them." + _STRAY
    )


def _stray_guards() -> list[NetworkGuard]:
    """The process's strict guards when the calling context has none of its own (and no
    run or response source: the hooks check those), else ``[]``."""
    guards = _strict
    if not guards or _guard.get() is not None or _exempt.get():
        return []
    return guards


class _StraySource:
    """Where an LLM call made outside every replay's context goes while strict guards
    are active: the one active replay's source (never the network), or a refusal
    counted on each guard when several are (it cannot be attributed)."""

    def __init__(self, guards: list[NetworkGuard]) -> None:
        self._guards = guards

    def _ambiguous(self, request: Any) -> LiveCallBlockedError:
        url = request.url
        why = _why(self._guards)
        errors = [
            guard.refuse(str(url.host), url.port, url.path, stray=why) for guard in self._guards
        ]
        return errors[0]

    def _refuser(self, guard: NetworkGuard, request: Any) -> Callable[[], Any]:
        def send() -> Any:
            url = request.url
            raise guard.refuse(str(url.host), url.port, url.path, stray=_STRAY)

        return send

    def respond(self, request: Any, module: Any, send: Callable[[], Any]) -> Any:
        (guard, *others) = self._guards
        if others or guard.source is None:
            raise self._ambiguous(request)
        return guard.source.respond(request, module, self._refuser(guard, request))

    async def respond_async(
        self, request: Any, module: Any, send: Callable[[], Awaitable[Any]]
    ) -> Any:
        (guard, *others) = self._guards
        if others or guard.source is None:
            raise self._ambiguous(request)
        refuse = self._refuser(guard, request)

        async def never() -> Any:
            return refuse()

        return await guard.source.respond_async(request, module, never)


def stray_source() -> ResponseSource | None:
    """The source answering an LLM call made in a context with no run, response source
    or guard of its own while strict guards are active (``None``: send it as usual)."""
    guards = _stray_guards()
    return _StraySource(guards) if guards else None


def _active_guard() -> NetworkGuard | None:
    guard = _guard.get()
    if guard is None or _exempt.get():
        return None
    if guard.recorder is not None and current_recorder() is not guard.recorder:
        return None
    return guard


@contextmanager
def unguarded() -> Iterator[None]:
    """Let this context's connections pass any guard (scenarist's own stores)."""
    token = _exempt.set(True)
    try:
        yield
    finally:
        _exempt.reset(token)


def check_request(
    host: str,
    port: int | None,
    path: str,
    method: str | None = None,
    *,
    named: str | None = None,
) -> None:
    """Raise if a guarded run may not send this request (the HTTP seams call this).

    ``host`` and ``port`` are the destination; ``named`` the host the request names
    when it differs (a ``Host`` header, a TLS server name, a proxy's tunnel target).
    From a context with no guard of its own while strict guards are active, an LLM call
    (``method`` and ``path`` say so, or the destination is an LLM API's host) is
    refused, counted on each guard that would not let it pass: nothing can serve it
    here (``http.client``: ``urllib.request``; a request written on a socket)."""
    guard = _active_guard()
    if guard is not None:
        if not guard.allows_request(host, port, method, path, named):
            raise guard.refuse(host, port, path, named=named)
        return
    if not _strict:
        return
    from scenarist.tracing.http import capture

    guards = _stray_guards()
    if not guards or current_recorder() is not None or capture._source.get() is not None:
        return  # a live run's own call, or a recording's
    if not _is_llm(method, path, host, named):
        return
    why = _why(guards)
    errors = [
        g.refuse(host, port, path, stray=why, named=named)
        for g in guards
        if not g.allows_request(host, port, method, path, named)
    ]
    if errors:
        raise errors[0]


def _check_address(address: Any) -> None:
    if not isinstance(address, tuple) or len(address) < 2:
        return  # Unix sockets pass
    guard = _active_guard()
    host, port = str(address[0]), address[1]
    if guard is not None:
        if not guard.allows_request(host, port, None, ""):
            raise guard.refuse(host, port, None)
    elif _strict and _llm_host(host):  # a stray connection to an LLM API by its name
        check_request(host, port, "")


def _connect(sock: socket.socket, address: Any) -> None:
    _check_address(address)
    _originals["connect"](sock, address)


def _connect_ex(sock: socket.socket, address: Any) -> int:
    _check_address(address)
    result: int = _originals["connect_ex"](sock, address)
    return result


_HTTP_STARTS = (
    b"POST ",
    b"GET ",
    b"PUT ",
    b"PATCH ",
    b"DELETE ",
    b"CONNECT ",
    b"HEAD ",
    b"OPTIONS ",
)
"""How a write that starts an HTTP/1.x request (or a proxy tunnel) begins."""


_FIRST = frozenset(start[0] for start in _HTTP_STARTS)
"""Their first bytes: one set lookup turns away almost every other write."""


def _may_start_request(data: Any) -> bool:
    """Whether ``data`` may start an HTTP request: its first byte is a method's (the
    per-write check, kept to an index and a set lookup; ``True`` when unsure)."""
    try:
        first = data[0]  # bytes, bytearray, a memoryview: an int, no copy
    except IndexError:  # nothing to send
        return False
    except Exception:  # not indexable: let the full check (or the send) decide
        return True
    return first in _FIRST or type(first) is not int


def _starts_request(data: Any) -> bool:
    if type(data) is not bytes:
        try:
            data = bytes(memoryview(data)[:8])
        except TypeError:  # not a buffer: the send itself will say so
            return False
    return bool(data.startswith(_HTTP_STARTS))


def host_named(value: str | None) -> str | None:
    """The host name of a ``Host`` header's value (``api.openai.com:443``)."""
    if not value:
        return None
    try:
        return urlsplit("//" + value.strip()).hostname
    except ValueError:
        return None


def _header_host(head: bytes) -> str | None:
    at = head.lower().find(b"\r\nhost:")
    if at < 0:
        return None
    return host_named(head[at + 7 :].split(b"\r\n", 1)[0].decode("latin-1"))


def _check_written(
    peer: tuple[str, int | None] | None, data: Any, tls_name: str | None, request: bool
) -> None:
    """Check a write that starts an HTTP request (``request``) or goes to an LLM host
    by its TLS server name, from the destination ``peer`` (``None``: not connected)."""
    method: str | None = None
    path = ""
    named: str | None = None
    if request:
        head = bytes(memoryview(data)[:2048])
        line = head.split(b"\r\n", 1)[0].split(b" ")
        if len(line) == 3 and line[2].startswith(b"HTTP/"):
            method = line[0].decode("latin-1")
            target = line[1].decode("latin-1")
            if method == "CONNECT":  # an HTTP proxy's tunnel: CONNECT host:port
                named = urlsplit("//" + target).hostname
            elif "://" in target:
                url = urlsplit(target)
                path, named = url.path or "/", url.hostname
            else:
                path, named = target.split("?", 1)[0], _header_host(head)
        elif not _llm_host(tls_name):
            return
    if not _llm_host(named) and _llm_host(tls_name):
        named = tls_name
    host, port = peer if peer is not None else (named or tls_name or "?", None)
    check_request(host, port, path, method, named=named)


def _peer(sock: socket.socket, address: Any = None) -> tuple[str, int | None] | None:
    try:
        peer = sock.getpeername()
    except OSError:
        peer = address
    if not isinstance(peer, tuple) or len(peer) < 2:
        return None  # a Unix socket, not connected
    return str(peer[0]), peer[1]


def _check_sent(sock: socket.socket, data: Any, address: Any = None) -> None:
    """A socket's HTTP request written by hand: from a thread outside every replay's
    context, the bytes that start an LLM call (``POST <an LLM path> HTTP/1.x``, any
    request naming an LLM host in its ``Host`` header or absolute URL, a proxy's
    ``CONNECT <LLM host>:443``) are refused before they are sent, as
    :func:`check_request` refuses ``http.client``'s.

    Only the start of a write is read (its first byte against the methods', the request
    line parsed only after a method matched), and only while a guard is active: the
    patches are off otherwise.
    """
    if _strict and _starts_request(data):
        peer = _peer(sock, address)
        if peer is not None:  # a Unix socket passes
            _check_written(peer, data, None, True)


_llm_names: dict[str | None, bool] = {}
"""TLS server names already judged (an LLM host's or not); emptied with the hosts."""


def _llm_name(name: str | None) -> bool:
    known = _llm_names.get(name)
    if known is None:
        known = _llm_names[name] = _llm_host(name)
    return known


def _check_tls(name: str | None, peer: tuple[str, int | None] | None, data: Any) -> None:
    """A TLS write's plaintext (``SSLSocket``, ``SSLObject``): as :func:`_check_sent`,
    and any write to an LLM host named by the TLS server name (HTTP/2 frames, a request
    without ``Host``)."""
    if _strict:
        request = _starts_request(data)
        if request or _llm_name(name):
            _check_written(peer, data, name, request)


def _llm_host(name: str | None) -> bool:
    return name is not None and is_llm_host(name, _extra_hosts)


def _send(sock: socket.socket, data: Any, *args: Any) -> int:
    if _may_start_request(data):
        _check_sent(sock, data)
    sent: int = _originals["send"](sock, data, *args)
    return sent


def _sendall(sock: socket.socket, data: Any, *args: Any) -> None:
    if _may_start_request(data):
        _check_sent(sock, data)
    _originals["sendall"](sock, data, *args)


def _sendto(sock: socket.socket, data: Any, *args: Any) -> int:
    address = args[-1] if args else None  # sendto(data, address), (data, flags, address)
    _check_address(address)
    _check_sent(sock, data, address)
    sent: int = _originals["sendto"](sock, data, *args)
    return sent


def _sendmsg(sock: socket.socket, buffers: Any, *args: Any) -> int:
    address = args[2] if len(args) > 2 else None  # (buffers, ancdata, flags, address)
    _check_address(address)
    if _strict:
        buffers = buffers if isinstance(buffers, list | tuple) else list(buffers)
        head = b""
        for buffer in buffers:  # the request line may be split over the first buffers
            head += bytes(memoryview(buffer)[: 2048 - len(head)])
            if len(head) >= 2048:
                break
        _check_sent(sock, head, address)
    sent: int = _originals["sendmsg"](sock, buffers, *args)
    return sent


def _ssl_send(sock: ssl.SSLSocket, data: Any, *args: Any) -> int:
    name = sock.server_hostname
    if _may_start_request(data) or _llm_names.get(name) is not False:
        _check_tls(name, _peer(sock), data)
    sent: int = _originals["ssl_send"](sock, data, *args)
    return sent


def _ssl_sendall(sock: ssl.SSLSocket, data: Any, *args: Any) -> None:
    name = sock.server_hostname
    if _may_start_request(data) or _llm_names.get(name) is not False:
        _check_tls(name, _peer(sock), data)
    _originals["ssl_sendall"](sock, data, *args)


def _ssl_object_write(tls: ssl.SSLObject, data: Any) -> int:
    """Plaintext written through a memory-BIO TLS object (asyncio's and anyio's TLS
    streams): checked as a socket's, its destination named by its TLS server name
    (the peer's address is the transport's, unknown here)."""
    name = tls.server_hostname
    if _may_start_request(data) or _llm_names.get(name) is not False:
        _check_tls(name, None, data)
    written: int = _originals["ssl_object_write"](tls, data)
    return written


def _putrequest(
    connection: http.client.HTTPConnection, method: str, url: str, *args: Any, **kwargs: Any
) -> None:
    named: str | None = getattr(connection, "_tunnel_host", None)  # through a proxy
    if "://" in url:  # an absolute URL: a request to an HTTP proxy
        parts = urlsplit(url)
        path, named = parts.path or "/", parts.hostname
    else:
        path = url.split("?", 1)[0]
    check_request(connection.host, connection.port, path, method, named=named)
    _originals["putrequest"](connection, method, url, *args, **kwargs)


def _install() -> None:
    import http.client  # here: a run that never guards the network does not load it
    import ssl  # http.client has loaded it

    _originals["connect"] = socket.socket.connect
    _originals["connect_ex"] = socket.socket.connect_ex
    _originals["send"] = socket.socket.send
    _originals["sendall"] = socket.socket.sendall
    _originals["sendto"] = socket.socket.sendto
    _originals["sendmsg"] = socket.socket.sendmsg
    _originals["ssl_send"] = ssl.SSLSocket.send
    _originals["ssl_sendall"] = ssl.SSLSocket.sendall
    _originals["ssl_object_write"] = ssl.SSLObject.write
    _originals["putrequest"] = http.client.HTTPConnection.putrequest
    socket.socket.connect = _connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign,assignment]
    socket.socket.send = _send  # type: ignore[method-assign,assignment]
    socket.socket.sendall = _sendall  # type: ignore[method-assign,assignment]
    socket.socket.sendto = _sendto  # type: ignore[method-assign,assignment]
    socket.socket.sendmsg = _sendmsg  # type: ignore[method-assign,assignment]
    ssl.SSLSocket.send = _ssl_send  # type: ignore[method-assign,assignment]
    ssl.SSLSocket.sendall = _ssl_sendall  # type: ignore[method-assign,assignment]
    ssl.SSLObject.write = _ssl_object_write  # type: ignore[method-assign,assignment]
    http.client.HTTPConnection.putrequest = _putrequest  # type: ignore[assignment]


def _uninstall() -> None:
    import http.client
    import ssl

    socket.socket.connect = _originals.pop("connect")  # type: ignore[method-assign]
    socket.socket.send = _originals.pop("send")  # type: ignore[method-assign]
    socket.socket.sendall = _originals.pop("sendall")  # type: ignore[method-assign]
    socket.socket.sendto = _originals.pop("sendto")  # type: ignore[method-assign]
    socket.socket.sendmsg = _originals.pop("sendmsg")  # type: ignore[method-assign]
    ssl.SSLSocket.send = _originals.pop("ssl_send")  # type: ignore[method-assign]
    ssl.SSLSocket.sendall = _originals.pop("ssl_sendall")  # type: ignore[method-assign]
    ssl.SSLObject.write = _originals.pop("ssl_object_write")  # type: ignore[method-assign]
    socket.socket.connect_ex = _originals.pop("connect_ex")  # type: ignore[method-assign]
    http.client.HTTPConnection.putrequest = _originals.pop("putrequest")  # type: ignore[method-assign]


@contextmanager
def guard_network(guard: NetworkGuard) -> Iterator[NetworkGuard]:
    """Refuse unserved connections of ``guard.recorder``'s run made in this context."""
    global _active, _strict, _extra_hosts
    named = env_hosts()  # read on entry: a bad value is the caller's error, here
    with _lock:
        if _active == 0:
            _install()
        _active += 1
        _strict = [*_strict, guard]
        _extra_hosts = _hosts(named)
        _llm_names.clear()
    token = _guard.set(guard)
    try:
        yield guard
    finally:
        _guard.reset(token)
        with _lock:
            _strict = [g for g in _strict if g is not guard]
            _extra_hosts = _hosts(named)
            _llm_names.clear()
            _active -= 1
            if _active == 0:
                _uninstall()


def _hosts(named: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*named, *(h for g in _strict for h in g.llm_hosts)]))
