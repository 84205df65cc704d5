"""Every command's ``--help`` at 80 columns: flags as flags, values named in capitals,
one example each; and the commands of this round (``traces list``, ``serve``'s first
line, ``demo`` uploading to ``SCENARIST_URL``, ``run --project``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner, Result

from scenarist._sync import run_sync
from scenarist.cli.app import app
from scenarist.cli.store import parse_since
from scenarist.errors import UserError
from scenarist.model.record import TraceRecord

Cli = Callable[..., Result]


def _commands(command: Any, path: list[str]) -> Iterator[list[str]]:
    yield path
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, [*path, name])


COMMANDS = list(_commands(typer.main.get_command(app), []))


def test_the_command_table_is_walked() -> None:
    names = {" ".join(path) for path in COMMANDS}
    assert {"run", "traces list", "keys create", "db prune", "demo", "serve"} <= names
    assert len(names) >= 20


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "scenarist")
def test_help_reads_at_80_columns_with_an_example(path: list[str]) -> None:
    shown = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
    assert shown.exit_code == 0, shown.output
    text = shown.output
    too_long = [line for line in text.splitlines() if len(line) > 80]
    assert not too_long, too_long
    assert not re.search(r"<(bool|str|int|float|path|list\[[^>]*\])>", text), text
    assert re.search(r"Example:\n +scenarist ", text), text
    assert "╭" not in text  # plain text, the same in a pipe as on a terminal


def test_flags_are_flags_and_values_are_named() -> None:
    text = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "80"}).output
    assert re.search(r"^  --record +Re-record", text, re.MULTILINE)
    assert re.search(r"^  -q, --quiet +No progress", text, re.MULTILINE)
    assert "--junit FILE" in text and "--parallel N" in text and "--project NAME" in text
    assert text.startswith("Usage: scenarist run [OPTIONS] PATH...")


def test_traces_list_filters_by_agent_status_and_time(cli: Cli, home: Path) -> None:
    from scenarist.store.default import default_store

    store = default_store()
    old = datetime.now(UTC) - timedelta(days=3)
    for trace_id, agent, status, at in [
        ("t-old", "support", "success", old),
        ("t-err", "support", "error", None),
        ("t-other", "billing", "success", None),
    ]:
        record = TraceRecord(trace_id=trace_id, agent_name=agent, status=status, started_at=at)
        run_sync(store.save_trace, record)
    listed = cli("traces", "list")
    assert listed.exit_code == 0, listed.output
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == [
        "t-other",
        "t-err",
        "t-old",
    ]  # newest first
    support = cli("traces", "list", "--agent", "support")
    assert {line.split("\t")[0] for line in support.stdout.splitlines()} == {"t-old", "t-err"}
    errors = cli("traces", "list", "--status", "error")
    assert [line.split("\t")[:3] for line in errors.stdout.splitlines()] == [
        ["t-err", "support", "error"]
    ]
    recent = cli("traces", "list", "--agent", "support", "--since", "1d")
    assert [line.split("\t")[0] for line in recent.stdout.splitlines()] == ["t-err"]
    none = cli("traces", "list", "--agent", "nobody")
    assert none.exit_code == 0
    assert none.stdout.startswith("no traces match in project 'default' in the database")
    bad = cli("traces", "list", "--since", "soon")
    assert bad.exit_code == 2
    assert "--since 'soon': use a duration (30m, 2h, 1d, 2w) or a date" in bad.stderr


def test_since_reads_durations_and_dates() -> None:
    now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    assert parse_since("30m", now) == datetime(2026, 3, 1, 11, 30, tzinfo=UTC)
    assert parse_since("2w", now) == datetime(2026, 2, 15, 12, 0, tzinfo=UTC)
    assert parse_since("2026-01-31") == datetime(2026, 1, 31, tzinfo=UTC)
    with pytest.raises(UserError):
        parse_since("1y", now)


def test_serve_names_the_url_to_open() -> None:
    from scenarist.server.cli import serve_url

    assert serve_url("127.0.0.1", 8480) == "http://127.0.0.1:8480/"
    assert serve_url("0.0.0.0", 9000) == "http://127.0.0.1:9000/"
    assert serve_url("::", 8480) == "http://[::1]:8480/"
    assert serve_url("scenarist.internal", 80) == "http://scenarist.internal:80/"


def test_serve_prints_the_url_and_the_database_before_listening(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import uvicorn

    from scenarist.server import cli as server_cli

    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: None)  # not listening here
    server_cli.serve(port=8499)
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (
        "scenarist serve: the dashboard and API at http://127.0.0.1:8499/, on the database "
        f"{home / 'home' / 'scenarist.db'}"
    )


def test_demo_uploads_to_the_server_named_by_scenarist_url(
    cli: Cli, home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from scenarist.server.app import create_app
    from scenarist.server.threaded import ThreadedServer
    from scenarist.store.sql.store import SqlStore

    url = f"sqlite:///{tmp_path / 'server.db'}"
    with ThreadedServer(create_app(url)) as server:
        monkeypatch.setenv("SCENARIST_URL", server.url)
        result = cli("demo")
    assert result.exit_code == 0, result.output
    assert "Uploaded run " in result.stdout and f" to {server.url}" in result.stdout
    runs = run_sync(SqlStore(url).list_runs)
    assert [r.name for r in runs.items] == ["support-bot"]


def test_run_with_a_project_stores_the_run_in_it(
    cli: Cli, home: Path, write: Callable[[str, str], Path]
) -> None:
    from tests.cli.conftest import PASSING

    from scenarist.store.default import default_store

    write("suite.py", PASSING)
    result = cli("run", "suite.py", "--project", "team-a")
    assert result.exit_code == 0, result.output
    store = default_store()
    assert run_sync(store.list_runs).items == []
    assert len(run_sync(store.scoped("team-a").list_runs).items) == 1
    bad = cli("run", "suite.py", "--project", "team a")
    assert bad.exit_code == 2
    assert "--project: 'team a' is not a project name" in bad.stderr
