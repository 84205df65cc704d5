"""The old stdlib store (``local.db``): imported by hand with ``scenarist db import-local``,
with a clear error for a file that is not one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scenarist._sync import run_sync
from scenarist.cli.app import app
from scenarist.store.sql.store import SqlStore
from scenarist.tracing.record import TraceRecord
from scenarist.veval.items import ScenarioItem

OLD_SCHEMA = """
CREATE TABLE traces (trace_id TEXT PRIMARY KEY, agent_name TEXT, started_at TEXT,
    status TEXT, data TEXT NOT NULL);
CREATE TABLE scenario_items (scenario_name TEXT NOT NULL, position INTEGER NOT NULL,
    data TEXT NOT NULL, PRIMARY KEY (scenario_name, position));
"""


def _old_store(path: Path) -> None:
    db = sqlite3.connect(path)
    db.executescript(OLD_SCHEMA)
    db.execute(
        "INSERT INTO traces VALUES ('tr_1', 'bot', NULL, 'success', ?)",
        (TraceRecord(trace_id="tr_1", agent_name="bot", output="hi").model_dump_json(),),
    )
    for position, name in enumerate(["first", "second"]):
        item = ScenarioItem(name=name, trace_id="tr_1")
        db.execute(
            "INSERT INTO scenario_items VALUES ('support', ?, ?)",
            (position, item.model_dump_json()),
        )
    db.commit()
    db.close()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SCENARIST_DATABASE_URL", raising=False)
    return tmp_path


def test_import_local_copies_traces_and_items_in_order(home: Path) -> None:
    _old_store(home / "elsewhere.db")
    done = CliRunner().invoke(app, ["db", "import-local", "elsewhere.db"])
    assert done.exit_code == 0, done.output
    database = (home / "home" / "scenarist.db").resolve()
    assert done.stdout.strip() == (
        f"imported 1 trace(s), 0 scenario run(s), 2 item(s), 0 snapshot(s) "
        f"from elsewhere.db into {database}"
    )
    store = SqlStore()
    trace = run_sync(store.get_trace, "tr_1")
    assert trace is not None and trace.output == "hi"
    assert [i.name for i in run_sync(store.get_items, "support")] == ["first", "second"]


def test_import_local_names_the_file_and_the_fix(home: Path) -> None:
    missing = CliRunner().invoke(app, ["db", "import-local", "nope.db"])
    assert missing.exit_code == 2
    assert "nope.db: no such file; give the path of the old local.db" in missing.stderr
    (home / "junk.db").write_text("this is not sqlite")
    junk = CliRunner().invoke(app, ["db", "import-local", "junk.db"])
    assert junk.exit_code == 2 and "junk.db: not a scenarist local store" in junk.stderr
