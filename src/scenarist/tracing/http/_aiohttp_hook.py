"""The LLM-call hook of ``aiohttp``: capture and replay.

aiohttp makes its ``ClientResponse`` in one place only: from the bytes its connection's
protocol (``ResponseHandler``, an ``asyncio.Protocol``) receives. So the hook sits where
aiohttp gets a connection, ``BaseConnector.connect``. While a capture or a response
source is active (see ``capture``), an LLM request gets a connection of ours: an
in-memory transport (:class:`_Exchange`) under aiohttp's own protocol. aiohttp writes the
request into it as it would into a socket; once the request is complete it takes the
path an httpx request takes (its span from ``_llm_call``, then the active source: a
cassette, a recorded trace, or the network), and the response is written back into the
protocol as HTTP/1.1, each chunk as it arrives. aiohttp parses it into its own response,
so ``json()``, ``text()``, ``content`` iteration, ``raise_for_status``, redirects and
timeouts behave as over a socket, and a served response never opened one.

Going live takes the connector's original ``connect`` (its pool, TLS, proxy, limits) and
sends the request's bytes as aiohttp wrote them; the live body is read decoded, so the
caller gets the same bytes without ``content-encoding``. A hooked response is ended for
the caller only once its stream is over (span closed, cassette written), and aiohttp
reads ahead as it does from a socket: a response the caller never reads is still
received, recorded and closed; one released before its end is closed early (the span
and the cassette keep what arrived). Not captured (sent as is): requests that are not LLM
calls, and LLM requests waiting for ``100-continue`` or with a compressed body; a strict
replay refuses them here, naming host and path (a pooled connection would never reach
the socket guard).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from http import HTTPStatus
from typing import Any

from aiohttp import client_exceptions
from aiohttp.client_proto import ResponseHandler
from aiohttp.connector import BaseConnector, Connection

from scenarist.tracing.http import _http_shim as shim
from scenarist.tracing.http import _llm_payloads as payloads
from scenarist.tracing.http import capture
from scenarist.tracing.http._httpx_hook import streams_for
from scenarist.tracing.http._llm_call import LLMCall
from scenarist.tracing.http._network_guard import check_request, host_named, stray_source
from scenarist.tracing.http._throttle import current_throttle
from scenarist.tracing.recorder import current_recorder

__all__ = ["patch"]

Connect = Callable[..., Awaitable[Connection]]

_ConnectTimeout: type[Exception] = getattr(
    client_exceptions, "ConnectionTimeoutError", client_exceptions.ServerTimeoutError
)  # aiohttp 3.10+, else its base


class _Protocol(ResponseHandler):
    """aiohttp's protocol, keeping the response parameters a live call reuses."""

    params: dict[str, Any]

    def set_response_params(self, **params: Any) -> None:
        self.params = params
        super().set_response_params(**params)


class _Connection(Connection):
    """What aiohttp gets for a hooked call: released or closed, it ends the exchange
    (never pooled: nothing but this call ever goes through it)."""

    def __init__(self, connector: BaseConnector, key: Any, exchange: _Exchange) -> None:
        super().__init__(connector, key, exchange.protocol, exchange.loop)
        self._exchange = exchange

    def close(self) -> None:
        self._notify_release()
        if self._protocol is not None:
            self._protocol = None
            self._exchange.end()

    release = close


class _LiveBody(shim.AsyncByteStream):
    """A live response's decoded body as it arrives; its connection released at the end."""

    def __init__(self, connection: Connection, payload: Any) -> None:
        self._connection, self._payload = connection, payload

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._payload.iter_any():
                yield chunk
        except BaseException:
            self._connection.close()
            raise
        self._connection.release()

    async def aclose(self) -> None:
        self._connection.close()
        if not self._payload.is_eof():  # a read waiting on it would never be woken
            self._payload.set_exception(client_exceptions.ClientConnectionError("closed"))


def _dechunk(data: bytes) -> bytes | None:
    """A chunked body decoded, or ``None`` while its last chunk has not been written."""
    body, at = bytearray(), 0
    while (end := data.find(b"\r\n", at)) >= 0:
        size = int(data[at:end].split(b";", 1)[0], 16)
        if size == 0:
            return bytes(body) if data.find(b"\r\n\r\n", end) >= 0 else None
        start = end + 2
        if len(data) < start + size + 2:
            return None
        body += data[start : start + size]
        at = start + size + 2
    return None


