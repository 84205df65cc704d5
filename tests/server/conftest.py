"""Server test fixtures: a SQLite file per test and a throw-away PostgreSQL 15 cluster
(one per session, a fresh database per test cloned from a migrated template), the app
behind httpx2's ASGI transport, and a real uvicorn server on a free loopback port."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest

from scenarist import Equals, Scenario, Suite
from scenarist.runlog import RunLog, run_log_from_suite_result
from scenarist.server.app import create_app
from scenarist.store.sql.store import SqlStore

PGBIN = Path("/usr/lib/postgresql/15/bin")
PG_USER = "scenarist"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_postgres(*command: str) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else list(command)


class PgCluster:
    def __init__(self) -> None:
        self.port = free_port()
        self.data = Path(tempfile.mkdtemp(prefix="scenarist-pg-"))
        self.template = "scenarist_template"

    def run(self, *command: str) -> None:
        subprocess.run(command, check=True, capture_output=True, timeout=60)

    def start(self) -> None:
        if os.geteuid() == 0:
            shutil.chown(self.data, "postgres", "postgres")
        self.run(
            *_as_postgres(
                str(PGBIN / "initdb"), "-D", str(self.data), "-U", PG_USER,
                "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8",
            )
        )  # fmt: skip
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.data} -c fsync=off"
        self.run(
            *_as_postgres(
                str(PGBIN / "pg_ctl"), "-D", str(self.data), "-l",
                str(self.data / "server.log"), "-w", "-o", options, "start",
            )
        )  # fmt: skip
        self.createdb(self.template)
        import anyio

        store = SqlStore(self.url(self.template))
        anyio.run(self._migrate, store)

    @staticmethod
    async def _migrate(store: SqlStore) -> None:
        await store.engine()
        await store.close()

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
            _as_postgres(str(PGBIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "stop"),
            capture_output=True,
            timeout=60,
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


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty database of each kind (the same tests run on both)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'scenarist.db'}"
    cluster = request.getfixturevalue("pg_cluster")
    if cluster is None:
        pytest.skip(f"PostgreSQL binaries not found in {PGBIN}")
    name = "t_" + uuid.uuid4().hex[:12]
    cluster.createdb(name, template=cluster.template)
    return str(cluster.url(name))


@pytest.fixture
async def app_client(database_url: str) -> AsyncIterator[httpx2.AsyncClient]:
    """An HTTP client for a loopback app in open mode (no keys yet)."""
    app = create_app(database_url)
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://test") as client:
            client.app = app  # type: ignore[attr-defined]
            yield client


class LiveServer:
    def __init__(self, app: Any) -> None:
        import uvicorn

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture
def live_server(database_url: str) -> Iterator[LiveServer]:
    """The app served by uvicorn on a real socket (127.0.0.1, a free port)."""
    with LiveServer(create_app(database_url)) as server:
        yield server


def make_run_log(
    run_id: str | None = None,
    *,
    outcomes: dict[str, bool] | None = None,
    started_at: datetime | None = None,
    suite_name: str = "support",
) -> RunLog:
    """A real run log: one scenario per entry of ``outcomes`` (name → passes)."""
    outcomes = outcomes if outcomes is not None else {"refund": True, "greeting": False}
    scenarios = [
        Scenario(name)
        .interact("hello", lambda x: x)
        .check(Equals(expected_value="hello" if ok else "bye", target_key="trace.last.outputs"))
        for name, ok in outcomes.items()
    ]
    result = Suite(name=suite_name, scenarios=scenarios).run_sync()
    result.started_at = started_at or datetime.now(UTC)
    return run_log_from_suite_result(result, run_id=run_id or uuid.uuid4().hex)


def run_log_json(log: RunLog) -> dict[str, Any]:
    return log.model_dump(mode="json", fallback=str)


def minutes_ago(n: int) -> datetime:
    return datetime.now(UTC) - timedelta(minutes=n)


@pytest.fixture(autouse=True)
def _private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's spool and local store live in its own folder, never the repository's."""
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SCENARIST_URL", raising=False)
