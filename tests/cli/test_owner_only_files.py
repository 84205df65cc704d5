"""What scenarist writes under ``SCENARIST_HOME`` is its owner's only: the database (and
its WAL and shared-memory files) ``0600``, the home, the runs folder and the spool
``0700``, whatever the umask lets through. The refusal to serve the network without a
key names a command that exists."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.cli.conftest import PASSING
from tests.helpers.databases import free_port
from typer.testing import Result

from scenarist._sync import run_sync
from scenarist.errors import UserError
from scenarist.model.record import TraceRecord
from scenarist.store.remote import RemoteStore


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def _lax_umask() -> Iterator[None]:
    """The common default: without care, files are 0644 and folders 0755."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def test_scenarist_run_makes_its_home_runs_folder_and_database_owner_only(
    home: Path, cli: Callable[..., Result], write: Callable[[str, str], Path]
) -> None:
    write("test_ok.py", PASSING)
    assert not (home / "home").exists()
    result = cli("run", "test_ok.py")
    assert result.exit_code == 0, result.output
    scenarist_home = home / "home"
    database = scenarist_home / "scenarist.db"
    assert _mode(scenarist_home) == 0o700
    assert _mode(scenarist_home / "runs") == 0o700
    (log,) = (scenarist_home / "runs").glob("*.jsonl")
    assert _mode(database) == 0o600
    connection = sqlite3.connect(database)  # SQLite gives -wal and -shm the file's mode
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("CREATE TABLE IF NOT EXISTS probe (x)")
        connection.execute("INSERT INTO probe VALUES (1)")
        connection.commit()
        for suffix in ("-wal", "-shm"):
            assert _mode(database.with_name(database.name + suffix)) == 0o600, suffix
    finally:
        connection.close()
    assert log.stat().st_size > 0


def test_the_spool_folder_and_its_files_are_owner_only(home: Path) -> None:
    store = RemoteStore(f"http://127.0.0.1:{free_port()}", retries=0)  # nobody listens
    run_sync(store.save_trace, TraceRecord(trace_id="t-spooled"))
    (spooled,) = store.spooled
    assert _mode(home / "home") == 0o700
    assert _mode(Path(spooled).parent) == 0o700
    assert _mode(Path(spooled)) == 0o600


def test_folders_that_already_exist_keep_their_mode(home: Path) -> None:
    shared = home / "home"
    shared.mkdir(mode=0o750)
    os.chmod(shared, 0o750)  # the user chose it: not ours to change
    store = RemoteStore(f"http://127.0.0.1:{free_port()}", retries=0)
    run_sync(store.save_trace, TraceRecord(trace_id="t-kept"))
    assert _mode(shared) == 0o750
    assert _mode(shared / "spool") == 0o700


def test_refusing_the_network_without_a_key_names_the_keys_create_command(
    home: Path, cli: Callable[..., Result]
) -> None:
    from scenarist.server.cli import serve

    with pytest.raises(UserError) as refused:
        serve(host="0.0.0.0", port=free_port())
    assert "scenarist keys create" in str(refused.value)
    assert cli("keys", "create", "--help").exit_code == 0  # the command it names exists
