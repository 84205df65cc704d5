"""``_bulk.insert_rows``: on SQLite, rows go to the driver without SQLAlchemy's per-row
work; what is stored must be exactly what SQLAlchemy's ``executemany`` stores."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from tests.server.conftest import make_run_log

from scenarist.formats.runlog import RunLog
from scenarist.model.results import CheckResult, RepeatStats
from scenarist.store.sql import _bulk
from scenarist.store.sql.store import SqlStore

pytestmark = pytest.mark.anyio

TABLES = ("runs", "scenario_results", "check_results")


def _awkward_log(run_id: str) -> RunLog:
    """Non-ASCII and NUL in names and messages, tags, costs, repeats, every status, an
    aware start time that is not UTC."""
    log = make_run_log(
        run_id,
        outcomes={"remboursement é€": True, "問候": False, "third": True},
        started_at=datetime(2026, 3, 1, 12, 30, 15, 123456, tzinfo=timezone(timedelta(hours=5))),
        suite_name="suite ✓",
    )
    first, second, third = (record.result for record in log.scenarios)
    first.tags = ["lang:fr", "tier:gold ✓"]
    second.steps[0].results.append(
        CheckResult(status="error", message="boom\x00after", kind="fn", name="n\x00ame")  # type: ignore[arg-type]
    )
    second.steps[0].results.append(CheckResult(status="skip", message=None))  # type: ignore[arg-type]
    third.repeat_stats = RepeatStats.of(["pass", "fail", "pass"], 0.5)
    log.scenarios[0].cost_usd = 0.000123
    log.scenarios[1].tokens_in = 7
    log.scenarios[2].flaky = True
    return log


def _rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every stored value with its SQLite type, table by table."""
    connection = sqlite3.connect(path)
    try:
        found = {}
        for table in TABLES:
            columns = [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]
            typed = ", ".join(f"{c}, typeof({c})" for c in columns if c != "ingested_at")
            found[table] = connection.execute(
                f"SELECT {typed} FROM {table} ORDER BY 1, 2, 3, 4, 5"
            ).fetchall()
        return found
    finally:
        connection.close()


async def test_sqlite_rows_are_stored_as_sqlalchemy_stores_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = [_awkward_log(f"run-{n}") for n in range(3)]
    logs[2].scenarios = [  # bigger than a batch
        record.model_copy(update={"index": i}) for i, record in enumerate(logs[2].scenarios * 800)
    ]
    made: list[int] = []
    tuples = _bulk._tuples

    def counted(rows: Any, columns: Any) -> list[tuple[Any, ...]]:
        made.append(len(rows))
        return tuples(rows, columns)

    monkeypatch.setattr(_bulk, "_tuples", counted)
    stored = {}
    for way in ("direct", "sqlalchemy"):
        if way == "sqlalchemy":
            monkeypatch.setattr(_bulk, "_sqlite_plan", lambda *args: None)
        path = tmp_path / f"{way}.db"
        store = SqlStore(path)
        try:
            for log in logs:
                await store.ingest_run_log(log)
        finally:
            await store.close()
        stored[way] = _rows(path)
    assert stored["direct"] == stored["sqlalchemy"]
    assert len(stored["direct"]["scenario_results"]) == 3 + 3 + 2400 > _bulk.BATCH
    assert made == [3, 5, 3, 5, 2000, 400, 2000, 2000]  # the direct path ran, in batches


def test_the_tuples_process_each_value_and_reuse_only_the_same_object() -> None:
    calls: list[object] = []

    def process(value: object) -> object:
        calls.append(value)
        return f"<{value}>"

    shared = datetime(2026, 1, 1, tzinfo=UTC)
    equal_not_same = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [
        {"a": 1, "t": shared},
        {"a": 2, "t": shared},
        {"a": 3, "t": equal_not_same},
        {"a": 4, "t": None},
        {"a": 5, "t": shared},
    ]
    got = _bulk._tuples(rows, [("t", process), ("a", None)])
    assert got == [
        (f"<{shared}>", 1),
        (f"<{shared}>", 2),
        (f"<{shared}>", 3),
        ("<None>", 4),
        (f"<{shared}>", 5),
    ]
    assert calls == [shared, equal_not_same, None, shared]
    assert _bulk._tuples(rows[:2], [("a", None)]) == [(1,), (2,)]
    assert _bulk._tuples(rows[:2], [("a", None), ("t", None)]) == [(1, shared), (2, shared)]
