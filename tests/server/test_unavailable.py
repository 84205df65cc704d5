"""A database that is locked or gone answers 503 ``database_unavailable`` (never 500), and
the client spools what it could not deliver, then ``scenarist sync`` delivers it once."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from tests.helpers.databases import short_busy_timeout, write_locked  # noqa: F401  (fixture)
from tests.server.conftest import LiveServer, free_port, make_run_log, run_log_json

from scenarist._sync import run_sync
from scenarist.server.app import create_app
from scenarist.store import admin
from scenarist.store.remote import RemoteStore
from scenarist.store.sql.store import SqlStore


@pytest.mark.usefixtures("short_busy_timeout")
def test_locked_sqlite_answers_503_and_the_spooled_run_is_synced_once(tmp_path: Path) -> None:
    path = tmp_path / "scenarist.db"
    url = f"sqlite:///{path}"
    log = make_run_log("run-locked")
    with LiveServer(create_app(url)) as server:
        with write_locked(path):
            direct = httpx2.post(f"{server.url}/api/runs", json=run_log_json(log), timeout=60)
            assert direct.status_code == 503
            error = direct.json()["error"]
            assert error["code"] == "database_unavailable"
            assert "locked" in error["reason"]
            assert direct.headers["retry-after"] == "1"
            assert httpx2.get(f"{server.url}/api/runs", timeout=60).status_code == 200  # WAL

            store = RemoteStore(server.url, retries=1)
            uploaded = run_sync(store.upload_run_log, log)
            assert uploaded.spooled is not None and uploaded.created is None
            assert len(store.spool.pending()) == 1
        result = admin.sync(server.url)  # the lock is gone: delivered now
        assert (len(result.sent), result.remaining) == (1, 0)
        assert admin.sync(server.url).sent == []
    stored = SqlStore(url)
    assert run_sync(stored.count_runs) == 1
    detail = run_sync(stored.get_run, "run-locked")
    assert detail is not None and len(detail.scenarios) == 2


@pytest.mark.anyio
async def test_unreachable_postgresql_answers_503_not_500() -> None:
    pytest.importorskip("asyncpg")
    gone = SqlStore(f"postgresql://scenarist@127.0.0.1:{free_port()}/gone", pooled=True)
    app = create_app(store=gone)  # no lifespan: the database "went away" after the start
    transport = httpx2.ASGITransport(app=app)
    try:
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            for method, path in (("GET", "/api/runs"), ("POST", "/v1/traces")):
                body = {"trace_id": "t1"} if method == "POST" else None
                response = await client.request(method, path, json=body)
                assert response.status_code == 503, response.text
                assert response.json()["error"]["code"] == "database_unavailable"
            assert (await client.get("/api/health")).status_code == 200  # no query: alive
    finally:
        await gone.close()