def _head(status: int, headers: list[tuple[str, str]]) -> bytes:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = ""
    lines = [f"HTTP/1.1 {status} {reason}"]
    for name, value in headers:  # a recording is data: no header may split the head
        lines.append(f"{name}: {value}".replace("\r", " ").replace("\n", " "))
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8")


class _Exchange(asyncio.Transport):
    """One hooked LLM call: the in-memory transport under aiohttp's protocol.

    aiohttp writes the request into it (:meth:`write`); a task made at connect time, in
    the caller's context (its run, its source, its replay guard), waits for the complete
    request, answers it and writes the response into the protocol, pausing when aiohttp
    pauses reading. Ending the connection before the response is complete stops it
    (:meth:`end`).
    """

    def __init__(self, connector: BaseConnector, req: Any, connect: Callable[[], Any]) -> None:
        super().__init__()
        self.loop = asyncio.get_running_loop()
        self.protocol = _Protocol(self.loop)
        self._req, self._connect = req, connect
        self._raw = bytearray()
        self._head_end = -1
        self._length: int | None = None
        self._chunked = False
        self._body: bytes | None = None
        self._requested = self.loop.create_future()
        self._reading = asyncio.Event()
        self._reading.set()
        self._closing = False
        self._complete = False
        self._stream: Any = None
        self._closer: asyncio.Task[None] | None = None  # a stream whose aclose must wait
        self.protocol.connection_made(self)
        self.connection = _Connection(connector, req.connection_key, self)
        self._task = self.loop.create_task(self._run())

    # -- the transport aiohttp writes the request to ---------------------------------------

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._body is not None:
            return
        self._raw += data
        if self._head_end < 0:
            end = self._raw.find(b"\r\n\r\n")
            if end < 0:
                return
            self._head_end = end + 4
            for line in bytes(self._raw[:end]).split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                name, value = name.strip().lower(), value.strip()
                if name == b"content-length":
                    self._length = int(value)
                elif name == b"transfer-encoding" and b"chunked" in value.lower():
                    self._chunked = True
        rest = bytes(self._raw[self._head_end :])
        if self._chunked:
            self._body = _dechunk(rest)
        elif len(rest) >= (self._length or 0):
            self._body = rest[: self._length or 0]
        if self._body is not None and not self._requested.done():
            self._requested.set_result(None)

    def writelines(self, chunks: Any) -> None:
        for chunk in chunks:
            self.write(chunk)

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if not self._closing:
            self._closing = True
            if not self.loop.is_closed():  # a response collected after its loop ended
                self.loop.call_soon(self.protocol.connection_lost, None)

    def abort(self) -> None:
        self.close()

    def pause_reading(self) -> None:
        self._reading.clear()

    def resume_reading(self) -> None:
        self._reading.set()

    def is_reading(self) -> bool:
        return self._reading.is_set()

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default

    # -- the call --------------------------------------------------------------------------

    def end(self) -> None:
        """The connection was released or closed: stop a response still coming.

        Before the answer, the call is cancelled. During its body, the stream is closed
        now, as when an httpx response is closed early: the span and the cassette keep
        what was received, and a live read the task waits on ends.
        """
        if not self._complete and not self.loop.is_closed():
            if self._stream is None:
                self._task.cancel()
            else:
                self._close_stream()
        self._reading.set()
        self.protocol.close()

    def _close_stream(self) -> None:
        """``await stream.aclose()``, run to its end here: the streams of the capture, the
        cassettes and the live body never wait in it. One that does finishes in a task."""
        closing = self._stream.aclose()
        try:
            closing.send(None)
        except StopIteration:
            return
        closing.close()
        self._closer = self.loop.create_task(self._stream.aclose())

    def _feed(self, data: bytes) -> None:
        if not self._closing:
            self.protocol.data_received(data)

    async def _run(self) -> None:
        try:
            await self._requested
            await self._answer()
        except asyncio.CancelledError:
            pass  # the caller ended the connection (or the loop is closing)
        except BaseException as error:  # the caller sees it as the connection's
            if not self._closing:
                self._closing = True
                self.protocol.connection_lost(error)
            if not isinstance(error, Exception):
                raise

    async def _answer(self) -> None:
        recorder, source = current_recorder(), capture._source.get()
        assert self._body is not None
        request = shim.Request(self._req.method, str(self._req.url), self._body)
        endpoint = payloads.classify(request.method, request.url.path)
        assert endpoint is not None
        call = LLMCall(recorder, endpoint, request, shim) if recorder is not None else None
        throttle = current_throttle()

        async def send() -> shim.Response:
            if throttle is None:
                return await self._send()
            assert endpoint is not None
            response: shim.Response = await throttle.send_async(endpoint, request, self._send)
            return response

        try:
            if source is None:
                response = await send()
            else:
                response = await source.respond_async(request, shim, send)
        except BaseException as error:
            if call is not None:
                call.finish(error)
            if isinstance(error, Exception):
                self.protocol.set_exception(error)  # what the caller's request raises
                return
            raise
        stream = response.stream
        if call is not None:
            call.headers(response)
            stream = streams_for(shim)[1](stream, call)
        await self._respond(response, stream)

    async def _send(self) -> shim.Response:
        """The call made live, over a connection of the original connector."""
        try:
            live = await self._connect()
        except TimeoutError as error:  # what aiohttp raises for its own connects
            raise _ConnectTimeout(f"Connection timeout to host {self._req.url}") from error
        try:
            protocol, transport = live.protocol, live.transport
            assert protocol is not None
            assert transport is not None
            params = getattr(self.protocol, "params", {})
            protocol.set_response_params(**{**params, "timer": None, "auto_decompress": True})
            transport.write(bytes(self._raw))
            protocol.start_timeout()
            while True:
                message, body = await protocol.read()
                if not 100 <= message.code < 200 or message.code == 101:
                    break
        except BaseException:
            live.close()
            raise
        headers = shim.decoded_headers(message.headers.items())
        return shim.Response(message.code, headers=headers, stream=_LiveBody(live, body))

    async def _respond(self, response: Any, stream: Any) -> None:
        """Write the response into the protocol; the body's end only after the stream's."""
        headers = [(k, v) for k, v in response.headers.items() if k not in shim.HOP_HEADERS]
        length = response.headers.get("content-length")
        if length is not None:
            headers.append(("content-length", length))
            remaining: int | None = int(length)
        else:
            headers.append(("transfer-encoding", "chunked"))
            remaining = None
        head = _head(response.status_code, headers)
        self._stream = stream
        if remaining != 0:  # an empty body ends with its head: that waits too
            self._feed(head)
            head = b""
        held = b""
        try:
            async for chunk in stream:
                if not chunk:
                    continue
                await self._reading.wait()
                if self._closing:  # ended by the caller (or by aiohttp, on a bad response)
                    await stream.aclose()
                    return
                if remaining is None:
                    self._feed(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                elif len(chunk) < remaining:
                    remaining -= len(chunk)
                    self._feed(chunk)
                else:  # the last bytes end the response: held until the stream is over
                    held += chunk
        except BaseException:
            await stream.aclose()
            raise
        self._complete = True
        self._feed(head + (held if remaining is not None else b"0\r\n\r\n"))


def _hook(original: Connect) -> Connect:
    async def connect(  # aiohttp's own signature (it passes timeout= by name)
        connector: BaseConnector,
        req: Any,
        traces: Any,
        timeout: Any,  # noqa: ASYNC109
    ) -> Connection:
        stray = None
        if (
            current_recorder() is None
            and capture._source.get() is None
            and current_throttle() is None
        ):
            stray = stray_source()  # outside any run or replay: a strict one may serve it
            if stray is None:
                return await original(connector, req, traces, timeout)
            if payloads.classify(req.method, req.url.path) is None:  # an LLM host's?
                url, named = req.url, host_named(req.headers.get("host"))
                check_request(url.host or "", url.port, url.path, req.method, named=named)
                return await original(connector, req, traces, timeout)
        url = req.url
        if (
            payloads.classify(req.method, url.path) is None
            or req.headers.get("expect", "").lower() == "100-continue"
            or req.compress
        ):  # a strict replay (trace-backed or cassette) refuses what nothing serves
            named = host_named(req.headers.get("host"))
            check_request(url.host or "", url.port, url.path, req.method, named=named)
            return await original(connector, req, traces, timeout)
        token = None if stray is None else capture._source.set(stray)
        try:  # the exchange's task runs in a copy of this context: with the stray source
            exchange = _Exchange(connector, req, lambda: original(connector, req, traces, timeout))
        finally:
            if token is not None:
                capture._source.reset(token)
        return exchange.connection

    connect.__wrapped__ = original  # type: ignore[attr-defined]
    return connect


def patch(aiohttp: Any) -> list[tuple[type, str, Any]]:
    """Hook ``aiohttp``'s connectors; the patches made, to undo them."""
    cls = aiohttp.connector.BaseConnector
    original = cls.__dict__["connect"]
    cls.connect = _hook(original)
    return [(cls, "connect", original)]
