"""The HTTP side of a cassette: responses served from a recording, and live ones taped.

Both work for ``httpx`` and ``httpx2`` alike: the stream classes are made once per
library, deriving from its sync and async byte-stream bases (its clients check), so one
served or taped response works with sync and async clients.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, NamedTuple

from scenarist.redaction import redact
from scenarist.replay._request_key import BODY_DEPTH
from scenarist.tracing.http import _llm_payloads as payloads
from scenarist.tracing.http._llm_call import REPLAYED, served_json

__all__ = ["Served", "prepare", "respond", "serve", "stored_response", "tap"]

KEPT_HEADERS = ("content-type", "x-request-id", "request-id", "x-should-retry")
"""Response headers a cassette keeps: what SDKs read back. Others are never written.
``x-should-retry`` decides whether the OpenAI and Anthropic SDKs retry an error, so which
calls a replay makes; ``retry-after`` only how long they wait, which a replay need not."""

_classes: dict[str, tuple[type, type]] = {}
_READ_AT_ONCE = frozenset({"httpx", "httpx2"})
"""Libraries whose ``Response(content=...)`` holds its body already read: a served body
that is not a stream is given so (the capture takes it whole, no stream to walk)."""
_encode = json.JSONEncoder(ensure_ascii=False).encode

Done = Callable[[list[bytes] | None], None]
"""Called once when a taped response ends: its body chunks, or ``None`` if it failed."""


_NOT_JSON: Any = object()


class Served(NamedTuple):
    """A recorded response ready to serve: what :func:`respond` builds a response from."""

    status: int
    headers: dict[str, str]
    """The kept headers, with ``content-length`` for a body served whole (never mutated:
    a response copies what it is given)."""
    chunks: list[bytes]
    """The body: one chunk, or one per event of a stream."""
    whole: bool
    """Not a stream of events: the body is one chunk, given read for httpx and httpx2."""
    parsed: Any = _NOT_JSON
    """The recorded JSON the body was encoded from (what parsing it gives), if it was."""


def prepare(response: dict[str, Any]) -> Served:
    """``response`` (a recorded one, as a cassette line holds it) ready to serve: its body
    encoded once, so serving it again costs only the response object."""
    headers = dict(response["headers"])
    whole = "events" not in response
    if not whole:
        chunks = [event.encode() + b"\n\n" for event in response["events"]]
    elif "body" in response:
        chunks = [_body_bytes(response["body"])]
    elif "text" in response:
        chunks = [response["text"].encode()]
    else:
        chunks = [base64.b64decode(response["body_base64"])]
    if whole:
        headers["content-length"] = str(len(chunks[0]))
    return Served(response["status"], headers, chunks, whole, response.get("body", _NOT_JSON))


def serve(module: Any, response: dict[str, Any]) -> Any:
    """A ``module.Response`` replaying a recorded response, marked as replayed."""
    return respond(module, prepare(response))


def respond(module: Any, served: Served) -> Any:
    """A ``module.Response`` replaying ``served`` (see :func:`prepare`), marked as replayed."""
    if served.whole and module.__name__ in _READ_AT_ONCE:
        # the body given whole, as a MockTransport does
        if served.parsed is not _NOT_JSON:  # the capture takes it, not parsing it again
            served_json(served.chunks[0], served.parsed)
        return module.Response(
            served.status,
            headers=served.headers,
            content=served.chunks[0],
            extensions={REPLAYED: True},
        )
    replayed, _ = _stream_classes(module)
    return module.Response(
        served.status,
        headers=served.headers,
        stream=replayed(served.chunks),
        extensions={REPLAYED: True},
    )


def _body_bytes(body: Any) -> bytes:
    text = _encode(body)
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate (the provider sent a \ud800 escape)
        return json.dumps(body).encode()  # escaped again, as it came


def tap(module: Any, response: Any, done: Done) -> Any:
    """``response`` with its body stream copied to ``done`` as the caller reads it."""
    _, taped = _stream_classes(module)
    response.stream = taped(response.stream, done)
    return response


def stored_response(
    module: Any, status: int, headers: Any, chunks: list[bytes], names: frozenset[str]
) -> dict[str, Any]:
    """What a cassette keeps of a response: status, a few headers, the decoded body."""
    kept = {name: headers[name] for name in KEPT_HEADERS if name in headers}
    body = b"".join(chunks)
    encoding = headers.get("content-encoding", "").strip().lower()
    if body and encoding not in ("", "identity"):  # stored decoded: replay serves it plain
        body = module.Response(200, headers={"content-encoding": encoding}, content=body).read()
    stored: dict[str, Any] = {"status": status, "headers": kept}
    if "text/event-stream" in headers.get("content-type", ""):
        parser = payloads.SSEParser()
        blocks = parser.feed(body) + parser.flush()
        stored["events"] = [block.decode("utf-8", "replace") for block in blocks]
        return stored
    try:
        stored["body"] = redact(json.loads(body), names, depth=BODY_DEPTH)
    except ValueError:
        try:
            stored["text"] = body.decode("utf-8")
        except UnicodeDecodeError:
            stored["body_base64"] = base64.b64encode(body).decode("ascii")
    return stored


def _stream_classes(module: Any) -> tuple[type, type]:
    cached = _classes.get(module.__name__)
    if cached is not None:
        return cached

    class ReplayedStream(module.SyncByteStream, module.AsyncByteStream):  # type: ignore[misc]
        """Recorded chunks (one per event for a stream), never touching the network."""

        def __init__(self, chunks: list[bytes]) -> None:
            self._chunks = chunks

        def __iter__(self) -> Iterator[bytes]:
            yield from self._chunks

        async def __aiter__(self) -> AsyncIterator[bytes]:
            for chunk in self._chunks:
                yield chunk

    class TapedStream(module.SyncByteStream, module.AsyncByteStream):  # type: ignore[misc]
        """A live body passed through as it arrives, and kept for the cassette."""

        def __init__(self, inner: Any, done: Done) -> None:
            self._inner, self._done = inner, done
            self._chunks: list[bytes] = []
            self._ended = False

        def _end(self, chunks: list[bytes] | None) -> None:
            if not self._ended:
                self._ended = True
                self._done(chunks)
                self._chunks = []  # stored now: the cassette holds this body until it ends

        def __iter__(self) -> Iterator[bytes]:
            try:
                for chunk in self._inner:
                    self._chunks.append(chunk)
                    yield chunk
            except GeneratorExit:
                raise
            except BaseException:
                self._end(None)
                raise
            self._end(self._chunks)

        async def __aiter__(self) -> AsyncIterator[bytes]:
            try:
                async for chunk in self._inner:
                    self._chunks.append(chunk)
                    yield chunk
            except GeneratorExit:
                raise
            except BaseException:
                self._end(None)
                raise
            self._end(self._chunks)

        def abandoned(self) -> None:
            """The cassette is left with this body neither read to its end nor closed (an
            agent returning from inside its stream loop): kept as read, as when closed."""
            self._end(self._chunks)

        def close(self) -> None:
            try:
                self._inner.close()
            finally:
                self._end(self._chunks)  # closed early: what was read is what replays

        async def aclose(self) -> None:
            try:
                await self._inner.aclose()
            finally:
                self._end(self._chunks)

    _classes[module.__name__] = classes = (ReplayedStream, TapedStream)
    return classes
