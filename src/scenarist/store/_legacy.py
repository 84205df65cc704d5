"""The one-time import of ``local.db``, the stdlib store of scenarist before 0.2.

Earlier versions kept traces, scenario runs, items and snapshots in
``$SCENARIST_HOME/local.db`` when the server extra was missing, beside the server's
``scenarist.db``: two databases that disagreed about what had been recorded. Now there is
one. The first time the default database is opened and a ``local.db`` sits next to it,
its documents are copied in (one transaction; a document already in the database is
replaced only where the newer store has nothing, see :func:`import_local_db`), the old
file is renamed ``local.db.imported`` (kept, never deleted), and one line on stderr says
what happened. A file that cannot be read is left in place and named in a one-line
message with the command that imports it by hand.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:
    from scenarist.store.sql.store import SqlStore

__all__ = ["LegacyImport", "import_local_db", "legacy_path"]

_TABLES = ("traces", "scenario_runs", "scenario_items", "snapshots")


def legacy_path(database_file: Path) -> Path:
    """Where the old store's file would be: ``local.db`` beside ``scenarist.db``."""
    return database_file.with_name("local.db")


class LegacyImport:
    """How many documents of each kind were copied (and which rows could not be read)."""

    def __init__(self) -> None:
        self.traces = 0
        self.scenario_runs = 0
        self.items = 0
        self.snapshots = 0
        self.unreadable: list[str] = []

    def summary(self) -> str:
        return (
            f"{self.traces} trace(s), {self.scenario_runs} scenario run(s), "
            f"{self.items} item(s), {self.snapshots} snapshot(s)"
        )

    def line(self, source: object, target: object, aside: str | None = None) -> str:
        """``imported <counts> from <source> into <target> (<aside>); <skipped rows>``."""
        aside_text = f" ({aside})" if aside else ""
        skipped = f"; {len(self.unreadable)} unreadable row(s) skipped" if self.unreadable else ""
        return f"imported {self.summary()} from {source} into {target}{aside_text}{skipped}"


def _rows(connection: sqlite3.Connection, sql: str) -> list[tuple[object, ...]]:
    try:
        return connection.execute(sql).fetchall()
    except sqlite3.OperationalError:  # a table the file's schema version did not have
        return []


async def import_local_db(path: Path, store: SqlStore) -> LegacyImport:
    """Copy every document of the old store at ``path`` into ``store``.

    Traces, scenario runs and snapshots keep their ids and names; a scenario's items
    replace the stored items of that scenario only when it has none yet (items edited in
    the new store win). Rows whose JSON no longer validates are counted in
    ``unreadable`` (``table:key``) and skipped, never guessed at.
    """
    from scenarist.replay.snapshots import SnapshotData
    from scenarist.tracing.record import TraceRecord
    from scenarist.veval.items import ScenarioItem, ScenarioRunRecord

    done = LegacyImport()
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        traces = _rows(connection, "SELECT trace_id, data FROM traces")
        runs = _rows(connection, "SELECT run_id, data FROM scenario_runs ORDER BY started_at")
        items = _rows(
            connection,
            "SELECT scenario_name, data FROM scenario_items ORDER BY scenario_name, position",
        )
        snapshots = _rows(connection, "SELECT name, data FROM snapshots")
    finally:
        connection.close()

    def parse(model: type[BaseModel], table: str, key: object, data: object) -> object | None:
        try:
            return model.model_validate_json(str(data))
        except (ValidationError, json.JSONDecodeError, ValueError):
            done.unreadable.append(f"{table}:{key}")
            return None

    for trace_id, data in traces:
        record = parse(TraceRecord, "traces", trace_id, data)
        if isinstance(record, TraceRecord):
            await store.save_trace(record)
            done.traces += 1
    for run_id, data in runs:
        run = parse(ScenarioRunRecord, "scenario_runs", run_id, data)
        if isinstance(run, ScenarioRunRecord):
            await store.save_scenario_run(run)
            done.scenario_runs += 1
    by_scenario: dict[str, list[ScenarioItem]] = {}
    for scenario_name, data in items:
        item = parse(ScenarioItem, "scenario_items", scenario_name, data)
        if isinstance(item, ScenarioItem):
            by_scenario.setdefault(str(scenario_name), []).append(item)
    for scenario_name, scenario_items in by_scenario.items():
        if not await store.get_items(scenario_name):
            await store.save_items(scenario_name, scenario_items)
            done.items += len(scenario_items)
    for name, data in snapshots:
        snapshot = parse(SnapshotData, "snapshots", name, data)
        if isinstance(snapshot, SnapshotData):
            await store.save_snapshot(str(name), snapshot)
            done.snapshots += 1
    return done


def _fold_wal(path: Path) -> None:
    """Write the old file's WAL back into it (and drop ``-wal``/``-shm``), so the renamed
    copy is whole on its own."""
    connection = sqlite3.connect(path)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.execute("PRAGMA journal_mode=DELETE")
    finally:
        connection.close()


async def import_once(database_file: Path, store: SqlStore) -> None:
    """Import ``local.db`` beside ``database_file`` if there is one (then rename it)."""
    old = legacy_path(database_file)
    if not old.is_file():
        return
    try:
        done = await import_local_db(old, store)
    except sqlite3.Error as exc:
        print(
            f"scenarist: {old} (the old local store) could not be read ({exc}); its runs "
            f"are not in {database_file}. Fix or move the file, then run: "
            f"scenarist db import-local {old}",
            file=sys.stderr,
        )
        return
    try:
        _fold_wal(old)
    except sqlite3.OperationalError:  # another process still has it open
        kept = (
            "it is in use by another process, so it stays where it is "
            "(importing it again adds nothing)"
        )
    else:
        old.rename(old.with_name(old.name + ".imported"))
        kept = f"the old file is kept as {old.name}.imported"
    print(f"scenarist: {done.line(old, database_file, kept)}", file=sys.stderr)
