"""The SQL store's connection discipline: one engine per loop (disposed with it), grouped
concurrent writes, and a failing or cancelled write that never takes the others with it.
On SQLite and PostgreSQL alike."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from sqlalchemy import event, text
from sqlalchemy.exc import OperationalError, ProgrammingError

from scenarist.store.sql.store import SqlStore
from scenarist.tracing.record import TraceRecord

pytestmark = pytest.mark.anyio


def _sqlite_threads() -> list[threading.Thread]:
    """aiosqlite's connection threads (one per open connection)."""
    return [t for t in threading.enumerate() if "_connection_worker_thread" in t.name]


async def test_stores_on_one_url_share_this_loops_engine(database_url: str) -> None:
    first, second = SqlStore(database_url), SqlStore(database_url)
    assert await first.engine() is await second.engine()


async def test_concurrent_writes_are_grouped_and_all_kept(database_url: str) -> None:
    store = SqlStore(database_url)
    commits: list[int] = []
    event.listen((await store.engine()).sync_engine, "commit", lambda _: commits.append(1))
    records = [TraceRecord(trace_id=f"tr_{i}", input=i) for i in range(40)]
    await asyncio.gather(*(store.save_trace(record) for record in records))
    assert 1 <= len(commits) < len(records)  # grouped, and at least one commit happened
    for record in records:
        stored = await store.get_trace(record.trace_id)
        assert stored is not None and stored.input == record.input


async def test_a_failing_write_fails_alone(database_url: str) -> None:
    store = SqlStore(database_url)

    async def broken(connection: object) -> None:
        await connection.execute(text("INSERT INTO no_such_table VALUES (1)"))  # type: ignore[attr-defined]

    good = [store.save_trace(TraceRecord(trace_id=f"ok_{i}")) for i in range(5)]
    outcomes = await asyncio.gather(
        *good[:2], store._batched(broken), *good[2:], return_exceptions=True
    )
    assert [type(o).__name__ for o in outcomes].count("NoneType") == 5
    assert isinstance(outcomes[2], OperationalError | ProgrammingError)
    for i in range(5):
        assert await store.get_trace(f"ok_{i}") is not None


async def test_a_cancelled_writer_never_loses_the_writes_it_carried(database_url: str) -> None:
    store = SqlStore(database_url)
    await store.save_trace(TraceRecord(trace_id="warm"))  # the schema exists before the race
    tasks = [
        asyncio.create_task(store.save_trace(TraceRecord(trace_id=f"c_{i}"))) for i in range(10)
    ]
    await asyncio.sleep(0)  # every task has queued its write
    tasks[0].cancel()
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(o is None for o in outcomes[1:]), outcomes
    for i in range(1, 10):
        assert await store.get_trace(f"c_{i}") is not None


def test_connections_close_when_the_loop_ends(tmp_path: Path) -> None:
    before = set(_sqlite_threads())
    store = SqlStore(tmp_path / "scenarist.db")
    for i in range(3):  # three loops, as three sync calls make
        asyncio.run(store.save_trace(TraceRecord(trace_id=f"t{i}")))
        for thread in set(_sqlite_threads()) - before:
            thread.join(timeout=30)
        assert set(_sqlite_threads()) - before == set()
    assert asyncio.run(store.get_trace("t2")) is not None


def test_sync_calls_on_fresh_loops_see_each_others_writes(tmp_path: Path) -> None:
    from scenarist._sync import run_sync

    writer, reader = SqlStore(tmp_path / "s.db"), SqlStore(tmp_path / "s.db")
    for i in range(3):
        run_sync(writer.save_trace, TraceRecord(trace_id=f"s{i}", output=i))
        stored = run_sync(reader.get_trace, f"s{i}")
        assert stored is not None and stored.output == i
