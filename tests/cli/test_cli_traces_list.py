"""``scenarist traces list``: the local database, or the server at ``SCENARIST_URL``;
``--project``; replays marked; an empty list says where the traces are."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from typer.testing import Result

from scenarist._sync import run_sync
from scenarist.model.record import TraceRecord
from scenarist.server.app import create_app
from scenarist.server.threaded import ThreadedServer
from scenarist.store.default import default_store
from scenarist.store.sql.store import SqlStore

Cli = Callable[..., Result]

AT = datetime(2026, 11, 2, 9, tzinfo=UTC)


def _save(store: SqlStore, *records: TraceRecord) -> None:
    for record in records:
        run_sync(store.save_trace, record)


def _traces() -> list[TraceRecord]:
    return [
        TraceRecord(trace_id="tr_orig", agent_name="support", input="where is my refund",
                    status="success", started_at=AT),
        TraceRecord(trace_id="tr_again", agent_name="support", input="where is my refund",
                    status="success", started_at=AT.replace(hour=10), is_replay=True,
                    metadata={"replay_of": "tr_orig"}),
    ]  # fmt: skip


def test_local_list_marks_replays_and_filters_text(cli: Cli, home: object) -> None:
    _save(default_store(), *_traces())
    listed = cli("traces", "list")
    assert listed.exit_code == 0, listed.output
    lines = listed.stdout.splitlines()
    assert lines[0].startswith("tr_again\tsupport\tsuccess") and lines[0].endswith(
        "\treplay of tr_orig"
    )
    assert lines[1].startswith("tr_orig\t") and "replay" not in lines[1]
    only = cli("traces", "list", "--no-replays", "-q", "REFUND")
    assert only.stdout.splitlines() == [lines[1]]


def test_an_empty_project_names_the_projects_that_hold_traces(cli: Cli, home: object) -> None:
    _save(default_store().scoped("support-team"), *_traces())
    empty = cli("traces", "list")
    assert empty.exit_code == 0
    assert "no traces match in project 'default'" in empty.stdout
    assert "traces are in project(s) support-team: add --project support-team" in empty.stdout
    named = cli("traces", "list", "--project", "support-team")
    assert [line.split("\t")[0] for line in named.stdout.splitlines()] == ["tr_again", "tr_orig"]
    bad = cli("traces", "list", "--project", "no such/project")
    assert bad.exit_code == 2


def test_with_scenarist_url_the_server_is_listed(
    cli: Cli, home: object, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    server_store = SqlStore(database_url)
    _save(server_store.scoped("support-team"), *_traces())
    _save(default_store(), TraceRecord(trace_id="tr_local_only", status="success"))
    with ThreadedServer(create_app(database_url)) as server:
        monkeypatch.setenv("SCENARIST_URL", server.url)
        listed = cli("traces", "list", "--project", "support-team")
        assert listed.exit_code == 0, listed.output
        assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == [
            "tr_again",
            "tr_orig",
        ]
        assert "tr_local_only" not in cli("traces", "list").stdout  # not the local database
        empty = cli("traces", "list")
        assert empty.stdout == (
            f"no traces match in the key's project on the server {server.url}; "
            "name another project with --project NAME\n"
        )
