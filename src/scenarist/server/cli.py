"""``scenarist serve``: run the API and dashboard. The database commands it used to hold
(keys, ``db upgrade``, ``db prune``, ``sync``) live in :mod:`scenarist.store.admin` and
are re-exported here for old callers."""

from __future__ import annotations

from scenarist.errors import UserError
from scenarist.store.admin import (
    create_key,
    db_upgrade,
    has_keys,
    import_local,
    list_keys,
    prune,
    revoke_key,
    sync,
)
from scenarist.store.location import database_label

__all__ = [
    "DEFAULT_PORT",
    "create_key",
    "db_upgrade",
    "import_local",
    "list_keys",
    "open_mode_notice",
    "prune",
    "revoke_key",
    "serve",
    "sync",
]

DEFAULT_PORT = 8480


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


def serve(
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    database_url: str | None = None,
    *,
    max_body_bytes: int | None = None,
    log_level: str = "info",
) -> None:
    """Run the server until interrupted (migrating the database first).

    Refuses a non-loopback ``host`` unless an API key exists: the API would otherwise be
    open to the network. Create one with :func:`create_key` first.
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
            "or scenarist.server.cli.create_key), or listen on 127.0.0.1"
        )
    app = create_app(database_url, host=host, max_body_bytes=max_body_bytes)
    print(f"scenarist serve: database {database_label(database_url)}", flush=True)
    if is_loopback(host) and not has_keys(database_url):
        print(open_mode_notice(host, port), flush=True)
    uvicorn.run(app, host=host, port=port, log_level=log_level)
