"""Shared route dependencies: the store, and page-size parameters."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query, Request

from scenarist.server.dashboard.session import session_or_key
from scenarist.server.ratelimit import enforce_rate_limit
from scenarist.store.sql.store import SqlStore

__all__ = ["Admin", "Cursor", "Ingest", "Limit", "Read", "Store"]


def _store(request: Request) -> SqlStore:
    store: SqlStore = request.app.state.store
    return store


Store = Annotated[SqlStore, Depends(_store)]
Cursor = Annotated[
    str | None, Query(max_length=2000, description="next_cursor of the previous page")
]
Limit = Annotated[int, Query(ge=1, le=500, description="page size")]
Read = Depends(session_or_key("read"))  # a Bearer key, or a dashboard session cookie
_ingest_scope = session_or_key("ingest")


async def _ingest(request: Request) -> None:
    """The ``ingest`` scope, then the rate limit (rejected keys spend no tokens)."""
    await _ingest_scope(request)
    enforce_rate_limit(request)


Ingest = Depends(_ingest)
Admin = Depends(session_or_key("admin"))
