"""``RemoteStore``: the Store protocol over HTTP, against a real uvicorn server."""

from __future__ import annotations

import pytest
from tests.server.conftest import LiveServer, free_port
from tests.server.test_api import VEVAL_TRACE

from scenarist import Client, TraceAssert
from scenarist.errors import RequestError, SendError
from scenarist.model.items import ScenarioItem
from scenarist.model.record import TraceRecord
from scenarist.model.veval_wire import from_veval
from scenarist.replay.snapshots import SnapshotData
from scenarist.store.base import Store
from scenarist.store.remote import RemoteStore
from scenarist.store.sql.store import SqlStore


def test_remote_store_round_trips_over_a_real_socket(live_server: LiveServer) -> None:
    from scenarist._sync import run_sync

    store = RemoteStore(live_server.url)
    assert isinstance(store, Store)
    record = from_veval(VEVAL_TRACE)
    run_sync(store.save_trace, record)
    assert run_sync(store.get_trace, record.trace_id) == record
    assert run_sync(store.get_trace, "missing") is None
    held = record.trace_id  # an item may only name a trace the server holds
    items = [ScenarioItem(name="a", input={"q": 1}), ScenarioItem(name="b", trace_id=held)]
    run_sync(store.save_items, "team/s", items)
    got = run_sync(store.get_items, "team/s")
    assert [(i.name, i.input, i.trace_id) for i in got] == [
        ("a", {"q": 1}, None),
        ("b", None, held),
    ]
    snap = SnapshotData.model_validate({"name": "g", "steps": [{"name": "x", "kind": "tool"}]})
    run_sync(store.save_snapshot, "g", snap)
    assert run_sync(store.get_snapshot, "g") == snap
    assert run_sync(store.get_snapshot, "nope") is None


def test_remote_store_builds_one_tls_context_for_all_its_requests(
    live_server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client per request, but not a CA-bundle load per request (~60 ms of CPU each):
    every client is handed the same TLS context."""
    import ssl

    import httpx2

    from scenarist._sync import run_sync

    given: list[object] = []

    class Recording(httpx2.AsyncClient):
        def __init__(self, **options: object) -> None:
            given.append(options.get("verify"))
            super().__init__(**options)  # type: ignore[arg-type]

    monkeypatch.setattr(httpx2, "AsyncClient", Recording)
    store = RemoteStore(live_server.url)
    for _ in range(3):
        assert run_sync(store.get_trace, "missing") is None
    assert len(given) == 3
    assert isinstance(given[0], ssl.SSLContext)
    assert all(context is given[0] for context in given)


def test_client_with_remote_store_stores_runs_on_the_server(
    live_server: LiveServer, database_url: str
) -> None:
    client = Client(store=RemoteStore(live_server.url))

    def agent(ctx: object) -> str:
        return "refund approved"

    items = [ScenarioItem(name="ok", input="refund?"), ScenarioItem(name="ko", input="x")]
    result = client.run_scenario(
        "billing", agent, [TraceAssert.output_contains("refund", where="final")], items=items
    )
    assert (result.pass_count, result.fail_count) == (2, 0)

    from scenarist._sync import run_sync

    server_side = SqlStore(database_url)
    runs = run_sync(server_side.list_scenario_runs, "billing")
    assert [r.run_id for r in runs] == [result.run_id]
    assert [i.name for i in runs[0].items] == ["ok", "ko"]
    trace_id = runs[0].items[0].trace_id
    assert trace_id is not None
    stored = run_sync(server_side.get_trace, trace_id)
    assert stored is not None and stored.output == "refund approved"
    assert [r.run_id for r in run_sync(client.store.list_scenario_runs, "billing")] == [
        result.run_id
    ]


def test_remote_store_errors_are_request_and_send_errors(live_server: LiveServer) -> None:
    from scenarist._sync import run_sync

    down = RemoteStore(
        f"http://127.0.0.1:{free_port()}", retries=0, timeout_s=2, raise_on_send_failure=True
    )
    with pytest.raises(SendError, match="is the server running"):
        run_sync(down.save_trace, TraceRecord(trace_id="t"))
    with pytest.raises(RequestError) as read_error:
        run_sync(down.get_trace, "t")
    assert not isinstance(read_error.value, SendError)

    store = SqlStore(live_server_url_db(live_server))
    run_sync(store.create_api_key, ["read"])
    refused = RemoteStore(live_server.url, api_key="sk_scen_nope_nope", retries=0)
    with pytest.raises(SendError) as error:
        run_sync(refused.save_trace, TraceRecord(trace_id="t"))
    assert error.value.status_code == 401
    assert "not valid" in str(error.value)


def live_server_url_db(server: LiveServer) -> str:
    app = server.server.config.app
    return str(app.state.store.url)  # type: ignore[union-attr]
