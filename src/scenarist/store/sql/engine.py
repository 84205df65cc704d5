"""Database URLs, engines and the connection discipline every query goes through.

``SCENARIST_DATABASE_URL`` picks the database; without it the server keeps a SQLite file
at ``$SCENARIST_HOME/scenarist.db`` (``SCENARIST_HOME`` defaults to ``./.scenarist``).
Plain URLs get their async driver (``sqlite://`` → aiosqlite, ``postgresql://`` →
asyncpg), and a bare file path means a SQLite file.

SQLite runs in WAL mode (readers never wait for the writer) with a busy timeout, and the
store serialises its own write transactions with a lock: SQLite allows one writer at a
time, and a deferred transaction that reads and then writes can fail with "database is
locked" instead of waiting. PostgreSQL needs neither.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Table, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from scenarist._extras import missing_extra
from scenarist.errors import UserError

__all__ = ["Database", "default_database_url", "make_engine", "resolve_database_url"]

_DRIVERS = {
    "sqlite": "sqlite+aiosqlite",
    "postgresql": "postgresql+asyncpg",
    "postgres": "postgresql+asyncpg",
}


def default_database_url() -> str:
    """``sqlite+aiosqlite:///<abs path of $SCENARIST_HOME/scenarist.db>``."""
    home = Path(os.environ.get("SCENARIST_HOME") or ".scenarist")
    return f"sqlite+aiosqlite:///{(home / 'scenarist.db').resolve()}"


def resolve_database_url(url: str | None = None) -> str:
    """The async SQLAlchemy URL for ``url``, ``SCENARIST_DATABASE_URL`` or the default."""
    url = url or os.environ.get("SCENARIST_DATABASE_URL") or None
    if url is None:
        return default_database_url()
    if "://" not in url:  # a file path
        return f"sqlite+aiosqlite:///{Path(url).resolve()}"
    scheme, rest = url.split("://", 1)
    return f"{_DRIVERS.get(scheme, scheme)}://{rest}"


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    for pragma in (
        "journal_mode=WAL",
        "synchronous=NORMAL",
        "foreign_keys=ON",
        "busy_timeout=30000",
    ):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


def make_engine(url: str, *, pooled: bool = True) -> AsyncEngine:
    """An async engine for ``url`` (already resolved). ``pooled=False`` keeps no
    connections between uses, so the engine works from any event loop."""
    try:
        sa_url = make_url(url)
    except ArgumentError as exc:
        raise UserError(f"cannot read the database URL {url!r}: {exc}") from exc
    options: dict[str, Any] = {} if pooled else {"poolclass": NullPool}
    backend = sa_url.get_backend_name()
    if backend == "sqlite":
        database = sa_url.database or ""
        if database in ("", ":memory:"):
            raise UserError(
                f"the database URL {url!r} is an in-memory SQLite database, which every "
                "connection would see empty; give a file, e.g. sqlite:///scenarist.db"
            )
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    elif backend != "postgresql":
        raise UserError(
            f"unsupported database {backend!r} in {url!r}; use sqlite:///path/to/file.db "
            "or postgresql://user@host/dbname"
        )
    try:
        engine = create_async_engine(sa_url, **options)
    except (ArgumentError, ImportError) as exc:
        if isinstance(exc, ImportError) and backend == "postgresql":
            raise missing_extra("postgres", exc) from exc
        raise UserError(f"cannot use the database URL {url!r}: {exc}") from exc
    if backend == "sqlite":
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
    return engine


class _PerLoop:
    """One ``asyncio.Lock`` per event loop (a lock belongs to the loop that uses it)."""

    def __init__(self) -> None:
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def get(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        return lock


class Database:
    """An engine made on first use, migrated to the latest schema, and the read/write
    connection contexts every query uses.

    ``pooled=True`` (the server: one event loop for the process) keeps a connection pool.
    The default, ``pooled=False``, opens a connection per operation so the same object
    works from the fresh event loops of sync wrappers (``Client.run_scenario``).
    """

    def __init__(
        self, url: str | None = None, *, pooled: bool = False, migrate: bool = True
    ) -> None:
        self.url = resolve_database_url(url)
        self._pooled = pooled
        self._migrate = migrate
        self._engine: AsyncEngine | None = None
        self._ready_lock = _PerLoop()
        self._write_lock = _PerLoop()

    @property
    def dialect(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return make_url(self.url).get_backend_name()

    async def engine(self) -> AsyncEngine:
        """The engine, created and migrated on first use."""
        if self._engine is not None:
            return self._engine
        async with self._ready_lock.get():
            if self._engine is None:
                engine = make_engine(self.url, pooled=self._pooled)
                if self._migrate:
                    from scenarist.store.sql.migrate import upgrade

                    await upgrade(engine)
                self._engine = engine
        return self._engine

    async def close(self) -> None:
        """Close every pooled connection (the store can be used again afterwards)."""
        engine, self._engine = self._engine, None
        if engine is not None:
            await engine.dispose()

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[AsyncConnection]:
        engine = await self.engine()
        async with engine.connect() as connection:
            yield connection

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[AsyncConnection]:
        """One transaction: committed when the block ends, rolled back if it raises."""
        engine = await self.engine()
        if self.dialect == "sqlite":
            async with self._write_lock.get(), engine.begin() as connection:
                yield connection
        else:
            async with engine.begin() as connection:
                yield connection

    def _insert(self, table: Table) -> Any:
        """The dialect's ``INSERT`` (with ``on_conflict_do_nothing`` / ``_do_update``)."""
        if self.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as pg_insert

            return pg_insert(table)
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(table)
