"""A database that is locked, gone or unreachable: 503 ``database_unavailable``, not 500.

SQLAlchemy raises ``OperationalError`` for "database is locked" (after SQLite's busy
timeout), a missing or unreadable file and a PostgreSQL server that went away;
``InterfaceError`` and ``DisconnectionError`` for broken connections; ``TimeoutError``
when the connection pool has nothing to give; asyncpg's connect failures can surface as
``OSError`` (connection refused). All of them answer::

    503 {"error": {"code": "database_unavailable", "message": ..., "reason": ...}}
    Retry-After: 1

so clients retry, and ``RemoteStore`` spools what it could not deliver (``scenarist sync``
sends it once the database is back). The reason is the driver's first line, without SQL
or parameters.
"""

from __future__ import annotations

import logging

from scenarist._extras import missing_extra

try:
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_extra("server", exc) from exc

from scenarist.server._errors import error_response
from scenarist.store.sql.engine import UNAVAILABLE_ERRORS, unavailable_reason

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


def install_database_errors(app: FastAPI) -> None:
    for error in UNAVAILABLE_ERRORS:
        app.add_exception_handler(error, _unavailable)
