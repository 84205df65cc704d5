"""`scenarist run --upload`: the run log reaches the server, or waits in the spool."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from typer.testing import CliRunner

from scenarist.cli.app import app

from .conftest import LiveServer, free_port

SUITE = """
from scenarist import Equals, Scenario

ok = Scenario("uploaded").interact("hello", "hello").check(Equals(expected_value="hello"))
"""


@pytest.fixture
def suite_file(tmp_path: Path) -> Path:
    path = tmp_path / "uploaded_suite.py"
    path.write_text(SUITE)
    return path


def test_run_uploads_its_run_log_to_the_configured_server(
    live_server: LiveServer, suite_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCENARIST_URL", live_server.url)
    result = CliRunner().invoke(app, ["run", str(suite_file)])
    assert result.exit_code == 0, result.output
    assert f"to {live_server.url}" in result.output
    runs = httpx2.get(f"{live_server.url}/api/runs").json()
    listed = runs.get("runs", runs.get("items", runs))
    assert len(listed) == 1


def test_run_spools_when_the_server_is_down(
    suite_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCENARIST_URL", f"http://127.0.0.1:{free_port()}")
    result = CliRunner().invoke(app, ["run", str(suite_file)])
    assert result.exit_code == 0, result.output
    assert "unreachable" in result.output and "scenarist sync" in result.output
    spooled = list((tmp_path / "home" / "spool").rglob("*"))
    assert any(p.is_file() for p in spooled)


def test_no_upload_keeps_the_run_local(suite_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCENARIST_URL", f"http://127.0.0.1:{free_port()}")
    result = CliRunner().invoke(app, ["run", "--no-upload", str(suite_file)])
    assert result.exit_code == 0, result.output
    assert "Uploaded" not in result.output and "unreachable" not in result.output


@pytest.mark.anyio
async def test_a_local_run_shows_up_in_the_server_with_nothing_to_set_up(
    suite_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scenarist.server.app import create_app

    monkeypatch.delenv("SCENARIST_DATABASE_URL", raising=False)
    demo = CliRunner().invoke(app, ["demo"])
    assert demo.exit_code == 0, demo.output
    run = CliRunner().invoke(app, ["run", str(suite_file)])
    assert run.exit_code == 0, run.output
    assert "scenarist serve" in run.output
    server = create_app()  # the default database: what `scenarist serve` opens
    async with server.router.lifespan_context(server):
        transport = httpx2.ASGITransport(app=server)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            listed = (await http.get("/api/runs")).json()
    runs = listed.get("runs", listed.get("items", listed))
    assert len(runs) == 2


NOT_JSON = """
from scenarist import FnCheck, Scenario

class Unprintable:
    def __repr__(self):
        raise ValueError("no repr for you")

def agent(inputs):
    return {"huge": 10**5000, "nan": float("nan"), "set": {2, 1}, "odd": Unprintable()}

ok = Scenario("not_json", target=agent).interact("q").check(FnCheck(fn=lambda t: True, name="ok"))
"""


def test_run_uploads_values_json_cannot_hold_in_their_marked_form(
    live_server: LiveServer, tmp_path: Path
) -> None:
    """An int too long for ``str()`` and other values JSON cannot hold reach the server
    marked, as the run log holds them; the run passes and is stored complete."""
    import os
    import subprocess
    import sys

    from tests.helpers.limits import HANG_S

    (tmp_path / "not_json.py").write_text(NOT_JSON, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCENARIST_")}
    env |= {"SCENARIST_HOME": str(tmp_path / "home"), "SCENARIST_URL": live_server.url}
    done = subprocess.run(
        [sys.executable, "-m", "scenarist.cli", "run", "not_json.py", "--upload"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=HANG_S,
    )
    assert done.returncode == 0, done.stdout
    assert "scenarist bug" not in done.stdout and f"to {live_server.url}" in done.stdout
    (run_id,) = [p.stem for p in (tmp_path / "home" / "runs").glob("*.jsonl")]
    stored = httpx2.get(f"{live_server.url}/runs/{run_id}/scenarios/0.json")
    assert stored.status_code == 200, stored.text
    text = stored.text
    assert '"status":"pass"' in text.replace(" ", "")
    assert '{"__int__":"' + hex(10**5000) + '"}' in text.replace(" ", "")
    assert '"__type__":"not_json.Unprintable"' in text.replace(" ", "")
