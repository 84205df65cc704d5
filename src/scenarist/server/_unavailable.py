"""A database that is locked, gone or unreachable: 503 ``database_unavailable``, not 500.

SQLAlchemy raises ``OperationalError`` for "database is locked" (after SQLite's busy
timeout), a missing or unreadable file and a PostgreSQL server that went away;
``InterfaceError`` and ``DisconnectionError`` for broken connections; ``TimeoutError``
when the connection pool has nothing to give; asyncpg's connect failures can surface as
``OSError`` (connection refused). All of them answer::

    503 {"error": {"code": "database_unavailable", "message": ..., "reason": ...}}
    Retry-After: 1

so clients retry (OTLP exporters retry a 503, never a 500), and ``RemoteStore`` spools
what it could not deliver (``scenarist sync`` sends it once the database is back). The
reason is the driver's first line, without SQL or parameters.

A PostgreSQL server restarting is more varied: asyncpg's "connection was closed in the
middle of operation", "the database system is shutting down" (or "starting up"),
``ConnectionDoesNotExistError``, ``CannotConnectNowError``, a reset socket, reach the app
as SQLAlchemy's plain ``DBAPIError`` or as asyncpg's own errors. Every one of them that
:func:`~scenarist.store.sql.engine.is_unavailable` recognises (SQLSTATE class 08 and
57P0x, the types and messages of a lost connection) is a 503 too; any other database
error keeps its answer (422 for a value the column cannot hold, else 500).
"""

from __future__ import annotations

import logging
from typing import Any

from scenarist._extras import missing_extra

try:
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse, Response
    from sqlalchemy.exc import DBAPIError
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_extra("server", exc) from exc

from scenarist.server._errors import error_response
from scenarist.store.sql.engine import UNAVAILABLE_ERRORS, is_unavailable, unavailable_reason

__all__ = ["RETRY_AFTER_S", "UNAVAILABLE_ERRORS", "install_database_errors"]

RETRY_AFTER_S = 1
_log = logging.getLogger("scenarist.server")


async def _unavailable(request: Request, exc: Exception) -> JSONResponse:
    reason = unavailable_reason(exc)
    _log.warning("database unavailable for %s %s: %s", request.method, request.url.path, reason)
    return error_response(
        503,
        "the database is unavailable (locked, gone or unreachable); retry later",
        code="database_unavailable",
        headers={"Retry-After": str(RETRY_AFTER_S)},
        reason=reason,
    )


def _or_unavailable(handler: Any) -> Any:
    """``handler`` for a database error, unless the error says the database is gone."""

    async def checked(request: Request, exc: Exception) -> Response:
        if is_unavailable(exc):
            return await _unavailable(request, exc)
        if handler is None:
            raise exc
        response: Response = await handler(request, exc)
        return response

    return checked


def _driver_errors() -> tuple[type[Exception], ...]:
    """asyncpg's own errors (raised outside SQLAlchemy's wrapping, as while connecting)."""
    try:
        import asyncpg  # type: ignore[import-untyped]
    except ImportError:
        return ()
    return (asyncpg.PostgresError, asyncpg.InterfaceError)


def install_database_errors(app: FastAPI) -> None:
    """503 for the errors of an unavailable database (call after ``install_error_handlers``:
    the handler of ``DBAPIError`` found there answers the others)."""
    for error in UNAVAILABLE_ERRORS:
        app.add_exception_handler(error, _unavailable)
    for error in (DBAPIError, OSError, *_driver_errors()):
        previous = app.exception_handlers.get(error)
        app.add_exception_handler(error, _or_unavailable(previous))
