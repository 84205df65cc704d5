"""Connections that send nothing: a header timeout and a connection cap for uvicorn.

uvicorn closes a keep-alive connection idle after a response (``timeout_keep_alive``),
but a connection that never sends a request, or sends its headers a byte at a time,
stays open for ever: 1,100 of them exhaust the common 1,024 open-files limit and the
server accepts nothing more (``/api/health`` times out). :func:`guarded_protocol` makes
uvicorn's h11 protocol class that also:

- **closes a connection whose request headers have not all arrived** within
  ``header_timeout_s`` of its opening, or of the previous response on a keep-alive
  connection (``SCENARIST_HEADER_TIMEOUT_S``, default :data:`DEFAULT_HEADER_TIMEOUT_S`);
  a request being served is never cut (its body and response take what they take);
- **keeps at most** ``max_connections`` **open**: the connection over the cap closes the
  longest-idle one (no request in progress) to take its place; with none idle, uvicorn's
  ``limit_concurrency`` (the same cap) answers 503. ``scenarist serve`` raises the
  process's open-files limit to its hard limit and sets the cap below it
  (:func:`connection_limits`; ``SCENARIST_MAX_CONNECTIONS``), so the cap is met before
  the files run out.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

__all__ = [
    "DEFAULT_HEADER_TIMEOUT_S",
    "FILES_KEPT",
    "HEADER_TIMEOUT_ENV",
    "MAX_CONNECTIONS_ENV",
    "connection_limits",
    "guarded_protocol",
    "raise_open_files_limit",
]

DEFAULT_HEADER_TIMEOUT_S = 10.0
HEADER_TIMEOUT_ENV = "SCENARIST_HEADER_TIMEOUT_S"
MAX_CONNECTIONS_ENV = "SCENARIST_MAX_CONNECTIONS"
FILES_KEPT = 128
"""Open files kept for the rest of the server (database connections, SQLite's files,
logs, modules) when the connection cap is derived from the open-files limit."""


def raise_open_files_limit() -> int | None:
    """Raise this process's soft open-files limit to its hard limit (at most 65,536);
    the soft limit now, or ``None`` where there is no such limit (Windows)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 65_536 if hard == resource.RLIM_INFINITY else min(hard, 65_536)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):  # not allowed here: keep the soft limit
            pass
    return None if soft == resource.RLIM_INFINITY else int(soft)


def connection_limits(
    header_timeout_s: float | None = None, max_connections: int | None = None
) -> tuple[float, int | None]:
    """``(header_timeout_s, max_connections)``: the arguments, else the environment, else
    the defaults (the cap: the open-files limit, raised, less :data:`FILES_KEPT`)."""
    if header_timeout_s is None:
        value = os.environ.get(HEADER_TIMEOUT_ENV, "").strip()
        header_timeout_s = float(value) if value else DEFAULT_HEADER_TIMEOUT_S
    if max_connections is None:
        value = os.environ.get(MAX_CONNECTIONS_ENV, "").strip()
        if value:
            max_connections = int(value)
        else:
            files = raise_open_files_limit()
            max_connections = None if files is None else max(32, files - FILES_KEPT)
    return header_timeout_s, max_connections


def guarded_protocol(header_timeout_s: float, max_connections: int | None) -> type[Any]:
    """uvicorn's h11 protocol with the module docstring's header timeout and cap (pass
    it as ``uvicorn.run(..., http=...)``)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._since = self.loop.time()
            self._header_timer: Any = None
            self._arm()
            if max_connections is not None and len(self.connections) > max_connections:
                self._drop_longest_idle()

        def _idle(self) -> bool:
            return self.cycle is None or bool(self.cycle.response_complete)

        def _arm(self) -> None:
            """Start the header clock: closed unless a new request starts in time."""
            if self._header_timer is not None:
                self._header_timer.cancel()
            waiting_after = self.cycle
            self._since = self.loop.time()

            def expired() -> None:
                if self.cycle is waiting_after and not self.transport.is_closing():
                    self._close()

            self._header_timer = self.loop.call_later(header_timeout_s, expired)

        def _close(self) -> None:
            import h11

            with contextlib.suppress(h11.LocalProtocolError):  # (mid-request to h11)
                self.conn.send(h11.ConnectionClosed())
            self.transport.close()

        def _drop_longest_idle(self) -> None:
            idle = [
                c
                for c in self.connections
                if c is not self and isinstance(c, GuardedH11Protocol) and c._idle()
            ]
            idle = [c for c in idle if not c.transport.is_closing()]
            if idle:
                min(idle, key=lambda c: c._since)._close()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None
            super().connection_lost(exc)

    return GuardedH11Protocol
