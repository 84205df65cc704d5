"""Administering the database and the spool: plain functions behind ``scenarist keys
...``, ``scenarist db upgrade|prune`` and ``scenarist sync`` (the Typer
commands live in ``scenarist.cli`` and call these; ``scenarist serve`` is in
:mod:`scenarist.server.cli`).

Every function is synchronous, takes an optional ``database_url`` (default:
``SCENARIST_DATABASE_URL``, else ``$SCENARIST_HOME/scenarist.db``), migrates the database
to the latest schema first, and raises :class:`~scenarist.errors.UserError` with a
message fit to print for anything the user can fix. None of them needs the server
extra: the store is part of the core install.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from scenarist._sync import run_sync
from scenarist.errors import UserError

if TYPE_CHECKING:
    from scenarist.store.spool import SyncResult
    from scenarist.store.sql.records import ApiKeyInfo
    from scenarist.store.sql.retention import PruneResult
    from scenarist.store.sql.store import SqlStore

__all__ = [
    "create_key",
    "db_upgrade",
    "has_keys",
    "list_keys",
    "prune",
    "revoke_key",
    "sync",
]


def _store(database_url: str | None) -> SqlStore:
    from scenarist.store.sql.store import SqlStore

    return SqlStore(database_url)


async def _has_keys_async(store: SqlStore) -> bool:
    try:
        return await store.has_active_keys()
    finally:
        await store.close()


def has_keys(database_url: str | None = None) -> bool:
    """Whether the database holds an active API key."""
    return run_sync(_has_keys_async, _store(database_url))


def create_key(
    scopes: Sequence[str] = ("ingest", "read"),
    *,
    name: str | None = None,
    database_url: str | None = None,
    projects: Sequence[str] | None = None,
) -> tuple[ApiKeyInfo, str]:
    """Create an API key with ``scopes`` (some of ``ingest``, ``read``, ``admin``),
    opening ``projects`` only (default: every project).

    Returns the key's listing and the key itself (``sk_scen_...``): show it to the user
    now, it cannot be recovered (only its SHA-256 is stored).
    """

    async def go(store: SqlStore) -> tuple[ApiKeyInfo, str]:
        try:
            return await store.create_api_key(
                list(scopes), name, projects=None if projects is None else list(projects)
            )
        finally:
            await store.close()

    return run_sync(go, _store(database_url))


def list_keys(database_url: str | None = None) -> list[ApiKeyInfo]:
    """Every API key (revoked ones with ``revoked_at``), oldest first; never the keys."""

    async def go(store: SqlStore) -> list[ApiKeyInfo]:
        try:
            return await store.list_api_keys()
        finally:
            await store.close()

    return run_sync(go, _store(database_url))


def revoke_key(key_id: str, database_url: str | None = None) -> None:
    """Revoke the key ``key_id`` (its ``key_id`` from :func:`list_keys`)."""

    async def go(store: SqlStore) -> bool:
        try:
            return await store.revoke_api_key(key_id)
        finally:
            await store.close()

    if not run_sync(go, _store(database_url)):
        raise UserError(f"no active API key {key_id!r}; list keys to see their ids")


def db_upgrade(url: str | None = None) -> str | None:
    """Migrate the database at ``url`` to the latest schema; the revision it is now at."""

    async def go(store: SqlStore) -> Any:
        from scenarist.store.sql.migrate import current_revision

        try:
            return await current_revision(await store.engine())
        finally:
            await store.close()

    revision: str | None = run_sync(go, _store(url))
    return revision


def prune(url: str | None = None, *, retention_days: float | None = None) -> PruneResult:
    """Apply the retention policy to the database at ``url`` now.

    ``retention_days`` defaults to ``SCENARIST_RETENTION_DAYS``; with neither, nothing is
    deleted (``cutoff`` is ``None``). Pinned runs and traces, and traces that scenario
    items or snapshots of their own project refer to, are always kept. Every project is
    pruned. The server also prunes when it starts.
    """
    from scenarist.store.sql.retention import retention_days_from_env

    days = retention_days if retention_days is not None else retention_days_from_env()
    if days is not None and days <= 0:
        raise UserError(f"retention_days must be a positive number of days, got {days!r}")

    async def go(store: SqlStore) -> PruneResult:
        try:
            return await store.prune_older_than_days(days, every_project=True)
        finally:
            await store.close()

    return run_sync(go, _store(url))


def sync(
    url: str | None = None,
    api_key: str | None = None,
    *,
    spool_dir: str | None = None,
    from_servers: Sequence[str] = (),
    retry_rejected: bool = False,
) -> SyncResult:
    """Send the uploads spooled for the server at ``url`` (default ``SCENARIST_URL``) to
    it, oldest first, each with its project, deleting each file once the server
    acknowledged it. Uploads spooled for another server are kept, unless that server is
    named in ``from_servers`` (sent here on purpose); ``retry_rejected`` puts the files
    set aside in ``rejected/`` back first.

    ``api_key`` defaults to ``SCENARIST_API_KEY``, ``spool_dir`` to
    ``$SCENARIST_HOME/spool``. The result says what was sent, what was set aside and why,
    and what is still waiting (``remaining``, with the ``error`` that stopped the pass).
    """
    import os

    from scenarist.store.remote import RemoteStore

    url = url or os.environ.get("SCENARIST_URL") or None
    if url is None:
        raise UserError(
            "no server to send spooled uploads to: pass the URL (scenarist sync --url "
            "http://host:8480) or set SCENARIST_URL"
        )
    store = RemoteStore(
        url, api_key or os.environ.get("SCENARIST_API_KEY"), spool=spool_dir,
        raise_on_send_failure=True,
    )  # fmt: skip
    result: SyncResult = run_sync(
        store.sync, from_servers=from_servers, retry_rejected=retry_rejected
    )
    return result
