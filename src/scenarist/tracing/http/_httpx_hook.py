"""The LLM-call hooks on ``httpx2`` and ``httpx`` transports (see ``capture``).

Loaded when a capture first finds one of the two libraries imported, not when a run
starts: a run whose agent makes no HTTP call never pays for the LLM-call machinery
(payload formats, redaction, pricing, the network guard), about 70 ms of imports.
``streams_for`` also serves the ``urllib3`` and ``aiohttp`` hooks, which hand their
bodies over as the same byte-stream types.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from scenarist.tracing.http import _llm_payloads as payloads
from scenarist.tracing.http import capture
from scenarist.tracing.http._llm_call import REPLAYED, LLMCall
from scenarist.tracing.http._network_guard import check_request, host_named, stray_source
from scenarist.tracing.http._throttle import current_throttle
from scenarist.tracing.recorder import current_recorder

__all__ = ["patch", "streams_for"]

_STREAM_TYPES: dict[str, tuple[type, type]] = {}


def patch(module: Any) -> list[tuple[type, str, Any]]:
    """Hook ``module``'s (``httpx2`` or ``httpx``) sync and async transports; the
    ``(class, attribute, original)`` triples to restore."""
    sync_stream, async_stream = streams_for(module)
    patches: list[tuple[type, str, Any]] = []
    for cls, attr, hook in (
        (module.HTTPTransport, "handle_request", _sync_hook),
        (module.AsyncHTTPTransport, "handle_async_request", _async_hook),
    ):
        original = cls.__dict__[attr]
        setattr(cls, attr, hook(original, module, sync_stream, async_stream))
        patches.append((cls, attr, original))
    return patches


def _check(request: Any) -> None:
    """Refuse, under a strict guard, a request nothing served (a path the capture does
    not know), named by its URL and its ``Host`` header."""
    url = request.url
    named = host_named(request.headers.get("host"))
    check_request(url.host, url.port, url.path, request.method, named=named)


def _sync_hook(original: Callable[..., Any], module: Any, stream: type, _: type) -> Any:
    def handle_request(transport: Any, request: Any) -> Any:
        recorder, source, throttle = current_recorder(), capture._source.get(), current_throttle()
        if recorder is None and source is None and throttle is None:
            source = stray_source()  # outside any run or replay: a strict one may serve it
            if source is None:
                return original(transport, request)
            if payloads.classify(request.method, request.url.path) is None:
                _check(request)  # an LLM API's host, by destination
                return original(transport, request)
        endpoint = payloads.classify(request.method, request.url.path)
        if endpoint is None:
            _check(request)  # a strict replay (trace or cassette) refuses what nothing serves
            return original(transport, request)
        call = LLMCall(recorder, endpoint, request, module) if recorder is not None else None

        def send() -> Any:
            if throttle is None:
                return original(transport, request)
            return throttle.send(endpoint, request, lambda: original(transport, request))

        try:
            response = send() if source is None else source.respond(request, module, send)
        except BaseException as error:
            if call is not None:
                call.finish(error)
            raise
        if call is not None:
            _follow(call, response, module, stream)
        return response

    handle_request.__wrapped__ = original  # type: ignore[attr-defined]
    return handle_request


def _async_hook(original: Callable[..., Any], module: Any, _: type, stream: type) -> Any:
    async def handle_async_request(transport: Any, request: Any) -> Any:
        recorder, source, throttle = current_recorder(), capture._source.get(), current_throttle()
        if recorder is None and source is None and throttle is None:
            source = stray_source()
            if source is None:
                return await original(transport, request)
            if payloads.classify(request.method, request.url.path) is None:
                _check(request)  # an LLM API's host, by destination
                return await original(transport, request)
        endpoint = payloads.classify(request.method, request.url.path)
        if endpoint is None:
            _check(request)
            return await original(transport, request)
        call = LLMCall(recorder, endpoint, request, module) if recorder is not None else None

        async def send() -> Any:
            if throttle is None:
                return await original(transport, request)
            return await throttle.send_async(
                endpoint, request, lambda: original(transport, request)
            )

        try:
            if source is None:
                response = await send()
            else:
                response = await source.respond_async(request, module, send)
        except BaseException as error:
            if call is not None:
                call.finish(error)
            raise
        if call is not None:
            _follow(call, response, module, stream)
        return response

    handle_async_request.__wrapped__ = original  # type: ignore[attr-defined]
    return handle_async_request


def _follow(call: LLMCall, response: Any, module: Any, stream: type) -> None:
    """Give ``call`` the response: a replayed body already read is taken whole now (its
    span closes here); any other body as the caller reads it, through ``stream``."""
    call.headers(response)
    if response.extensions.get(REPLAYED):
        try:
            body = response.content
        except module.ResponseNotRead:  # a served stream (events): read by the caller
            pass
        else:
            call.feed(body)
            call.finish()
            return
    response.stream = stream(response.stream, call)


def streams_for(module: Any) -> tuple[type, type]:
    """Stream wrappers deriving from ``module``'s byte-stream bases (clients check)."""
    cached = _STREAM_TYPES.get(module.__name__)
    if cached is not None:
        return cached

    class CapturedStream(module.SyncByteStream):  # type: ignore[misc]
        def __init__(self, inner: Any, call: LLMCall) -> None:
            self._inner, self._call = inner, call

        def __iter__(self) -> Iterator[bytes]:
            try:
                for chunk in self._inner:
                    self._call.feed(chunk)
                    yield chunk
            except GeneratorExit:
                raise
            except BaseException as error:
                self._call.finish(error)
                raise
            self._call.finish()

        def close(self) -> None:
            try:
                self._inner.close()
            finally:
                self._call.finish(early=True)

    class CapturedAsyncStream(module.AsyncByteStream):  # type: ignore[misc]
        def __init__(self, inner: Any, call: LLMCall) -> None:
            self._inner, self._call = inner, call

        async def __aiter__(self) -> AsyncIterator[bytes]:
            try:
                async for chunk in self._inner:
                    self._call.feed(chunk)
                    yield chunk
            except GeneratorExit:
                raise
            except BaseException as error:
                self._call.finish(error)
                raise
            self._call.finish()

        async def aclose(self) -> None:
            try:
                await self._inner.aclose()
            finally:
                self._call.finish(early=True)

    _STREAM_TYPES[module.__name__] = types = (CapturedStream, CapturedAsyncStream)
    return types
