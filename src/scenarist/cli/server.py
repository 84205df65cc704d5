"""``scenarist serve``, ``keys``, ``db upgrade|prune``, ``sync``.

``serve`` needs the server (the ``server`` extra, package ``scenarist.server``) and only
delegates: when ``scenarist.server.cli`` can be imported it calls its ``serve``;
otherwise, or when the server's extra is not installed (an ``ImportError`` whose message
is the fix), it exits 2 with one line saying so. The other commands administer the
database and the spool, which are part of the core install (:mod:`scenarist.store.admin`).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from scenarist.store.sql.records import ApiKeyInfo

__all__ = ["db_app", "keys_app", "serve", "server_available", "sync"]

NOT_INSTALLED = (
    "`scenarist {command}` needs the scenarist server, which is not installed: it arrives "
    "with the 'server' extra (pip install 'scenarist[server]')"
)

keys_app = typer.Typer(help="API keys of the server's database.", no_args_is_help=True)
db_app = typer.Typer(help="The database (SCENARIST_DATABASE_URL or SQLite).", no_args_is_help=True)


def _server_cli() -> ModuleType | None:
    """``scenarist.server.cli``, or ``None`` when the server is not part of this install."""
    try:
        return importlib.import_module("scenarist.server.cli")
    except ImportError:
        return None


def server_available() -> bool:
    """The server package and its extra (FastAPI, uvicorn) are installed."""
    from importlib.util import find_spec

    deps = all(find_spec(name) is not None for name in ("fastapi", "uvicorn"))
    return deps and _server_cli() is not None


def _admin(function: str, *args: Any, **options: Any) -> Any:
    """Call ``scenarist.store.admin.<function>``."""
    from scenarist.store import admin

    return getattr(admin, function)(*args, **options)


def _call(command: str, function: str, *args: Any, **options: Any) -> Any:
    """Call ``scenarist.server.cli.<function>``; exit 2 with one line if it cannot be."""
    module = _server_cli()
    if module is None:
        typer.echo(f"error: {NOT_INSTALLED.format(command=command)}", err=True)
        raise typer.Exit(2)
    target = getattr(module, function, None)
    if not callable(target):
        typer.echo(
            f"error: the installed scenarist server does not provide `scenarist {command}` "
            f"(no scenarist.server.cli.{function}) yet",
            err=True,
        )
        raise typer.Exit(2)
    try:
        return target(*args, **options)
    except ImportError as exc:  # the server's extra is missing: its message is the fix
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8480,
    database_url: Annotated[
        str | None, typer.Option(help="Database URL (default: SCENARIST_DATABASE_URL or SQLite).")
    ] = None,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            help="A host name to answer to besides 127.0.0.1, localhost and [::1] (repeat "
            "it; default SCENARIST_ALLOWED_HOSTS, comma-separated)."
        ),
    ] = None,
    trusted_proxy: Annotated[
        list[str] | None,
        typer.Option(
            help="A reverse proxy (address or network) whose X-Forwarded-For and "
            "X-Forwarded-Proto are believed (repeat it; default SCENARIST_TRUSTED_PROXIES)."
        ),
    ] = None,
) -> None:
    """Start the dashboard and API server (needs the server)."""
    options: dict[str, Any] = {}
    if allowed_host:
        options["allowed_hosts"] = allowed_host
    if trusted_proxy:
        options["trusted_proxies"] = trusted_proxy
    _call("serve", "serve", host=host, port=port, database_url=database_url, **options)


DatabaseUrl = Annotated[str | None, typer.Option(help="Database URL.")]


@keys_app.command("create")
def keys_create(
    name: Annotated[str | None, typer.Option(help="A label for the key.")] = None,
    scope: Annotated[
        list[str] | None, typer.Option(help="ingest, read or admin; repeatable.")
    ] = None,
    project: Annotated[
        list[str] | None,
        typer.Option(help="The only project the key opens; repeatable (default: all)."),
    ] = None,
    database_url: DatabaseUrl = None,
) -> None:
    """Create an API key (shown once)."""
    scopes = scope or ["ingest", "read"]
    from scenarist.store.location import database_label

    info, key = _admin(
        "create_key", scopes, name=name, database_url=database_url, projects=project or None
    )
    typer.echo(
        f"{key}\n(key id {getattr(info, 'key_id', info)} in the database "
        f"{database_label(database_url)}; shown once, store it now)"
    )


@keys_app.command("list")
def keys_list(database_url: DatabaseUrl = None) -> None:
    """List API keys (never the keys themselves): one line each, tab-separated: key id,
    name, scopes, projects, created, and the revocation time of a revoked key."""
    from scenarist.store.location import database_label

    keys = _admin("list_keys", database_url=database_url)
    if not keys:
        typer.echo(
            f"no API keys in the database {database_label(database_url)}; "
            "create one with scenarist keys create"
        )
    for info in keys:
        typer.echo(_key_line(info))


def _key_line(info: ApiKeyInfo) -> str:
    """``key_id  name  scopes  projects  created  [revoked ...]`` (tab-separated)."""
    fields = [
        info.key_id,
        info.name or "-",
        ",".join(info.scopes) or "-",
        "projects " + (",".join(info.projects) if info.projects else "all"),
        f"created {info.created_at:%Y-%m-%d %H:%M:%S}",
    ]
    if info.revoked_at is not None:
        fields.append(f"revoked {info.revoked_at:%Y-%m-%d %H:%M:%S}")
    return "\t".join(fields)


@keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="The key id to revoke.")],
    database_url: DatabaseUrl = None,
) -> None:
    """Revoke an API key."""
    from scenarist.store.location import database_label

    _admin("revoke_key", key_id, database_url=database_url)
    typer.echo(f"revoked {key_id} in the database {database_label(database_url)}")


@db_app.command("upgrade")
def db_upgrade(database_url: DatabaseUrl = None) -> None:
    """Apply the database migrations."""
    from scenarist.store.location import database_label

    revision = _admin("db_upgrade", database_url)
    typer.echo(f"database {database_label(database_url)} at revision {revision}")


def sync(
    url: Annotated[str | None, typer.Option(help="Server URL (default: SCENARIST_URL).")] = None,
    api_key: Annotated[
        str | None, typer.Option(help="API key (default: SCENARIST_API_KEY).")
    ] = None,
    from_server: Annotated[
        list[str] | None,
        typer.Option(
            help="Also send here the uploads spooled for this other server (repeatable): "
            "for a server that moved. Without it, uploads go only to the server they were "
            "spooled for.",
        ),
    ] = None,
    retry_rejected: Annotated[
        bool,
        typer.Option(
            "--retry-rejected",
            help="Put the uploads set aside in spool/rejected/ back first (checked again).",
        ),
    ] = False,
) -> None:
    """Send the uploads spooled for the configured server (each with its project).

    Exits 2 when uploads are still waiting, or were set aside in spool/rejected/.
    """
    result = _admin(
        "sync", url, api_key, from_servers=from_server or (), retry_rejected=retry_rejected
    )
    typer.echo(result.summary())
    if result.needs_attention:
        raise typer.Exit(2)


@db_app.command("prune")
def db_prune(
    database_url: DatabaseUrl = None,
    days: Annotated[
        float | None, typer.Option(help="Keep this many days (default: SCENARIST_RETENTION_DAYS).")
    ] = None,
) -> None:
    """Delete runs and traces older than the retention period (never pinned ones)."""
    from scenarist.store.location import database_label

    result = _admin("prune", database_url, retention_days=days)
    if result.cutoff is None:
        typer.echo("retention is off (set SCENARIST_RETENTION_DAYS or --days): nothing deleted")
    else:
        typer.echo(
            f"deleted {result.runs_deleted} run(s) and {result.traces_deleted} trace(s) "
            f"older than {result.cutoff:%Y-%m-%d %H:%M} UTC from the database "
            f"{database_label(database_url)}"
        )
