"""Retention: old runs and traces go; pinned ones, and traces that items or snapshots use,
stay. Run by ``admin.prune``, the admin endpoint and the server's start."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx2
import pytest
from tests.server.conftest import make_run_log, run_log_json

from scenarist._sync import run_sync
from scenarist.errors import UserError
from scenarist.model.items import ScenarioItem
from scenarist.model.record import TraceRecord
from scenarist.replay.snapshots import SnapshotData
from scenarist.server.app import create_app
from scenarist.store import admin
from scenarist.store.sql.store import SqlStore

OLD = datetime.now(UTC) - timedelta(days=100)


async def _seed(store: SqlStore) -> None:
    for trace_id in ("old", "old-pinned", "old-item", "old-snapshot"):
        await store.save_trace(TraceRecord(trace_id=trace_id, started_at=OLD))
    await store.save_trace(TraceRecord(trace_id="new", started_at=datetime.now(UTC)))
    await store.ingest_run_log(make_run_log("run-old", started_at=OLD))
    await store.ingest_run_log(make_run_log("run-old-pinned", started_at=OLD))
    await store.ingest_run_log(make_run_log("run-new"))
    assert await store.set_pinned("trace", "old-pinned")
    assert await store.set_pinned("run", "run-old-pinned")
    await store.save_items("s", [ScenarioItem(name="i", trace_id="old-item")])
    snapshot = {"name": "g", "trace_id": "old-snapshot", "steps": [{"name": "x"}]}
    await store.save_snapshot("g", SnapshotData.model_validate(snapshot))


async def _left(store: SqlStore) -> tuple[set[str], set[str]]:
    traces = {t.trace_id for t in (await store.search_traces(limit=100)).items}
    runs = {r.run_id for r in (await store.list_runs(limit=100)).items}
    return traces, runs


@pytest.mark.anyio
async def test_prune_keeps_pinned_and_referenced_traces_and_pinned_runs(
    database_url: str,
) -> None:
    store = SqlStore(database_url)
    try:
        await _seed(store)
        result = await store.prune_older_than_days(30)
        assert (result.runs_deleted, result.traces_deleted) == (1, 1)
        traces, runs = await _left(store)
        assert traces == {"old-pinned", "old-item", "old-snapshot", "new"}
        assert runs == {"run-old-pinned", "run-new"}
        assert await store.get_run("run-old") is None
        pinned = await store.get_run("run-old-pinned")
        assert pinned is not None and len(pinned.scenarios) == 2  # kept whole
        # once nothing refers to it, the item's trace may go
        await store.save_items("s", [])
        assert (await store.prune_older_than_days(30)).traces_deleted == 1
        assert (await store.prune_older_than_days(None)).cutoff is None  # off: no-op
    finally:
        await store.close()


@pytest.mark.anyio
async def test_pins_survive_re_uploads(database_url: str) -> None:
    store = SqlStore(database_url)
    try:
        await store.save_trace(TraceRecord(trace_id="t", started_at=OLD))
        await store.set_pinned("trace", "t")
        await store.save_trace(TraceRecord(trace_id="t", started_at=OLD))  # re-sent
        partial = make_run_log("r", started_at=OLD)
        partial.footer = None
        await store.ingest_run_log(partial)
        await store.set_pinned("run", "r")
        await store.ingest_run_log(make_run_log("r", started_at=OLD))  # completes it
        await store.prune_older_than_days(1)
        assert await store.get_trace("t") is not None
        assert await store.get_run("r") is not None
        assert not await store.set_pinned("run", "nope")
    finally:
        await store.close()


@pytest.mark.anyio
async def test_pin_endpoints_and_admin_prune(app_client: httpx2.AsyncClient) -> None:
    await app_client.post("/v1/traces", json={"trace_id": "t1", "started_at": OLD.isoformat()})
    await app_client.post("/api/runs", json=run_log_json(make_run_log("r1", started_at=OLD)))
    pinned = await app_client.post("/api/traces/t1/pin")
    assert pinned.status_code == 200 and pinned.json() == {"trace_id": "t1", "pinned": True}
    assert (await app_client.post("/api/traces/t1/pin")).status_code == 200  # idempotent
    assert (await app_client.post("/api/runs/r1/pin")).json()["pinned"] is True
    assert (await app_client.post("/api/traces/nope/pin")).status_code == 404
    assert (await app_client.delete("/api/runs/r1/pin")).json()["pinned"] is False
    done = await app_client.post("/api/retention/prune")
    assert done.status_code == 200 and done.json()["cutoff"] is None  # off by default


def test_cli_prune_and_pruning_at_server_start(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SqlStore(database_url)
    run_sync(_seed, store)
    monkeypatch.delenv("SCENARIST_RETENTION_DAYS", raising=False)
    assert admin.prune(database_url).cutoff is None
    with pytest.raises(UserError, match="positive number of days"):
        admin.prune(database_url, retention_days=-3)
    monkeypatch.setenv("SCENARIST_RETENTION_DAYS", "soon")
    with pytest.raises(UserError, match="SCENARIST_RETENTION_DAYS"):
        admin.prune(database_url)
    monkeypatch.setenv("SCENARIST_RETENTION_DAYS", "30")

    app = create_app(database_url)

    async def start_and_stop() -> None:
        async with app.router.lifespan_context(app):
            pass

    run_sync(start_and_stop)
    traces, runs = run_sync(_left, store)
    assert "old" not in traces and "run-old" not in runs
    assert {"old-pinned", "old-item", "old-snapshot"} <= traces
    again = admin.prune(database_url)
    assert again.cutoff is not None and (again.runs_deleted, again.traces_deleted) == (0, 0)
