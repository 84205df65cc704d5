"""Compressed request bodies: ``Content-Encoding: gzip`` and ``deflate``, on every route.

OpenTelemetry exporters compress by default (the Collector's ``otlphttp`` sends gzip; the
SDK's exporter does when told), and clients of the JSON API may too. :class:`Decompress`
sits inside :class:`~scenarist.server._errors.BodySizeLimit` (which counts the bytes as
sent) and inflates the body as it arrives, a chunk at a time, never more than the limit
plus one byte: the limit is checked again **after** decompression, so a small "gzip bomb"
is answered 413 naming the limit, and memory stays bounded by it. The routes behind see
a plain body (``Content-Encoding`` and ``Content-Length`` removed from the headers).

- ``gzip`` (and ``x-gzip``): one member or several, one after the other.
- ``deflate``: HTTP's deflate is zlib-wrapped (RFC 9110); raw deflate, which some clients
  send, is accepted too (told apart by the first bytes).
- ``identity`` or no header: the body as it is.
- another coding (``br``, ``zstd``...) or several codings: 415 naming the supported ones;
  a body that is not what its coding says: 400.
"""

from __future__ import annotations

import zlib

from scenarist.server._errors import error_response

try:
    from starlette.exceptions import HTTPException
    from starlette.types import ASGIApp, Message, Receive, Scope, Send
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    from scenarist._extras import missing_extra

    raise missing_extra("server", exc) from exc

__all__ = ["SUPPORTED_ENCODINGS", "Decompress"]

SUPPORTED_ENCODINGS = ("gzip", "deflate", "identity")
_ALIASES = {"x-gzip": "gzip"}
_GZIP_MAGIC = b"\x1f\x8b"
_STEP = 256 * 1024  # inflated at most this much a call: memory grows with the body only


class _Inflater:
    """Inflate ``coding`` a chunk at a time; :meth:`feed` returns the new output."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self._inflater: zlib._Decompress | None = None
        self._head = b""  # deflate: the first bytes, until raw and zlib can be told apart

    def _start(self, data: bytes) -> zlib._Decompress:
        if self.coding == "gzip":
            return zlib.decompressobj(wbits=31)
        # zlib-wrapped deflate starts with a header whose 16-bit value is a multiple of 31
        wrapped = len(data) >= 2 and (data[0] & 0x0F) == 8 and (data[0] << 8 | data[1]) % 31 == 0
        return zlib.decompressobj(wbits=15 if wrapped else -15)

    def feed(self, data: bytes, room: int) -> bytes:
        """Up to ``room`` bytes more of output (the caller refuses the body past it)."""
        if self._inflater is None:
            self._head += data
            if len(self._head) < 2 and data:
                return b""
            self._inflater, data = self._start(self._head), self._head
        out: list[bytes] = []
        size = 0
        while size < room:
            step = min(_STEP, room - size)
            chunk = self._inflater.decompress(data, step)
            out.append(chunk)
            size += len(chunk)
            if self._inflater.eof:  # gzip: another member may follow
                data = self._inflater.unused_data
                if data and self.coding == "gzip" and data[:2] == _GZIP_MAGIC:
                    self._inflater = zlib.decompressobj(wbits=31)
                    continue
                if data.strip(b"\x00"):
                    raise zlib.error("data after the end of the compressed stream")
                break
            data = self._inflater.unconsumed_tail
            if not data and len(chunk) < step:  # all input read, all output given
                break
        return b"".join(out)

    def finish(self) -> None:
        """Raise if the body ended before its compressed stream did."""
        if self._inflater is None:
            if self._head:
                raise zlib.error("a compressed body of one byte")
            return
        if not self._inflater.eof:
            raise zlib.error("the compressed body ends before its end marker (truncated?)")


def _codings(value: str) -> list[str]:
    names = [_ALIASES.get(n.strip().lower(), n.strip().lower()) for n in value.split(",")]
    return [name for name in names if name and name != "identity"]


class Decompress:
    """The module docstring's rules as ASGI middleware; ``max_bytes`` bounds the body
    after decompression (the server's body limit)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _too_large(self) -> str:
        return (
            f"the request body, decompressed, is larger than this server's limit of "
            f"{self.max_bytes} bytes"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw = [v for k, v in scope.get("headers", []) if k == b"content-encoding"]
        codings = _codings(b",".join(raw).decode("latin-1"))
        if not codings:
            await self.app(scope, receive, send)
            return
        if len(codings) > 1 or codings[0] not in SUPPORTED_ENCODINGS:
            shown = ", ".join(codings)
            await error_response(
                415,
                f"this server reads request bodies sent with Content-Encoding gzip, deflate "
                f"or identity, not {shown!r}",
            )(scope, receive, send)
            return
        inflater = _Inflater(codings[0])
        total = 0
        done = False

        async def inflated() -> Message:
            nonlocal total, done
            if done:
                return await receive()
            message = await receive()
            if message["type"] != "http.request":
                return message
            more = bool(message.get("more_body"))
            try:
                body = inflater.feed(message.get("body", b""), self.max_bytes + 1 - total)
                if not more:
                    inflater.finish()
            except zlib.error as exc:
                raise HTTPException(
                    400,
                    f"the request body is not valid {codings[0]} (Content-Encoding): {exc}",
                ) from None
            total += len(body)
            if total > self.max_bytes:
                raise HTTPException(413, self._too_large())
            done = not more
            return {"type": "http.request", "body": body, "more_body": more}

        headers = [
            (k, v) for k, v in scope["headers"] if k not in (b"content-encoding", b"content-length")
        ]
        await self.app({**scope, "headers": headers}, inflated, send)
