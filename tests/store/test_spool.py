"""Uploads that fail are spooled and sent later, exactly once (a real server, stopped or
answering 500), and interrupted run logs upload as incomplete runs."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from tests.server.conftest import LiveServer, free_port, make_run_log
from tests.server.test_api import VEVAL_TRACE
from typer.testing import CliRunner

from scenarist import Client, TraceAssert
from scenarist._sync import run_sync
from scenarist.errors import SendError
from scenarist.formats.runlog import write_jsonl
from scenarist.model.items import ScenarioItem
from scenarist.model.record import TraceRecord
from scenarist.model.veval_wire import from_veval
from scenarist.replay.snapshots import SnapshotData
from scenarist.server.app import create_app
from scenarist.store import admin
from scenarist.store.remote import RemoteStore
from scenarist.store.spool import Spool, SpooledUpload, server_origin
from scenarist.store.sql.store import SqlStore

ITEMS = [ScenarioItem(name="ok", input="refund?"), ScenarioItem(name="ko", input="x")]


def _agent(ctx: object) -> str:
    return "refund approved"


def _count(database_url: str, scenario_name: str) -> int:
    store = SqlStore(database_url)
    return len(run_sync(store.list_scenario_runs, scenario_name))


class FailingResponses:
    """An ASGI wrapper: the app handles the request (and stores it), but the first
    ``failures`` POST answers are replaced by a 500, as when a proxy or the server
    fails after the write: the client cannot know the payload arrived."""

    def __init__(self, app: Any, failures: int) -> None:
        self.app = app
        self.failures = failures
        self.state = app.state

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or self.failures <= 0:
            await self.app(scope, receive, send)
            return
        self.failures -= 1

        async def swallow(message: Any) -> None:
            pass

        await self.app(scope, receive, swallow)
        await send({"type": "http.response.start", "status": 500, "headers": []})
        await send({"type": "http.response.body", "body": b"boom"})


def test_server_stopped_mid_run_spools_then_sync_counts_each_run_once(
    database_url: str, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    server = LiveServer(create_app(database_url)).__enter__()
    store = RemoteStore(server.url, retries=1)
    client = Client(store=store)
    checks = [TraceAssert.output_contains("refund", where="final")]
    first = client.run_scenario("billing", _agent, checks, items=ITEMS)
    assert store.spooled == []
    server.__exit__()  # the server goes away between two runs

    with caplog.at_level(logging.WARNING, logger="scenarist.remote"):
        second = client.run_scenario("billing", _agent, checks, items=ITEMS)
    assert second.passed  # the run itself is unaffected
    assert len(store.spooled) == 3  # two traces and the run summary, nothing lost
    assert [p.name.split("-")[1] for p in store.spool.pending()] == [
        "trace",
        "trace",
        "scenario_run",
    ]
    assert "run `scenarist sync`" in caplog.text

    with LiveServer(create_app(database_url)) as back:  # a new process, a new port
        elsewhere = admin.sync(back.url)  # spooled for another origin: kept
        assert elsewhere.sent == [] and elsewhere.other_origins == {server.url: 3}
        assert f"--from-server {server.url}" in elsewhere.summary()
        result = admin.sync(back.url, from_servers=[server.url])  # moved, on purpose
        assert (len(result.sent), result.remaining, result.rejected) == (3, 0, [])
        assert admin.sync(back.url).sent == []  # the spool is empty now
    assert _count(database_url, "billing") == 2
    runs = run_sync(SqlStore(database_url).list_scenario_runs, "billing")
    assert [r.run_id for r in runs] == [first.run_id, second.run_id]
    for item in second.results:
        assert run_sync(SqlStore(database_url).get_trace, item.trace_id or "") is not None


def test_a_500_after_the_write_is_spooled_and_resent_exactly_once(database_url: str) -> None:
    app = create_app(database_url)
    wrapper = FailingResponses(app, failures=2)  # the first try and its retry
    log = make_run_log("run-500")
    with LiveServer(wrapper) as server:
        store = RemoteStore(server.url, retries=1)
        uploaded = run_sync(store.upload_run_log, log)
        assert uploaded.spooled is not None and uploaded.created is None
        result = admin.sync(server.url)
    assert (len(result.sent), result.remaining) == (1, 0)
    stored = SqlStore(database_url)
    assert run_sync(stored.count_runs) == 1
    detail = run_sync(stored.get_run, "run-500")
    assert detail is not None and len(detail.scenarios) == 2


def test_interrupted_run_log_uploads_incomplete_and_the_complete_one_replaces_it(
    live_server: LiveServer, database_url: str, tmp_path: Path
) -> None:
    log = make_run_log("run-cut", outcomes={"a": True, "b": True, "c": False})
    path = tmp_path / "run-cut.jsonl"
    write_jsonl(log, path)
    lines = path.read_text().splitlines(keepends=True)
    # killed while writing the third scenario: header, two finished scenarios, a torn line
    path.write_text("".join(lines[:3]) + lines[3][:25])
    store = RemoteStore(live_server.url, retries=0)

    partial = run_sync(store.upload_run_log, path)
    assert (partial.created, partial.complete, partial.scenario_count) == (True, False, 2)
    detail = run_sync(SqlStore(database_url).get_run, "run-cut")
    assert detail is not None and detail.complete is False
    assert [s.scenario_name for s in detail.scenarios] == ["a", "b"]

    write_jsonl(log, path)  # the run finished after all (or was re-run to the end)
    full = run_sync(store.upload_run_log, path)
    assert (full.complete, full.scenario_count) == (True, 3)
    assert run_sync(store.upload_run_log, path).created is False  # again: stored once
    detail = run_sync(SqlStore(database_url).get_run, "run-cut")
    assert detail is not None and detail.complete is True and len(detail.scenarios) == 3
    assert run_sync(SqlStore(database_url).count_runs) == 1
    assert store.spooled == []


def test_store_sends_its_servers_spool_after_its_first_successful_write(
    live_server: LiveServer, database_url: str, tmp_path: Path
) -> None:
    spool = Spool(tmp_path / "spool")
    record = from_veval(VEVAL_TRACE)
    mine = SpooledUpload(
        kind="trace", payload_id=record.trace_id, body=VEVAL_TRACE,
        origin=server_origin(live_server.url),
    )  # fmt: skip
    other = mine.model_copy(update={"origin": "http://elsewhere:8480", "payload_id": "x"})
    spool.put(mine)
    spool.put(other)
    store = RemoteStore(live_server.url, spool=spool)
    run_sync(store.save_trace, TraceRecord(trace_id="fresh"))
    server_side = SqlStore(database_url)
    assert run_sync(server_side.get_trace, record.trace_id) == record
    remaining = [spool.read(p) for p in spool.pending()]
    assert [p.origin for p in remaining] == ["http://elsewhere:8480"]  # not ours to send


def test_spool_files_are_atomic_replaced_by_id_and_refusals_set_aside(
    live_server: LiveServer, tmp_path: Path
) -> None:
    spool = Spool(tmp_path / "spool")
    base = {"kind": "trace", "origin": server_origin(live_server.url)}
    spool.put(SpooledUpload(payload_id="t1", body={"trace_id": "t1"}, **base))  # type: ignore[arg-type]
    spool.put(SpooledUpload(payload_id="t1", body={"trace_id": "t1", "x": 1}, **base))  # type: ignore[arg-type]
    spool.put(SpooledUpload(payload_id="bad", body={"steps": "nope"}, **base))  # type: ignore[arg-type]
    assert len(spool.pending()) == 2  # t1 once, its newer version
    assert not list(spool.directory.glob(".tmp-*"))
    result = run_sync(RemoteStore(live_server.url, spool=spool).sync)
    assert len(result.sent) == 1 and len(result.rejected) == 1 and result.remaining == 0
    assert (spool.directory / "rejected").is_dir()


def test_strict_mode_raises_and_refusals_are_not_spooled(tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    client = Client(base_url=down, raise_on_send_failure=True)
    assert isinstance(client.store, RemoteStore) and client.store.raise_on_send_failure
    client.store.retries = 0
    with pytest.raises(SendError, match="is the server running"):
        client.run("agent", _agent)
    assert client.store.spool.pending() == []


def test_snapshot_re_sent_is_stored_once(live_server: LiveServer, database_url: str) -> None:
    snap = SnapshotData.model_validate({"name": "g", "steps": [{"name": "x", "kind": "tool"}]})
    store = RemoteStore(live_server.url)
    for _ in range(3):
        run_sync(store.save_snapshot, "g", snap)
    page = run_sync(SqlStore(database_url).list_snapshots)
    assert [(s.name, s.version) for s in page.items] == [("g", 1)]


def test_sync_command(live_server: LiveServer, tmp_path: Path) -> None:
    from scenarist.cli.app import app

    runner = CliRunner()
    done = runner.invoke(app, ["sync", "--url", live_server.url])
    assert done.exit_code == 0, done.output
    assert "sent 0 spooled payload(s), 0 still spooled" in done.output

    down_url = f"http://127.0.0.1:{free_port()}"
    Spool().put(
        SpooledUpload(kind="trace", payload_id="t", origin=server_origin(down_url),
                      body={"trace_id": "t"})
    )  # fmt: skip
    down = runner.invoke(app, ["sync", "--url", down_url])
    assert down.exit_code == 2
    assert "1 still spooled" in down.output
    missing = runner.invoke(app, ["sync"])
    assert missing.exit_code == 2 and "SCENARIST_URL" in missing.output
