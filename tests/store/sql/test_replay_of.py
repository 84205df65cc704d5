"""``traces.replay_of``: a stored replay is found by the trace it replays (the trace
page's replays), in its own project only, and a database from before the column gets it
from the stored documents when it upgrades."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Connection

from scenarist.model.record import TraceRecord
from scenarist.store.sql import dashboard as queries
from scenarist.store.sql import migrate
from scenarist.store.sql._rows import trace_row
from scenarist.store.sql.migrate import current_revision
from scenarist.store.sql.store import SqlStore

pytestmark = pytest.mark.anyio


def _replay(trace_id: str, original: object) -> TraceRecord:
    return TraceRecord(trace_id=trace_id, is_replay=True, metadata={"replay_of": original})


def _downgrade_to(connection: Connection, revision: str) -> None:
    from alembic import command

    from scenarist.store.sql.migrate import alembic_config

    command.downgrade(alembic_config(connection), revision)


async def test_replays_are_found_by_their_original_in_their_project(database_url: str) -> None:
    store = SqlStore(database_url)
    other = store.scoped("other")
    try:
        await store.save_trace(TraceRecord(trace_id="tr_original"))
        await store.save_traces([_replay("tr_r1", "tr_original"), _replay("tr_r2", "tr_original")])
        await store.save_trace(_replay("tr_odd", {"not": "an id"}))  # kept, never matched
        await store.save_trace(
            TraceRecord(trace_id="tr_not_a_replay", metadata={"replay_of": "tr_original"})
        )
        await other.save_trace(_replay("tr_theirs", "tr_original"))
        found = await queries.replays_of(store, "tr_original")
        assert sorted(r.trace_id for r in found) == ["tr_r1", "tr_r2"]
        assert [r.trace_id for r in await queries.replays_of(other, "tr_original")] == ["tr_theirs"]
    finally:
        await store.close()


async def test_replays_stored_before_the_column_are_found_after_the_upgrade(
    database_url: str,
) -> None:
    store = SqlStore(database_url)
    try:
        engine = await store.engine()
        async with engine.begin() as connection:
            await connection.run_sync(_downgrade_to, "0006")
        assert await current_revision(engine) == "0006"
        # what a 0006 database holds: the replay's document, no replay_of column
        record = _replay("tr_old_replay", "tr_original")
        row = trace_row(record, datetime.now(UTC))
        row.pop("replay_of")
        for column in ("sort_at", "started_at", "ended_at"):  # stored as naive UTC
            if row[column] is not None:
                row[column] = row[column].astimezone(UTC).replace(tzinfo=None)
        async with engine.begin() as connection:
            await connection.execute(
                text(
                    "INSERT INTO traces (project, trace_id, agent_name, status, sort_at, "
                    "started_at, ended_at, duration_ms, cost_usd, span_count, is_replay, "
                    "document, pinned) VALUES ('default', :trace_id, :agent_name, :status, "
                    ":sort_at, :started_at, :ended_at, :duration_ms, :cost_usd, :span_count, "
                    ":is_replay, :document, false)"
                ),
                row,
            )
        await migrate.upgrade(engine)
        found = await queries.replays_of(store, "tr_original")
        assert [r.trace_id for r in found] == ["tr_old_replay"]
    finally:
        await store.close()
