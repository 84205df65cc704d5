"""Engines, connections and the write discipline every query goes through.

Which database is decided in one place, :mod:`scenarist.store.location`
(``SCENARIST_DATABASE_URL``, else ``$SCENARIST_HOME/scenarist.db``); this module turns the
URL into engines.

**One engine per process, database and event loop.** An async engine's pooled
connections belong to the loop that opened them, and sync wrappers (``Client.run``,
``run_sync``) each run a fresh loop, so engines are kept per running loop, shared by every
store on the same URL, and disposed when that loop shuts down (an async generator the loop
finalises in ``shutdown_asyncgens``, which ``asyncio.run``, ``anyio.run`` and pytest's
runners all call). A connection is opened once per loop, not per operation.

**Writes are grouped.** SQLite allows one writer at a time, and a deferred transaction
that reads and then writes can fail with "database is locked" instead of waiting, so the
store serialises its own write transactions per loop. Small writes that arrive while
another is committing (concurrent items each storing a trace) go through
:meth:`Database._batched`: whoever takes the lock next commits every write queued so far
in one transaction; if that transaction fails, each write is retried in a transaction of
its own, so one bad write never takes the others with it. SQLite runs in WAL mode
(readers never wait for the writer) with a busy timeout for other processes.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import os
import threading
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self, TypeVar

import anyio
from sqlalchemy import Table, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import (
    ArgumentError,
    DatabaseError,
    DisconnectionError,
    InterfaceError,
    OperationalError,
)
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from scenarist._extras import missing_extra
from scenarist.errors import UserError
from scenarist.store._owner_only import owner_only_dir, owner_only_file
from scenarist.store.location import default_database_url, resolve_database_url
from scenarist.tracing.http._network_guard import unguarded

__all__ = [
    "UNAVAILABLE_ERRORS",
    "Database",
    "default_database_url",
    "is_unavailable",
    "make_engine",
    "resolve_database_url",
    "unavailable_reason",
]

UNAVAILABLE_ERRORS: tuple[type[Exception], ...] = (
    OperationalError,  # "database is locked" past the busy timeout, a gone server, a bad file
    InterfaceError,
    DisconnectionError,
    PoolTimeoutError,
    ConnectionError,  # asyncpg's refused connections surface as OSError subclasses
)
"""What a locked, gone or unreachable database raises (the server answers 503 for them,
the CLI one line naming the reason)."""


_UNAVAILABLE_SQLSTATES = frozenset({"57P01", "57P02", "57P03", "53300"})
"""PostgreSQL's codes for a server going away or not there yet (besides class 08,
connection exceptions): shutdown by an administrator, a crash, "cannot connect now" (the
database system is starting up, shutting down or in recovery), too many connections."""
_UNAVAILABLE_TEXT = (
    "the database system is",  # ... shutting down / starting up / in recovery mode
    "terminating connection due to",
    "connection was closed in the middle of operation",
    "connection is closed",
    "server closed the connection unexpectedly",
    "database is locked",
)
_ASYNCPG_CONNECTION_ERRORS = frozenset(
    {"InterfaceError", "ConnectionDoesNotExistError", "InternalClientError"}
)


def is_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it wraps: SQLAlchemy's ``orig``, the cause, the context)
    says the database is gone, going or not yet back, as opposed to a bad query or value.

    The drivers do not agree on a type: asyncpg's errors reach SQLAlchemy as a plain
    ``DBAPIError`` ("connection was closed in the middle of operation", "the database
    system is shutting down"), or as themselves from a connection's setup; so the
    SQLSTATE, the type names and the messages of a lost connection count too."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, (*UNAVAILABLE_ERRORS, TimeoutError)):
            return True
        if getattr(seen, "connection_invalidated", False):  # SQLAlchemy saw a disconnect
            return True
        state = getattr(seen, "sqlstate", None) or getattr(seen, "pgcode", None)
        if isinstance(state, str) and (state.startswith("08") or state in _UNAVAILABLE_SQLSTATES):
            return True
        if type(seen).__module__.startswith("asyncpg") and (
            type(seen).__name__ in _ASYNCPG_CONNECTION_ERRORS
        ):
            return True
        text = str(seen).lower()
        if any(marker in text for marker in _UNAVAILABLE_TEXT):
            return True
        seen = getattr(seen, "orig", None) or seen.__cause__ or seen.__context__
    return False


def unavailable_reason(exc: BaseException) -> str:
    """The driver's first line of ``exc``, without SQL or parameters."""
    original = getattr(exc, "orig", None)
    text = str(original if original is not None else exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return first[:300]


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
        try:  # owner-only: created 0600 before SQLite opens it (its -wal/-shm follow)
            owner_only_file(owner_only_dir(Path(database).parent) / Path(database).name)
        except OSError as exc:
            raise UserError(
                f"cannot make the folder of the database file {database!r} ({exc}); point "
                "SCENARIST_HOME at a writable folder, or SCENARIST_DATABASE_URL at a database"
            ) from exc
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


T = TypeVar("T")
Write = Callable[[AsyncConnection], Awaitable[T]]


@dataclass
class _Database:
    """What one loop keeps for one database: the engine, the write lock, queued writes."""

    engine: AsyncEngine
    write_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    queued: list[tuple[Write[Any], asyncio.Future[Any]]] = field(default_factory=list)


class _LoopState:
    """Everything one event loop keeps, disposed when the loop shuts down."""

    def __init__(self) -> None:
        self.databases: dict[tuple[str, bool], _Database] = {}
        self.ready_lock = asyncio.Lock()
        self._closer = self._close_at_shutdown()  # held here: the loop only keeps a weak ref

    async def start(self) -> None:
        await self._closer.asend(None)  # the loop now finalises it in shutdown_asyncgens

    async def _close_at_shutdown(self) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            databases, self.databases = list(self.databases.values()), {}
            for database in databases:
                await database.engine.dispose()


_loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = (
    weakref.WeakKeyDictionary()
)
_loops_lock = threading.Lock()
_migrated: set[str] = set()  # URLs brought to the latest schema by this process
_opened: set[str] = set()  # URLs whose first-open hook ran in this process


@asynccontextmanager
async def _migration_lock(url: str) -> AsyncIterator[None]:
    """Processes that open one new SQLite file at once migrate it one after the other (a
    lock on the file's folder, so no lock file is left behind), and the later ones find the
    schema current instead of racing to create it. PostgreSQL's migrations take an
    advisory lock of their own."""
    database = make_url(url).database
    if not url.startswith("sqlite") or not database:
        yield
        return
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX: one process at a time, as before
        yield
        return
    folder = os.open(Path(database).parent, os.O_RDONLY)
    try:
        await anyio.to_thread.run_sync(fcntl.flock, folder, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(folder, fcntl.LOCK_UN)
    finally:
        os.close(folder)


def _is_migrated(url: str) -> bool:
    """Whether this process already migrated ``url`` (and a SQLite file is still there)."""
    if url not in _migrated:
        return False
    database = make_url(url).database
    return not url.startswith("sqlite") or bool(database and Path(database).exists())


async def _loop_state() -> _LoopState:
    loop = asyncio.get_running_loop()
    with _loops_lock:
        state = _loops.get(loop)
        fresh = state is None
        if state is None:
            state = _loops[loop] = _LoopState()
    if fresh:
        await state.start()
    return state


class Database:
    """The engine for one database URL, migrated to the latest schema on first use, and
    the read/write connection contexts every query uses.

    ``url``: as :func:`~scenarist.store.location.resolve_database_url` reads it (default
    ``SCENARIST_DATABASE_URL``, else ``$SCENARIST_HOME/scenarist.db``). ``pooled=False``
    keeps no connection between operations (one is opened for each), for callers that
    want no open file handle between calls; the default keeps one pool per event loop.
    ``migrate=False`` skips the schema upgrade (the migration commands use it).
    ``project``: the project this store reads and writes (:mod:`scenarist.store.projects`;
    default: a server request's, else ``SCENARIST_PROJECT``, else ``"default"``).
    """

    def __init__(
        self,
        url: str | Path | None = None,
        *,
        pooled: bool = True,
        migrate: bool = True,
        project: str | None = None,
    ) -> None:
        from scenarist.store.projects import check_project

        self.url = resolve_database_url(url)
        self._pooled = pooled
        self._migrate = migrate
        self._project = None if project is None else check_project(project)

    @property
    def project(self) -> str:
        """The project every query of this store is scoped to (read at each use: a
        server's one store serves each request's project)."""
        if self._project is not None:
            return self._project
        from scenarist.store.projects import current_project

        return current_project()

    def scoped(self, project: str) -> Self:
        """This store (the same database and connections) on another project."""
        from scenarist.store.projects import check_project

        other = copy.copy(self)
        other._project = check_project(project)
        return other

    @functools.cached_property
    def dialect(self) -> str:
        """``"sqlite"`` or ``"postgresql"`` (read once: every write asks)."""
        return make_url(self.url).get_backend_name()

    async def _database(self) -> _Database:
        state = await _loop_state()
        key = (self.url, self._pooled)
        database = state.databases.get(key)
        if database is not None:
            return database
        async with state.ready_lock:
            database = state.databases.get(key)
            if database is None:
                engine = make_engine(self.url, pooled=self._pooled)
                try:
                    if self._migrate and not _is_migrated(self.url):
                        with unguarded():
                            await self._upgrade(engine)
                        _migrated.add(self.url)
                except BaseException:
                    await engine.dispose()
                    raise
                database = state.databases[key] = _Database(engine)
        with _loops_lock:
            first = self.url not in _opened
            _opened.add(self.url)
        if first and self._migrate:
            with unguarded():
                await self._on_first_open()
        return database

    async def _upgrade(self, engine: AsyncEngine) -> None:
        """Migrate to the latest schema; a file that is not a database, or a database
        written by a newer scenarist, is a :class:`UserError` naming it and the fix."""
        from scenarist.store.location import database_label
        from scenarist.store.sql.migrate import head_revision, is_current, upgrade

        where = database_label(self.url)
        try:
            async with _migration_lock(self.url):
                if not await is_current(engine):  # Alembic is imported only to migrate
                    await upgrade(engine)
        except UNAVAILABLE_ERRORS:
            raise
        except DatabaseError as exc:
            raise UserError(
                f"{where} cannot be used as a scenarist database "
                f"({unavailable_reason(exc)}); move it away or point SCENARIST_DATABASE_URL "
                "at another database"
            ) from exc
        except Exception as exc:
            from alembic.util.exc import CommandError

            if not isinstance(exc, CommandError):
                raise
            raise UserError(  # a revision this version does not ship
                f"the database {where} has a schema this version of scenarist does not know "
                f"({exc}; the newest it knows is {head_revision()!r}): it was written by a "
                "newer scenarist; upgrade scenarist, or point SCENARIST_DATABASE_URL elsewhere"
            ) from exc

    async def _on_first_open(self) -> None:
        """Called once per process and URL, after the schema is current (and outside the
        engine lock, so it may use the store)."""

    async def engine(self) -> AsyncEngine:
        """This loop's engine, created (and the schema migrated) on first use."""
        return (await self._database()).engine

    async def close(self) -> None:
        """Close this loop's connections to the database (it can be used again after)."""
        state = _loops.get(asyncio.get_running_loop())
        database = None if state is None else state.databases.pop((self.url, self._pooled), None)
        if database is not None:
            await database.engine.dispose()

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[AsyncConnection]:
        engine = await self.engine()
        with unguarded():  # a cassette replay's guard is for the agent, not the store
            async with engine.connect() as connection:
                yield connection

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[AsyncConnection]:
        """One transaction: committed when the block ends, rolled back if it raises."""
        database = await self._database()
        with unguarded():
            if self.dialect == "sqlite":
                async with database.write_lock, database.engine.begin() as connection:
                    yield connection
            else:
                async with database.engine.begin() as connection:
                    yield connection

    async def _batched(self, write: Write[T]) -> T:
        """Run ``write(connection)`` in a transaction shared with the writes queued beside
        it (see the module docstring); its result, or its own exception."""
        database = await self._database()
        done: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        database.queued.append((write, done))
        async with database.write_lock:
            if not done.done():
                batch, database.queued = database.queued, []
                with anyio.CancelScope(shield=True):  # a cancelled caller never half-commits
                    with unguarded():
                        await _commit(database.engine, batch)
        return done.result()

    def _insert(self, table: Table) -> Any:
        """The dialect's ``INSERT`` (with ``on_conflict_do_nothing`` / ``_do_update``)."""
        return _dialect_insert(self.dialect, table)

    def _upsert(self, table: Table, columns: Iterable[str], key: tuple[str, ...]) -> Any:
        """``INSERT ... ON CONFLICT (key) DO UPDATE`` of ``columns``, built once per dialect
        and shape (execute it with the row as parameters; SQLAlchemy caches its SQL). On a
        table with projects ``key`` starts with ``project``: ids are unique per project,
        so the row updated is always the writer's own."""
        return _upsert_statement(self.dialect, table, tuple(columns), key)


def _dialect_insert(dialect: str, table: Table) -> Any:
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table)
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table)


@functools.cache
def _upsert_statement(
    dialect: str, table: Table, columns: tuple[str, ...], key: tuple[str, ...]
) -> Any:
    statement = _dialect_insert(dialect, table)
    update = {name: statement.excluded[name] for name in columns if name not in key}
    return statement.on_conflict_do_update(index_elements=list(key), set_=update)


async def _commit(engine: AsyncEngine, batch: list[tuple[Write[Any], asyncio.Future[Any]]]) -> None:
    """Commit ``batch`` in one transaction; on failure, each write alone (so a bad write
    fails by itself) and every future gets its own result or error."""
    try:
        async with engine.begin() as connection:
            results = [await write(connection) for write, _ in batch]
    except Exception as exc:
        if len(batch) == 1:
            batch[0][1].set_exception(exc)
            return
    else:
        for (_, done), result in zip(batch, results, strict=True):
            done.set_result(result)
        return
    for write, done in batch:
        try:
            async with engine.begin() as connection:
                result = await write(connection)
        except Exception as exc:
            done.set_exception(exc)
        else:
            done.set_result(result)
