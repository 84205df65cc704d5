"""``SqlStore`` as a :class:`Store`, the migrations, and the SQLite settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text
from tests.server.conftest import minutes_ago
from tests.server.test_api import VEVAL_TRACE

from scenarist.errors import UserError
from scenarist.model.items import ScenarioItem, ScenarioRunRecord
from scenarist.model.record import TraceRecord
from scenarist.model.trace import Span
from scenarist.model.veval_wire import from_veval
from scenarist.replay.snapshots import SnapshotData
from scenarist.store.base import Store
from scenarist.store.sql.engine import resolve_database_url
from scenarist.store.sql.models import Base
from scenarist.store.sql.store import SqlStore

pytestmark = pytest.mark.anyio


async def test_sqlstore_implements_the_store_protocol(database_url: str) -> None:
    store = SqlStore(database_url)
    assert isinstance(store, Store)
    try:
        record = from_veval(VEVAL_TRACE)
        await store.save_trace(record)
        await store.save_trace(record)  # replace, not duplicate
        assert await store.get_trace(record.trace_id) == record
        assert await store.get_trace("nope") is None

        items = [ScenarioItem(name="a", input="hi"), ScenarioItem(name="b", trace_id="tr_1")]
        await store.save_items("s", items)
        await store.save_items("s", items[:1])
        assert [i.name for i in await store.get_items("s")] == ["a"]

        run = ScenarioRunRecord(
            run_id="r1", scenario_name="s", started_at=minutes_ago(1), ended_at=minutes_ago(0),
            duration_ms=5.0, passed=True, pass_count=1, fail_count=0,
        )  # fmt: skip
        await store.save_scenario_run(run)
        await store.save_scenario_run(run)
        assert await store.list_scenario_runs("s") == [run]

        snap = SnapshotData.model_validate(
            {"name": "g", "trace_id": record.trace_id, "steps": [{"name": "x", "kind": "tool"}]}
        )
        await store.save_snapshot("g", snap)
        assert await store.get_snapshot("g") == snap
        assert await store.get_snapshot("missing") is None
    finally:
        await store.close()


async def test_save_traces_stores_a_batch_at_once_and_the_last_of_an_id_wins(
    database_url: str,
) -> None:
    store = SqlStore(database_url)
    try:
        first = from_veval(VEVAL_TRACE)
        second = first.model_copy(update={"trace_id": "tr_second", "agent_name": "other"})
        newer = first.model_copy(update={"agent_name": "renamed"})
        await store.save_traces([first, second, newer])
        assert await store.get_trace(second.trace_id) == second
        assert await store.get_trace(first.trace_id) == newer
        await store.save_traces([])  # nothing to do
    finally:
        await store.close()


async def test_a_trace_is_kept_with_its_total_as_veval_server_computes_it(
    database_url: str,
) -> None:
    """A record sent without ``total_cost_usd`` (a hand-built ``TraceData``) is stored
    with the steps' cost, a given total as given; the caller's record is left as it is."""
    store = SqlStore(database_url)
    try:
        steps = [Span(span_id="s1", status="success", cost_usd=0.25)]
        unpriced = TraceRecord(trace_id="tr_unpriced", status="success", steps=steps)
        priced = TraceRecord(trace_id="tr_priced", total_cost_usd=2.0, steps=steps)
        await store.save_trace(unpriced)
        await store.save_traces([priced])
        assert unpriced.total_cost_usd is None
        loaded = await store.get_trace("tr_unpriced")
        assert loaded is not None and loaded.total_cost_usd == 0.25
        both = await store.get_traces(["tr_unpriced", "tr_priced"])
        assert {k: r.total_cost_usd for k, r in both.items()} == {
            "tr_unpriced": 0.25,
            "tr_priced": 2.0,
        }
        # a document stored before records kept their total gets it when read
        legacy = unpriced.model_dump_json(exclude={"total_cost_usd"})
        engine = await store.engine()
        async with engine.begin() as connection:
            await connection.execute(
                text("UPDATE traces SET document = :document WHERE trace_id = 'tr_unpriced'"),
                {"document": legacy},
            )
        loaded = await store.get_trace("tr_unpriced")
        assert loaded is not None and loaded.total_cost_usd == 0.25
    finally:
        await store.close()


async def test_a_trace_whose_steps_cost_nothing_is_kept_without_a_total(
    database_url: str,
) -> None:
    """Veval's SDK sends a zero total as ``None`` (``total_cost or None``): a record whose
    steps cost nothing is kept and read back without one, its cost column still 0; a
    total given as 0 is kept as given."""
    store = SqlStore(database_url)
    try:
        free = [Span(span_id="s1", status="success", cost_usd=0.0), Span(span_id="s2")]
        await store.save_trace(TraceRecord(trace_id="tr_free", status="success", steps=free))
        await store.save_trace(TraceRecord(trace_id="tr_zero", total_cost_usd=0.0, steps=free))
        await store.save_trace(TraceRecord(trace_id="tr_none", steps=[Span(span_id="s3")]))
        both = await store.get_traces(["tr_free", "tr_zero", "tr_none"])
        assert {k: r.total_cost_usd for k, r in both.items()} == {
            "tr_free": None,
            "tr_zero": 0.0,
            "tr_none": None,
        }
        assert both["tr_free"].cost_usd == 0.0  # what the dashboard and reports read
        page = await store.search_traces(limit=10)
        costs = {t.trace_id: t.cost_usd for t in page.items}
        assert costs["tr_free"] == 0.0 and costs["tr_none"] is None
    finally:
        await store.close()


async def test_a_batch_with_one_unstorable_trace_stores_none_of_it(database_url: str) -> None:
    store = SqlStore(database_url)
    try:
        good = from_veval(VEVAL_TRACE)
        bad = good.model_copy(update={"trace_id": "tr_" + "x" * 5000})
        with pytest.raises(UserError, match="trace_id is 5003 characters long"):
            await store.save_traces([good, bad])
        assert await store.get_trace(good.trace_id) is None
    finally:
        await store.close()


def _diff(connection: object) -> list[object]:
    context = MigrationContext.configure(connection)  # type: ignore[arg-type]
    return list(compare_metadata(context, Base.metadata))


async def test_migrations_create_exactly_the_models(database_url: str) -> None:
    store = SqlStore(database_url)
    try:
        engine = await store.engine()
        async with engine.connect() as connection:
            assert await connection.run_sync(_diff) == []
    finally:
        await store.close()


async def test_sqlite_runs_in_wal_mode(tmp_path: Path) -> None:
    store = SqlStore(str(tmp_path / "plain-path.db"))
    try:
        async with store._read() as connection:
            mode = await connection.scalar(text("PRAGMA journal_mode"))
        assert mode == "wal"
    finally:
        await store.close()


def test_database_url_defaults_and_drivers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SCENARIST_DATABASE_URL", raising=False)
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path))
    assert resolve_database_url() == f"sqlite+aiosqlite:///{tmp_path / 'scenarist.db'}"
    assert resolve_database_url("postgresql://u@h/d") == "postgresql+asyncpg://u@h/d"
    assert resolve_database_url("sqlite:///x.db") == "sqlite+aiosqlite:///x.db"
    monkeypatch.setenv("SCENARIST_DATABASE_URL", "postgres://u@h/d")
    assert resolve_database_url() == "postgresql+asyncpg://u@h/d"


def test_sqlstore_works_from_sync_wrappers(tmp_path: Path) -> None:
    """Each ``run_sync`` call has its own event loop, hence its own engine."""
    from scenarist._sync import run_sync

    store = SqlStore(str(tmp_path / "s.db"))
    for i in range(3):
        run_sync(store.save_trace, TraceRecord(trace_id=f"t{i}"))
    assert run_sync(store.get_trace, "t2") == TraceRecord(trace_id="t2")
