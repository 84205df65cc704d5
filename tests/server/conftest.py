"""Server test fixtures: the app behind httpx2's ASGI transport and a real uvicorn server
on a free loopback port, over each kind of database (``database_url``, from
:mod:`tests.helpers.databases`)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest

from scenarist import Equals, Scenario, Suite
from scenarist.formats.runlog import RunLog, run_log_from_suite_result
from scenarist.server.app import create_app
from scenarist.server.threaded import ThreadedServer, free_port

__all__ = ["LiveServer", "free_port", "make_run_log", "minutes_ago", "run_log_json"]


@pytest.fixture
async def app_client(database_url: str) -> AsyncIterator[httpx2.AsyncClient]:
    """An HTTP client for a loopback app in open mode (no keys yet)."""
    app = create_app(database_url)
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            client.app = app  # type: ignore[attr-defined]
            yield client


LiveServer = ThreadedServer  # the app on uvicorn in a thread, at ``.url``


@pytest.fixture
def live_server(database_url: str) -> Iterator[LiveServer]:
    """The app served by uvicorn on a real socket (127.0.0.1, a free port)."""
    with LiveServer(create_app(database_url)) as server:
        yield server


def tenant_admin_keys(
    database_url: str, projects: tuple[str, ...] = ("alpha", "beta")
) -> dict[str, str]:
    """An admin key limited to each of ``projects`` (project -> the key's secret)."""
    from scenarist._sync import run_sync
    from scenarist.store.sql.store import SqlStore

    store = SqlStore(database_url)
    keys = {}
    for project in projects:
        _, keys[project] = run_sync(
            store.create_api_key, ["ingest", "read", "admin"], project, projects=[project]
        )
    return keys


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
