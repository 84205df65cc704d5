"""Databases for tests: a SQLite file per test and a throw-away PostgreSQL 15 cluster on
loopback (one per session, a fresh database per test cloned from a migrated template).
The fixtures are registered for every test by ``tests/conftest.py``.

Both kinds start from a template migrated once per session (per xdist worker): a test's
SQLite file is a copy of a migrated file, as its PostgreSQL database is a clone of a
migrated one. Migrating from empty costs about 0.2 s of CPU per database, and the schema
is the same either way (``tests/store/sql/test_store.py`` compares it with the models).
The cluster's files live in ``/dev/shm`` when it exists: on a busy machine, removing a
cluster of a few hundred databases from disk took over a minute (past the last test's
timeout), and from memory it takes a second."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.limits import HANG_S

from scenarist.server.threaded import free_port
from scenarist.store.sql.store import SqlStore

__all__ = [
    "PGBIN",
    "PgCluster",
    "database_url",
    "free_port",
    "pg_cluster",
    "short_busy_timeout",
    "sqlite_template",
    "write_locked",
]

PGBIN = Path("/usr/lib/postgresql/15/bin")
PG_USER = "scenarist"
# pg_ctl's own wait for the server to start or stop (60 s unless told): a limit, not a verdict
PG_CTL_WAIT = str(int(HANG_S))


def _as_postgres(*command: str) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else list(command)


SHM = Path("/dev/shm")


def _cluster_folder() -> Path:
    """Memory-backed when the machine has ``/dev/shm`` (fsync is off anyway)."""
    parent = SHM if SHM.is_dir() and os.access(SHM, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="scenarist-pg-", dir=parent))


class PgCluster:
    def __init__(self) -> None:
        self.port = free_port()
        self.data = _cluster_folder()
        self.template = "scenarist_template"
        self.options = ""

    def run(self, *command: str) -> None:
        subprocess.run(command, check=True, capture_output=True, timeout=HANG_S)

    def start(self) -> None:
        if os.geteuid() == 0:
            shutil.chown(self.data, "postgres", "postgres")
        self.run(
            *_as_postgres(
                str(PGBIN / "initdb"), "-D", str(self.data), "-U", PG_USER,
                "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8",
            )
        )  # fmt: skip
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.data} -c fsync=off"
            " -c max_wal_size=128MB"  # in memory: WAL recycled early, not a default 1 GB
        )
        self.options = options
        self.start_server()
        self.createdb(self.template)
        import anyio

        store = SqlStore(self.url(self.template))
        anyio.run(self._migrate, store)

    @staticmethod
    async def _migrate(store: SqlStore) -> None:
        await store.engine()
        await store.close()

    def start_server(self) -> None:
        """Start the cluster's server (again, after :meth:`stop_server`)."""
        self.run(
            *_as_postgres(
                str(PGBIN / "pg_ctl"), "-D", str(self.data), "-l",
                str(self.data / "server.log"), "-w", "-t", PG_CTL_WAIT, "-o", self.options,
                "start",
            )
        )  # fmt: skip

    def stop_server(self, mode: str = "fast") -> None:
        """Stop the server, keeping the cluster's files (an outage; see :meth:`start_server`)."""
        self.run(
            *_as_postgres(
                str(PGBIN / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "-t",
                PG_CTL_WAIT, "stop",
            )
        )  # fmt: skip

    def restart(self, mode: str = "fast") -> None:
        """``pg_ctl restart``: ``fast`` ends sessions cleanly, ``immediate`` as a crash does.
        (The server's output goes to its log: a pipe left open would keep ``run`` waiting.)"""
        self.run(
            *_as_postgres(
                str(PGBIN / "pg_ctl"), "-D", str(self.data), "-l",
                str(self.data / "server.log"), "-m", mode, "-w", "-t", PG_CTL_WAIT,
                "-o", self.options, "restart",
            )
        )  # fmt: skip

    def createdb(self, name: str, template: str | None = None) -> None:
        extra = ["-T", template] if template else []
        self.run(
            str(PGBIN / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", PG_USER,
            *extra, name,
        )  # fmt: skip

    def url(self, name: str) -> str:
        return f"postgresql://{PG_USER}@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        subprocess.run(
            _as_postgres(
                str(PGBIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-t", PG_CTL_WAIT, "stop"
            ),
            capture_output=True,
            timeout=HANG_S,
            check=False,
        )
        shutil.rmtree(self.data, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster | None]:
    if not (PGBIN / "initdb").exists():
        yield None
        return
    cluster = PgCluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to the head revision, copied for each test."""
    import anyio

    path = tmp_path_factory.mktemp("sqlite-template") / "template.db"
    anyio.run(PgCluster._migrate, SqlStore(f"sqlite:///{path}"))
    connection = sqlite3.connect(path)
    try:  # everything in the main file, nothing left in a -wal file
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()
    return path


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty (migrated) database of each kind (the same tests run on both)."""
    if request.param == "sqlite":
        path = tmp_path / "scenarist.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        return f"sqlite:///{path}"
    cluster = request.getfixturevalue("pg_cluster")
    if cluster is None:
        pytest.skip(f"PostgreSQL binaries not found in {PGBIN}")
    name = "t_" + uuid.uuid4().hex[:12]
    cluster.createdb(name, template=cluster.template)
    return str(cluster.url(name))


@contextmanager
def write_locked(path: Path) -> Iterator[None]:
    """Another connection's exclusive transaction on the SQLite file, held for the block."""
    holder = sqlite3.connect(path, isolation_level=None, timeout=HANG_S)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        yield
        holder.execute("ROLLBACK")
    finally:
        holder.close()


@pytest.fixture
def short_busy_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite waits 30 s for a lock in production; 100 ms here, so the test is quick."""
    from scenarist.store.sql import engine as engine_module

    original = engine_module._sqlite_pragmas

    def pragmas(dbapi_connection: Any, record: Any) -> None:
        original(dbapi_connection, record)
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA busy_timeout=100")
        cursor.close()

    monkeypatch.setattr(engine_module, "_sqlite_pragmas", pragmas)
