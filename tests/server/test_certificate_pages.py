"""The replay certificate through the store, the JSON API and the dashboard (run and
trace pages, asserted on their JSON twins), on SQLite and PostgreSQL; logs and traces
from before the certificate read as none."""

from __future__ import annotations

from typing import Any

import httpx
import httpx2
import pytest
from tests.replay.cassette_support import echo_script
from tests.server.conftest import make_run_log, run_log_json

from scenarist import Client, RunContext
from scenarist.model.certificate import ReplayCertificate
from scenarist.replay.step_replay import ReplayOptions
from scenarist.store import MemoryStore
from scenarist.testing import FakeLLMServer

pytestmark = pytest.mark.anyio

HTML = {"accept": "text/html"}
CERTIFICATE = {"replayed": 3, "missed": 0, "refused": 1, "live": 0, "guarantee": "in-process"}


async def _json(client: httpx2.AsyncClient, url: str) -> Any:
    response = await client.get(url, headers={"accept": "application/json"})
    assert response.status_code == 200, response.text
    return response.json()


async def test_a_run_certificate_is_served_by_the_api_and_the_run_page(
    app_client: httpx2.AsyncClient,
) -> None:
    log = make_run_log("cert-run")
    log.header = log.header.model_copy(
        update={"certificate": ReplayCertificate.model_validate(CERTIFICATE)}
    )
    old = make_run_log("old-run")
    for body in (log, old):
        posted = await app_client.post("/api/runs", json=run_log_json(body))
        assert posted.status_code in (200, 201), posted.text
    assert (await _json(app_client, "/api/runs/cert-run"))["certificate"] == CERTIFICATE
    assert (await _json(app_client, "/runs/cert-run.json"))["certificate"] == CERTIFICATE
    html = (await app_client.get("/runs/cert-run", headers=HTML)).text
    assert 'id="certificate"' in html and 'data-guarantee="in-process"' in html
    # a log written before the certificate existed reads as none, everywhere
    assert (await _json(app_client, "/api/runs/old-run"))["certificate"] is None
    assert (await _json(app_client, "/runs/old-run.json"))["certificate"] is None
    assert 'id="certificate"' not in (await app_client.get("/runs/old-run", headers=HTML)).text


def _replayed_trace() -> tuple[Any, Any]:
    """A recorded trace and its strict replay (the replay's call served, never sent)."""
    client = Client(store=MemoryStore())
    with FakeLLMServer(echo_script()) as server:

        def agent(ctx: RunContext) -> str:
            body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "q"}]}
            with httpx.Client() as http:
                reply = http.post(server.url + "/v1/chat/completions", json=body)
            return str(reply.json()["choices"][0]["message"]["content"])

        client.run("agent", agent, input="hi")
        (recording,) = client.store.traces.values()  # type: ignore[attr-defined]
        sent = len(server.requests)
        result = client.replay(recording, agent, ReplayOptions(mock_llm_responses=True))
        assert len(server.requests) == sent
    return recording, result.replayed_record


async def test_a_replayed_trace_shows_its_certificate_in_the_api_and_the_trace_page(
    app_client: httpx2.AsyncClient,
) -> None:
    recording, replayed = _replayed_trace()
    store = app_client.app.state.store  # type: ignore[attr-defined]
    await store.save_trace(recording)
    await store.save_trace(replayed)
    expected = {"replayed": 1, "missed": 0, "refused": 0, "live": 0, "guarantee": "in-process"}
    api = await _json(app_client, f"/v1/traces/{replayed.trace_id}")
    assert api["certificate"] == expected
    page = await _json(app_client, f"/traces/{replayed.trace_id}.json")
    assert page["certificate"] == expected
    html = (await app_client.get(f"/traces/{replayed.trace_id}", headers=HTML)).text
    assert 'id="certificate"' in html
    # the recording itself is no replay: no certificate
    assert "certificate" not in await _json(app_client, f"/v1/traces/{recording.trace_id}")
    assert (await _json(app_client, f"/traces/{recording.trace_id}.json"))["certificate"] is None


async def test_a_scenario_run_of_trace_backed_items_shows_its_certificate(
    app_client: httpx2.AsyncClient,
) -> None:
    from scenarist.model.items import ScenarioItem

    recording, _ = _replayed_trace()
    client = Client(store=MemoryStore())
    client.store.traces[recording.trace_id] = recording  # type: ignore[attr-defined]

    with FakeLLMServer(echo_script()) as server:

        def replayed(ctx: RunContext) -> str:
            body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "q"}]}
            with httpx.Client() as http:
                reply = http.post(server.url + "/v1/chat/completions", json=body)
            return str(reply.json()["choices"][0]["message"]["content"])

        result = client.run_scenario(
            "certified", replayed, items=[ScenarioItem(trace_id=recording.trace_id)]
        )
        assert not server.requests
    store = app_client.app.state.store  # type: ignore[attr-defined]
    record = result.to_record(result.started_at)
    await store.save_scenario_run(record)
    expected = {"replayed": 1, "missed": 0, "refused": 0, "live": 0, "guarantee": "in-process"}
    assert (await _json(app_client, f"/api/runs/{result.run_id}"))["certificate"] == expected
    page = await _json(app_client, f"/runs/{result.run_id}.json")
    assert page["certificate"] == expected
    assert page["items"][0]["certificate"] == expected
    # sent over HTTP (a client with a remote store), it arrives whole
    sent = record.model_copy(update={"run_id": "sent-run"}).model_dump(mode="json")
    posted = await app_client.post("/v1/scenarios/certified/runs", json=sent)
    assert posted.status_code == 201, posted.text
    assert (await _json(app_client, "/api/runs/sent-run"))["certificate"] == expected
    assert (await _json(app_client, "/runs/sent-run.json"))["items"][0]["certificate"] == expected
