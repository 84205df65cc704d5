"""``scenarist serve``: run the API and dashboard. The database commands (keys,
``db upgrade``, ``db prune``, ``sync``) live in :mod:`scenarist.store.admin`."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from scenarist.engine._gc import frozen_while_running
from scenarist.errors import UserError
from scenarist.store.admin import has_keys
from scenarist.store.location import database_label

__all__ = [
    "DEFAULT_PORT",
    "TRUSTED_PROXIES_ENV",
    "connection_options",
    "open_mode_notice",
    "serve",
    "uvicorn_options",
]

DEFAULT_PORT = 8480
TRUSTED_PROXIES_ENV = "SCENARIST_TRUSTED_PROXIES"


def uvicorn_options(trusted_proxies: Sequence[str] | None) -> dict[str, Any]:
    """How uvicorn treats ``X-Forwarded-For`` / ``X-Forwarded-Proto``: honoured only from
    ``trusted_proxies`` (addresses or networks; default ``SCENARIST_TRUSTED_PROXIES``,
    comma-separated), else ignored. uvicorn's own default trusts 127.0.0.1, which lets
    any local client choose the address it is rate-limited as."""
    if trusted_proxies is None:
        trusted_proxies = os.environ.get(TRUSTED_PROXIES_ENV, "").split(",")
    trusted = [proxy.strip() for proxy in trusted_proxies if proxy.strip()]
    if not trusted:
        return {"proxy_headers": False}
    return {"proxy_headers": True, "forwarded_allow_ips": ",".join(trusted)}


def connection_options(
    header_timeout_s: float | None = None, max_connections: int | None = None
) -> dict[str, Any]:
    """uvicorn settings for connections that send nothing (see
    :mod:`scenarist.server._connections`): the header timeout and the connection cap
    (arguments, else ``SCENARIST_HEADER_TIMEOUT_S`` and ``SCENARIST_MAX_CONNECTIONS``,
    else 10 s and the open-files limit, raised to its hard limit, less 128)."""
    from scenarist.server._connections import connection_limits, guarded_protocol

    timeout_s, cap = connection_limits(header_timeout_s, max_connections)
    options: dict[str, Any] = {
        "http": guarded_protocol(timeout_s, cap),
        "timeout_keep_alive": 5,  # idle after a response (uvicorn's default, stated)
    }
    if cap is not None:  # uvicorn answers 503 at this many (ours stay at most cap)
        options["limit_concurrency"] = cap + 1
    return options


def open_mode_notice(host: str, port: int) -> str:
    """What ``serve`` prints when it starts in open mode: how clients reach it."""
    url = f"http://{host}:{port}"
    return (
        f"scenarist serve: open mode (loopback, no API key exists): requests are served "
        f"without a key, and a key a client sends is not checked.\n"
        f"  scenarist clients: SCENARIST_URL={url}\n"
        f"  the Veval SDK:     VEVAL_INTERNAL_ENDPOINT={url} (any api_key)\n"
        f"  to require keys:   scenarist keys create --scope admin"
    )


def serve_url(host: str, port: int) -> str:
    """The address to open: ``0.0.0.0`` and ``::`` listen everywhere, so name loopback."""
    shown = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/"


def serve(
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    database_url: str | None = None,
    *,
    max_body_bytes: int | None = None,
    log_level: str = "info",
    allowed_hosts: Sequence[str] | None = None,
    trusted_proxies: Sequence[str] | None = None,
) -> None:
    """Run the server until interrupted (migrating the database first).

    Refuses a non-loopback ``host`` unless an API key exists: the API would otherwise be
    open to the network. Create one with
    :func:`scenarist.store.admin.create_key` first. ``allowed_hosts``:
    host names served besides the loopback ones (default ``SCENARIST_ALLOWED_HOSTS``);
    ``trusted_proxies``: see :func:`uvicorn_options`.
    """
    from scenarist.server.auth import is_loopback

    try:
        import uvicorn
    except ImportError as exc:
        from scenarist._extras import missing_extra

        raise missing_extra("server", exc) from exc
    from scenarist.server.app import create_app

    if not is_loopback(host) and not has_keys(database_url):
        raise UserError(
            f"refusing to listen on {host!r} without authentication: anyone on the network "
            "could read and write your runs. Create an API key first (scenarist keys create, "
            "or scenarist.store.admin.create_key), or listen on 127.0.0.1"
        )
    app = create_app(
        database_url,
        host=host,
        max_body_bytes=max_body_bytes,
        allowed_hosts=allowed_hosts or None,
    )
    print(
        f"scenarist serve: the dashboard and API at {serve_url(host, port)}, on the database "
        f"{database_label(database_url)}",
        flush=True,
    )
    if is_loopback(host) and not has_keys(database_url):
        print(open_mode_notice(host, port), flush=True)
    # What is loaded by now (FastAPI, pydantic schemas, SQLAlchemy, the routes) lives as long
    # as the server: keep it out of the collector's full passes, which otherwise walk it
    # again and again while a receiver batch allocates (measured: bench/otlp_ingest.py).
    # Given back when the server stops (``serve`` can run inside a longer-lived process);
    # a process that manages the collector itself is left alone.
    with frozen_while_running():
        uvicorn.run(
            app,
            host=host,
            port=port,
            log_level=log_level,
            **uvicorn_options(trusted_proxies),
            **connection_options(),
        )
