"""The LLM-call hook of ``urllib3`` (and so of ``requests``): capture and replay.

``HTTPConnectionPool.urlopen`` is where both ``requests`` (``HTTPAdapter.send``) and
plain ``urllib3`` (``PoolManager.request``) send a request. While a capture or a
response source is active (see ``capture``), an LLM request there goes through the
same path as an httpx one: its span (``_llm_call``), then the active source (a cassette,
a recorded trace) or the network. The live response is read decoded (the caller gets
the same bytes, without ``content-encoding``), passed through as it arrives, and the
caller receives a ``urllib3.HTTPResponse`` over that stream, or over the recorded one.
Other requests are left alone (the network guard sees them in ``http.client``).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from http import HTTPStatus
from typing import Any

from scenarist.tracing.http import _http_shim as shim
from scenarist.tracing.http import _llm_payloads as payloads
from scenarist.tracing.http._llm_call import LLMCall

__all__ = ["patch"]

_CHUNK = 64 * 1024

_sending: ContextVar[bool] = ContextVar("scenarist_urllib3_sending", default=False)
"""Set while a hooked call is sent: ``urlopen`` retries and follows redirects by calling
itself, and those calls are the hooked call's own (one span, one recording)."""


class _LiveBody(shim.SyncByteStream):
    """A live ``urllib3`` response's decoded body, chunk by chunk as it arrives."""

    def __init__(self, response: Any) -> None:
        self._response = response

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._response.stream(_CHUNK, decode_content=True)
        finally:
            self._response.release_conn()

    def close(self) -> None:
        self._response.release_conn()


class _Reader(io.RawIOBase):
    """A file over a byte stream, what ``urllib3.HTTPResponse`` reads its body from."""

    def __init__(self, stream: Any) -> None:
        super().__init__()
        self._stream, self._chunks, self._rest = stream, iter(stream), b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._rest:
            try:
                self._rest = next(self._chunks)
            except StopIteration:  # closed at its end, as http.client's response is: a
                self.close()  # read of the whole rest (``stream(None)``) loops until then
                return 0
        size = min(len(buffer), len(self._rest))
        buffer[:size] = self._rest[:size]
        self._rest = self._rest[size:]
        return size

    def close(self) -> None:
        if not self.closed:
            try:
                self._stream.close()
            finally:
                super().close()


def _body(body: Any) -> bytes | None:
    if body is None:
        return b""
    if isinstance(body, bytes | bytearray | memoryview):
        return bytes(body)
    if isinstance(body, str):
        return body.encode("utf-8")
    return None  # a file or a generator: sent as is, not captured


def _url(pool: Any, url: str) -> str:
    if "://" in url:
        return url
    default = {"http": 80, "https": 443}.get(pool.scheme)
    port = "" if pool.port in (None, default) else f":{pool.port}"
    host = f"[{pool.host}]" if ":" in pool.host else pool.host  # IPv6: urllib3 unbrackets it
    return f"{pool.scheme}://{host}{port}{url}"


def _to_urllib3(urllib3: Any, response: Any, method: str, url: str, preload: bool) -> Any:
    headers = [(k, v) for k, v in response.headers.items() if k not in shim.HOP_HEADERS]
    if "content-length" in response.headers and not response.headers.get("content-encoding"):
        headers.append(("content-length", response.headers["content-length"]))
    try:
        reason = HTTPStatus(response.status_code).phrase
    except ValueError:
        reason = ""
    return urllib3.HTTPResponse(
        body=_Reader(response.stream),
        headers=urllib3.HTTPHeaderDict(headers),
        status=response.status_code,
        reason=reason,
        preload_content=preload,
        decode_content=False,
        request_method=method,
        request_url=url,
        enforce_content_length=False,
    )


def _hook(original: Callable[..., Any], urllib3: Any) -> Any:
    from scenarist.tracing.http import capture
    from scenarist.tracing.http._httpx_hook import streams_for
    from scenarist.tracing.http._network_guard import stray_source
    from scenarist.tracing.http._throttle import current_throttle
    from scenarist.tracing.recorder import current_recorder

    stream_type, _ = streams_for(shim)

    def urlopen(
        pool: Any,
        method: str,
        url: str,
        body: Any = None,
        headers: Any = None,
        *args: Any,  # retries, redirect, assert_same_host: urlopen retries positionally
        **kw: Any,
    ) -> Any:
        recorder, source, throttle = current_recorder(), capture._source.get(), current_throttle()
        if _sending.get():
            return original(pool, method, url, body, headers, *args, **kw)
        if recorder is None and source is None and throttle is None:
            source = stray_source()  # outside any run or replay: a strict one may serve it
            if source is None:
                return original(pool, method, url, body, headers, *args, **kw)
        full = _url(pool, url)
        request = shim.Request(method, full, b"")
        endpoint = payloads.classify(request.method, request.url.path)
        content = _body(body)
        if endpoint is None or content is None:
            return original(pool, method, url, body, headers, *args, **kw)
        request.content = content
        preload = bool(kw.pop("preload_content", True))
        kw.pop("decode_content", None)

        def send_live() -> Any:
            token = _sending.set(True)
            try:
                live = original(
                    pool, method, url, body, headers, *args, preload_content=False, **kw
                )
            finally:
                _sending.reset(token)
            decoded = shim.decoded_headers(live.headers.items())
            return shim.Response(live.status, headers=decoded, stream=_LiveBody(live))

        def send() -> Any:
            if throttle is None:
                return send_live()
            assert endpoint is not None
            return throttle.send(endpoint, request, send_live)

        call = LLMCall(recorder, endpoint, request, shim) if recorder is not None else None
        try:
            response = send() if source is None else source.respond(request, shim, send)
        except BaseException as error:
            if call is not None:
                call.finish(error)
            raise
        if call is not None:
            call.headers(response)
            response.stream = stream_type(response.stream, call)
        return _to_urllib3(urllib3, response, method, full, preload)

    urlopen.__wrapped__ = original  # type: ignore[attr-defined]
    return urlopen


def patch(urllib3: Any) -> list[tuple[type, str, Any]]:
    """Hook ``urllib3``'s connection pools; the patches made, to undo them."""
    cls = urllib3.connectionpool.HTTPConnectionPool
    original = cls.__dict__["urlopen"]
    cls.urlopen = _hook(original, urllib3)
    return [(cls, "urlopen", original)]
