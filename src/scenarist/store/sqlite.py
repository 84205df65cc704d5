"""The default local store: one SQLite file (stdlib ``sqlite3``), JSON documents inside.

Location: ``$SCENARIST_HOME/local.db``, where ``SCENARIST_HOME`` defaults to
``.scenarist`` in the working directory. Nothing is created until the first write. The
file holds tables of JSON documents (traces, scenario runs, scenario items, snapshots)
with a ``user_version`` pragma as the schema version; an older file is migrated when it
is opened (see ``_MIGRATIONS``). The server's database (a later issue) can import it.
Values that are not JSON are stored as described in :mod:`scenarist._jsonable`.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scenarist._jsonable import to_json_value
from scenarist.tracing.record import TraceRecord
from scenarist.veval.items import ScenarioItem, ScenarioRunRecord

if TYPE_CHECKING:
    import sqlite3

    from scenarist.replay.snapshots import SnapshotData

__all__ = ["LocalStore", "default_store_path"]

SCHEMA_VERSION = 2
_SCHEMA = """
CREATE TABLE IF NOT EXISTS traces (
    trace_id TEXT PRIMARY KEY, agent_name TEXT, started_at TEXT, status TEXT, data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS scenario_runs (
    run_id TEXT PRIMARY KEY, scenario_name TEXT NOT NULL, started_at TEXT NOT NULL,
    passed INTEGER NOT NULL, data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS scenario_runs_by_name ON scenario_runs (scenario_name, started_at);
CREATE TABLE IF NOT EXISTS scenario_items (
    scenario_name TEXT NOT NULL, position INTEGER NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (scenario_name, position)
);
"""
_MIGRATIONS = {
    # version: the statements that bring a file from the version before to this one
    2: """
CREATE TABLE IF NOT EXISTS snapshots (
    name TEXT PRIMARY KEY, trace_id TEXT, created_at TEXT NOT NULL, data TEXT NOT NULL
);
""",
}


def default_store_path() -> Path:
    """``$SCENARIST_HOME/local.db`` (``SCENARIST_HOME`` defaults to ``./.scenarist``)."""
    return Path(os.environ.get("SCENARIST_HOME") or ".scenarist") / "local.db"


def _dumps(model: Any) -> str:
    data = to_json_value(model.model_dump())  # one documented mapping for every value
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


class LocalStore:
    """Implements :class:`~scenarist.store.Store` in a local SQLite file."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_store_path()
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _db(self) -> sqlite3.Connection:
        if self._connection is None:
            import sqlite3  # here: `import scenarist` loads no database driver

            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise RuntimeError(
                    f"{self.path} was written by a newer scenarist (schema {version}); "
                    "upgrade scenarist or point SCENARIST_HOME elsewhere"
                )
            connection.executescript(_SCHEMA)  # version 1, or nothing on an existing file
            for step in range(max(version, 1) + 1, SCHEMA_VERSION + 1):
                connection.executescript(_MIGRATIONS[step])
            connection.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            self._connection = connection
        return self._connection

    def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db().execute(sql, params).fetchall()

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    async def save_trace(self, record: TraceRecord) -> None:
        started = record.started_at.isoformat() if record.started_at else None
        self._execute(
            "INSERT OR REPLACE INTO traces VALUES (?, ?, ?, ?, ?)",
            (record.trace_id, record.agent_name, started, record.status, _dumps(record)),
        )

    async def get_trace(self, trace_id: str) -> TraceRecord | None:
        rows = self._execute("SELECT data FROM traces WHERE trace_id = ?", (trace_id,))
        return TraceRecord.model_validate_json(rows[0][0]) if rows else None

    async def save_scenario_run(self, run: ScenarioRunRecord) -> None:
        self._execute(
            "INSERT OR REPLACE INTO scenario_runs VALUES (?, ?, ?, ?, ?)",
            (
                run.run_id,
                run.scenario_name,
                run.started_at.isoformat(),
                int(run.passed),
                _dumps(run),
            ),
        )

    async def list_scenario_runs(self, scenario_name: str) -> list[ScenarioRunRecord]:
        rows = self._execute(
            "SELECT data FROM scenario_runs WHERE scenario_name = ? ORDER BY started_at",
            (scenario_name,),
        )
        return [ScenarioRunRecord.model_validate_json(row[0]) for row in rows]

    async def get_items(self, scenario_name: str) -> list[ScenarioItem]:
        rows = self._execute(
            "SELECT data FROM scenario_items WHERE scenario_name = ? ORDER BY position",
            (scenario_name,),
        )
        return [ScenarioItem.model_validate_json(row[0]) for row in rows]

    async def save_items(self, scenario_name: str, items: list[ScenarioItem]) -> None:
        with self._lock:
            db = self._db()
            db.execute("BEGIN")
            try:
                db.execute("DELETE FROM scenario_items WHERE scenario_name = ?", (scenario_name,))
                db.executemany(
                    "INSERT INTO scenario_items VALUES (?, ?, ?)",
                    [(scenario_name, i, _dumps(item)) for i, item in enumerate(items)],
                )
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    async def save_snapshot(self, name: str, snapshot: SnapshotData) -> None:
        self._execute(
            "INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?, ?)",
            (name, snapshot.trace_id, snapshot.created_at.isoformat(), _dumps(snapshot)),
        )

    async def get_snapshot(self, name: str) -> SnapshotData | None:
        from scenarist.replay.snapshots import SnapshotData

        rows = self._execute("SELECT data FROM snapshots WHERE name = ?", (name,))
        return SnapshotData.model_validate_json(rows[0][0]) if rows else None
