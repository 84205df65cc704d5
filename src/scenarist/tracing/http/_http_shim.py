"""A minimal httpx-shaped request and response for clients that are not httpx.

The LLM-call span (``_llm_call``), the cassettes and the recorded-trace source speak
httpx's shapes: ``request.method / .url.path / .content``, ``module.Response(status,
headers=, stream=, extensions=)``, byte streams deriving from ``module.SyncByteStream``
and ``module.AsyncByteStream``. This module is such a ``module`` for the ``urllib3`` and
``aiohttp`` hooks: each converts its client's request into a :class:`Request`, lets the
common path answer it (network or recording), and turns the :class:`Response` back into
its own client's response. Bodies here are always decoded (no content-encoding).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "URL",
    "AsyncByteStream",
    "Headers",
    "Request",
    "Response",
    "SyncByteStream",
    "decoded_headers",
]

HOP_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
"""Headers a decoded, re-framed body no longer has."""


def decoded_headers(items: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """A live response's headers for its body read decoded: no ``content-encoding`` or
    framing, and ``content-length`` only where it is still the body's length."""
    pairs = [(str(k).lower(), str(v)) for k, v in items]
    encoded = any(k == "content-encoding" and v.strip().lower() != "identity" for k, v in pairs)
    return [
        (k, v) for k, v in pairs if k not in HOP_HEADERS or (k == "content-length" and not encoded)
    ]


class SyncByteStream:
    """Base of sync byte streams (iterable of ``bytes``, with ``close``)."""

    def __iter__(self) -> Iterator[bytes]:
        yield from ()

    def close(self) -> None:
        return None


class AsyncByteStream:
    """Base of async byte streams (async iterable of ``bytes``, with ``aclose``)."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        empty: tuple[bytes, ...] = ()
        for chunk in empty:
            yield chunk

    async def aclose(self) -> None:
        return None


class Headers(dict[str, str]):
    """Response headers, names lower-cased."""

    def __init__(self, items: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> None:
        pairs = items.items() if isinstance(items, Mapping) else items
        super().__init__((str(k).lower(), str(v)) for k, v in pairs)

    def __getitem__(self, name: str) -> str:
        return super().__getitem__(name.lower())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and super().__contains__(name.lower())

    def get(self, name: str, default: Any = None) -> Any:
        return super().get(name.lower(), default)

    def multi_items(self) -> list[tuple[str, str]]:
        """``(name, value)`` pairs, names lower-cased (as httpx's ``Headers`` gives them)."""
        return list(self.items())


class URL:
    """The parts of a URL the capture reads."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self._url = url
        self.path = parts.path or "/"
        self.host = parts.hostname or ""
        self.port = parts.port

    def __str__(self) -> str:
        return self._url


class Request:
    """An outgoing LLM request, its body fully known."""

    def __init__(self, method: str, url: str, content: bytes) -> None:
        self.method, self.url, self.content = method.upper(), URL(url), content

    def read(self) -> bytes:
        return self.content

    async def aread(self) -> bytes:
        return self.content


class Response:
    """A response: status, headers, a byte stream (or ``content``), extensions."""

    def __init__(
        self,
        status_code: int,
        *,
        headers: Mapping[str, str] | Iterable[tuple[str, str]] = (),
        stream: Any = None,
        content: bytes | None = None,
        extensions: dict[str, Any] | None = None,
    ) -> None:
        self.status_code = status_code
        self.headers = Headers(headers)
        self.stream: Any = stream if stream is not None else [content or b""]
        self.extensions = extensions or {}

    def read(self) -> bytes:
        if self.headers.get("content-encoding", "identity") not in ("", "identity"):
            raise ValueError("a shim response is always decoded")
        return b"".join(self.stream)
