"""The real veval-sdk 1.4.0 (side venv, subprocess) saving snapshots against a server
with keys: the snapshot of a stored trace (``save_snapshot_async(name, trace_id)``) reads
its steps and needs ``read`` (the ``ingest, read`` key ``scenarist keys create`` gives
by default, the key a Veval user holds); with an ``ingest``-only key the SDK raises on
the 403, and the snapshot of a run's own steps is still stored."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.limits import HANG_S

from scenarist.server.app import create_app
from scenarist.server.threaded import ThreadedServer
from scenarist.store import admin

HERE = Path(__file__).parent

pytest.importorskip("fastapi", reason="the server extra is not installed")
pytest.importorskip("uvicorn", reason="the server extra is not installed")


def _save_snapshots(veval_python: Path, url: str, key: str) -> dict[str, Any]:
    env = {**os.environ, "VEVAL_INTERNAL_ENDPOINT": url, "PYTHONPATH": ""}
    done = subprocess.run(
        [str(veval_python), str(HERE / "snapshot_scopes.py"), key],
        capture_output=True,
        text=True,
        timeout=HANG_S,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_real_veval_sdk_snapshot_of_a_stored_trace_needs_read(
    veval_python: Path, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCENARIST_HOME", str(tmp_path / "home"))
    _, reader = admin.create_key(["ingest", "read"], database_url=database_url)
    _, ingest = admin.create_key(["ingest"], database_url=database_url)
    with ThreadedServer(create_app(database_url)) as server:
        held = _save_snapshots(veval_python, server.url, reader)
        assert held["by_id"] == {"steps": [["classify", "Where is my refund?"]]}
        assert held["by_steps"] == {"steps": [["classify", "Where is my refund?"]]}
        refused = _save_snapshots(veval_python, server.url, ingest)
        assert "403" in refused["by_id"]["error"]
        assert refused["by_steps"] == {"steps": [["classify", "Where is my refund?"]]}
