"""The FastAPI application: ``create_app()`` builds it around one :class:`SqlStore`.

The store is migrated when the app starts (its lifespan) and closed when it stops. Route
handlers hold no SQL: they validate, call the store, and shape the answer.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager

from scenarist._extras import missing_extra
from scenarist._version import __version__

try:
    from fastapi import FastAPI
    from fastapi.datastructures import Default
except ImportError as exc:
    raise missing_extra("server", exc) from exc

from scenarist.server._encoding import Decompress
from scenarist.server._errors import ERROR_RESPONSES, BodySizeLimit, install_error_handlers
from scenarist.server._request_guard import RequestGuard, allowed_hosts_from_env
from scenarist.server._responses import FiniteJSONResponse
from scenarist.server._unavailable import install_database_errors
from scenarist.server.auth import is_loopback
from scenarist.server.dashboard.routes import install_dashboard
from scenarist.server.projects import ProjectScope
from scenarist.server.ratelimit import RateLimit, RateLimiter
from scenarist.server.routes_api import router as api_router
from scenarist.server.routes_ops import router as ops_router
from scenarist.server.routes_otlp import install_otlp, otlp_limits_from_env
from scenarist.server.routes_veval import router as veval_router
from scenarist.store.sql.retention import retention_days_from_env
from scenarist.store.sql.store import SqlStore

__all__ = ["DEFAULT_MAX_BODY_BYTES", "create_app"]

DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024


def _max_body_bytes() -> int:
    value = os.environ.get("SCENARIST_MAX_BODY_BYTES")
    return int(value) if value else DEFAULT_MAX_BODY_BYTES


def create_app(
    database_url: str | None = None,
    *,
    host: str = "127.0.0.1",
    max_body_bytes: int | None = None,
    store: SqlStore | None = None,
    rate_limit: RateLimit | str | None = None,
    retention_days: float | None = None,
    allowed_hosts: Iterable[str] | None = None,
    otlp_max_spans: int | None = None,
    otlp_max_bytes: int | None = None,
) -> FastAPI:
    """The scenarist server app.

    ``database_url``: as for :class:`SqlStore` (default ``SCENARIST_DATABASE_URL``, else
    the SQLite file under ``SCENARIST_HOME``). ``host``: the address the server listens
    on; only a loopback host allows open mode (no key needed while no key exists).
    ``max_body_bytes``: larger requests get 413 (default ``SCENARIST_MAX_BODY_BYTES`` or
    64 MiB). ``store``: use this store instead of opening ``database_url``.
    ``rate_limit``: ingest requests allowed per API key or address (``"20/s"``, default
    ``SCENARIST_RATE_LIMIT``, else none; see :mod:`.ratelimit`). ``retention_days``: prune
    older runs and traces at start (default ``SCENARIST_RETENTION_DAYS``, else keep all).
    ``allowed_hosts``: host names served besides the loopback ones (default
    ``SCENARIST_ALLOWED_HOSTS``; see :mod:`._request_guard`, which also refuses writes
    from other origins). ``otlp_max_spans``, ``otlp_max_bytes``: what one OTLP request
    may hold (default ``SCENARIST_OTLP_MAX_SPANS``, ``SCENARIST_OTLP_MAX_BYTES``, else
    20,000 spans and 32 MiB decompressed; see :mod:`.routes_otlp`). Bodies sent with
    ``Content-Encoding: gzip`` or ``deflate`` are inflated, the body limit applying to
    the inflated bytes too (:mod:`._encoding`).
    """
    the_store = store if store is not None else SqlStore(database_url, pooled=True)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await the_store.engine()  # migrate now: a broken database fails the start
        await the_store.prune_older_than_days(
            retention_days if retention_days is not None else retention_days_from_env(),
            every_project=True,
        )
        yield
        await the_store.close()

    app = FastAPI(
        title="scenarist",
        version=__version__,
        summary="Store and API for scenarist runs, traces, scenario items and snapshots.",
        lifespan=lifespan,
        responses=ERROR_RESPONSES,  # documented on every operation (the pages are hidden)
        default_response_class=Default(FiniteJSONResponse),  # Default: keeps pydantic's path
        docs_url=None,  # Swagger UI and ReDoc load from a CDN: /docs is ours (api_docs.py)
        redoc_url=None,
    )
    app.state.store = the_store
    app.state.open_mode_allowed = is_loopback(host)
    env_spans, env_bytes = otlp_limits_from_env()
    app.state.otlp_limits = (otlp_max_spans or env_spans, otlp_max_bytes or env_bytes)
    body_limit = max_body_bytes or _max_body_bytes()
    install_error_handlers(app)
    install_database_errors(app)  # locked or gone → 503 database_unavailable
    install_otlp(app)  # OTLP/HTTP receiver; its /v1/traces dispatch sits inside the body limit
    app.add_middleware(ProjectScope)  # innermost: the routes run in the request's project
    app.add_middleware(Decompress, max_bytes=body_limit)  # the limit, again once inflated
    app.add_middleware(BodySizeLimit, max_bytes=body_limit)
    app.add_middleware(  # outermost: nothing is read for a foreign host or origin
        RequestGuard,
        loopback_only=is_loopback(host),
        allowed_hosts=allowed_hosts_from_env() if allowed_hosts is None else allowed_hosts,
    )
    app.include_router(veval_router)
    app.include_router(api_router)
    app.include_router(ops_router)
    limit = RateLimit.parse(rate_limit) if isinstance(rate_limit, str) else rate_limit
    limit = limit or RateLimit.from_env()
    app.state.rate_limiter = RateLimiter(limit) if limit is not None else None
    install_dashboard(app)  # "/" is the overview; its JSON twin keeps the landing keys

    return app
