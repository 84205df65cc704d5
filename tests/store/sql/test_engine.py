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
from tests.helpers.limits import HANG_S
from tests.server.conftest import make_run_log

from scenarist.model.record import TraceRecord
from scenarist.store.sql.store import SqlStore

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
            thread.join(timeout=HANG_S)
        assert set(_sqlite_threads()) - before == set()
    assert asyncio.run(store.get_trace("t2")) is not None


def test_sync_calls_on_fresh_loops_see_each_others_writes(tmp_path: Path) -> None:
    from scenarist._sync import run_sync

    writer, reader = SqlStore(tmp_path / "s.db"), SqlStore(tmp_path / "s.db")
    for i in range(3):
        run_sync(writer.save_trace, TraceRecord(trace_id=f"s{i}", output=i))
        stored = run_sync(reader.get_trace, f"s{i}")
        assert stored is not None and stored.output == i


@pytest.fixture
def cli_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCENARIST_DATABASE_URL", raising=False)
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path / "home"))
    return tmp_path


def _one_error_line(*args: str) -> str:
    from typer.testing import CliRunner

    from scenarist.cli.app import app

    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "scenarist bug" not in lines[0], result.stderr
    return lines[0]


def test_a_home_that_is_a_file_is_named_with_the_fix(cli_home: Path) -> None:
    (cli_home / "home").write_text("not a folder")
    line = _one_error_line("items", "list", "support")
    assert "cannot make the folder of the database file" in line
    assert "point SCENARIST_HOME at a writable folder" in line


def test_a_file_that_is_not_a_database_is_named_with_the_fix(cli_home: Path) -> None:
    (cli_home / "home").mkdir()
    (cli_home / "home" / "scenarist.db").write_bytes(b"these are not the bytes of sqlite" * 40)
    line = _one_error_line("traces", "export", "tr_1")
    assert f"{(cli_home / 'home' / 'scenarist.db').resolve()} cannot be used" in line
    assert "file is not a database" in line and "move it away" in line


def test_a_database_from_a_newer_scenarist_is_refused(
    cli_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    newer = sqlite3.connect(cli_home / "newer.db")
    newer.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) PRIMARY KEY)")
    newer.execute("INSERT INTO alembic_version VALUES ('r9999_from_the_future')")
    newer.commit()
    newer.close()
    monkeypatch.setenv("SCENARIST_DATABASE_URL", str(cli_home / "newer.db"))
    line = _one_error_line("items", "list", "support")
    assert "r9999_from_the_future" in line and "written by a newer scenarist" in line


def test_an_unreachable_database_server_is_one_line(
    cli_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.helpers.databases import free_port

    monkeypatch.setenv("SCENARIST_DATABASE_URL", f"postgresql://ci@127.0.0.1:{free_port()}/x")
    line = _one_error_line("items", "list", "support")
    assert line.startswith("error: the database is unavailable (locked, gone or unreachable)")
    assert "check SCENARIST_DATABASE_URL" in line


def test_processes_writing_one_file_at_once_lose_nothing(tmp_path: Path) -> None:
    """Three processes (say ``scenarist run`` and two test sessions) share the default
    database; SQLite's busy timeout and WAL keep every write."""
    import os
    import subprocess
    import sys

    code = (
        "import asyncio, sys\n"
        "from scenarist.store.default import default_store\n"
        "from scenarist.model.record import TraceRecord\n"
        "async def main():\n"
        "    store = default_store()\n"
        "    await asyncio.gather(*(store.save_trace(TraceRecord(trace_id=f'{sys.argv[1]}_{i}'))\n"
        "                           for i in range(60)))\n"
        "asyncio.run(main())\n"
    )
    env = {**os.environ, "SCENARIST_HOME": str(tmp_path)}
    env.pop("SCENARIST_DATABASE_URL", None)
    workers = [
        subprocess.Popen([sys.executable, "-c", code, name], env=env, stderr=subprocess.PIPE)
        for name in ("a", "b", "c")
    ]
    for worker in workers:
        _, err = worker.communicate(timeout=HANG_S)
        assert worker.returncode == 0, err.decode()
    store = SqlStore(tmp_path / "scenarist.db")
    page = asyncio.run(store.search_traces(limit=500))
    assert len(page.items) == 180


def test_the_head_revision_is_alembics_head() -> None:
    from scenarist.store.sql.migrate import HEAD_REVISION, head_revision

    assert head_revision() == HEAD_REVISION, "raise HEAD_REVISION with each new migration"


async def test_a_store_migrates_an_older_database_and_reads_the_head_cheaply(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``is_current`` is true at the head only; a store opened on an older database still
    migrates it (the check that skips Alembic never skips a migration)."""
    from alembic import command

    from scenarist.store.sql import engine as engine_module
    from scenarist.store.sql.migrate import alembic_config, current_revision, is_current

    store = SqlStore(database_url)
    engine = await store.engine()
    assert await is_current(engine)
    await store.ingest_run_log(make_run_log("before"))
    async with engine.begin() as connection:
        await connection.run_sync(lambda c: command.downgrade(alembic_config(c), "0009"))
    assert not await is_current(engine)
    await store.close()
    monkeypatch.setattr(engine_module, "_migrated", set())  # a new process, as it were
    again = SqlStore(database_url)
    try:
        engine = await again.engine()
        assert await current_revision(engine) == "0010" and await is_current(engine)
        assert [r.run_id for r in (await again.list_runs()).items] == ["before"]
        async with engine.begin() as connection:  # two rows: not the head, whatever they say
            await connection.execute(text("INSERT INTO alembic_version VALUES ('0009')"))
        assert not await is_current(engine)
    finally:
        await again.close()


def test_a_current_database_opens_without_importing_alembic(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from scenarist._sync import run_sync\n"
        "from scenarist.store.default import default_store\n"
        "store = default_store()\n"
        "print(len(run_sync(store.list_runs).items), 'alembic' in sys.modules)\n"
    )
    env = {**os.environ, "SCENARIST_HOME": str(tmp_path)}
    env.pop("SCENARIST_DATABASE_URL", None)
    outputs = []
    for _ in range(2):  # the first creates and migrates the database, the second reads it
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=HANG_S
        )
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout.split())
    assert outputs == [["0", "True"], ["0", "False"]]
