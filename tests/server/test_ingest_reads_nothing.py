"""An ``ingest`` key stores; only ``read`` reads (issue 29, item 6). Every route open to
``ingest`` answers with ids and counts, or what the caller sent, never a stored trace's
steps or a scenario's items: the Veval snapshot of a stored trace and the judge of a
stored trace need ``read``, and the dashboard's forms answer their errors without the
page. Through the real HTTP server, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

import httpx2
import pytest
from tests.helpers.limits import HANG_S
from tests.server.conftest import LiveServer
from tests.server.test_api import VEVAL_TRACE

from scenarist.providers.defaults import reset_settings
from scenarist.server.app import create_app
from scenarist.store import admin
from scenarist.testing.fake_providers import FakeLLMServer

TRACE_ID = VEVAL_TRACE["trace_id"]
SECRET = "private prompt of team beta"
TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


class Served(NamedTuple):
    url: str
    ingest: str  # an ingest-only key
    reader: str  # ingest and read: what the Veval SDK's users hold


@pytest.fixture
def served(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    for name in ("SCENARIST_DEFAULT_JUDGE", "SCENARIST_DEFAULT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    reset_settings()
    _, ingest = admin.create_key(["ingest"], database_url=database_url)
    _, reader = admin.create_key(["ingest", "read"], database_url=database_url)
    trace = json.loads(json.dumps(VEVAL_TRACE))
    trace["steps"][0]["input"] = SECRET
    with LiveServer(create_app(database_url)) as server:
        with _client(server.url, reader) as client:
            assert client.post("/v1/traces", json=trace).status_code == 201
            item = {"input": SECRET}
            assert client.post("/v1/scenarios/support/items", json=item).status_code == 201
        yield Served(server.url, ingest, reader)
    reset_settings()


def _client(url: str, key: str) -> httpx2.Client:
    return httpx2.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=HANG_S)


def _no_content(answer: httpx2.Response) -> None:
    assert SECRET not in answer.text
    assert "billing" not in answer.text  # the first step's output


def test_a_snapshot_of_a_stored_trace_needs_read(served: Served) -> None:
    with _client(served.url, served.ingest) as client:
        assert client.get(f"/v1/traces/{TRACE_ID}").status_code == 403  # held already
        taken = client.post("/v1/snapshots", json={"name": "base", "trace_id": TRACE_ID})
        assert taken.status_code == 403, taken.text
        message = taken.json()["error"]["message"]
        assert "'read' scope" in message and "steps" in message
        _no_content(taken)
        # the steps form stores what the caller sent, and answers it: ingest is enough
        steps = [{"name": "classify", "type": "llm", "input": "hi", "output": "there"}]
        sent = client.post(
            "/v1/snapshots", json={"name": "mine", "source_trace_id": "t1", "steps": steps}
        )
        assert sent.status_code == 201 and len(sent.json()["steps"]) == 1
    with _client(served.url, served.reader) as client:
        assert client.get("/v1/snapshots/base").status_code == 404  # nothing was stored
        taken = client.post("/v1/snapshots", json={"name": "base", "trace_id": TRACE_ID})
        assert taken.status_code == 201
        assert taken.json()["steps"][0]["input"] == SECRET  # the Veval SDK's flow


def test_the_judge_of_a_stored_trace_needs_read(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    verdict = json.dumps({"passed": True, "reason": f"It says {SECRET}.", "score": 1.0})
    with FakeLLMServer([verdict, verdict]) as llm:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", llm.openai_url)
        monkeypatch.setenv("SCENARIST_DEFAULT_JUDGE", "openai/gpt-4o-mini")
        reset_settings()
        body = {"criteria": "Repeat the first step's input", "trace_id": TRACE_ID}
        with _client(served.url, served.ingest) as client:
            refused = client.post("/v1/judge", json=body)
            assert refused.status_code == 403, refused.text
            assert "'read' scope" in refused.json()["error"]["message"]
            _no_content(refused)
            inline = client.post("/v1/judge", json={"criteria": "Polite", "trace": VEVAL_TRACE})
            assert inline.status_code == 200  # a trace it sends itself: ingest is enough
        with _client(served.url, served.reader) as client:
            assert client.post("/v1/judge", json=body).status_code == 200


def _csrf(client: httpx2.Client) -> str:
    page = client.get("/login", headers={"Accept": "text/html"})  # open to anyone
    found = TOKEN.search(page.text)
    assert found is not None
    return found.group(1)


@pytest.mark.parametrize(
    ("path", "form"),
    [
        (f"/traces/{TRACE_ID}/item", {"scenario_name": " "}),
        (f"/traces/{TRACE_ID}/snapshot", {"name": " "}),
        ("/items/support", {"action": "nonsense"}),
        ("/items/support", {"action": "delete", "item_id": "nope"}),
    ],
)
def test_dashboard_forms_answer_an_ingest_key_without_the_page(
    served: Served, path: str, form: dict[str, Any]
) -> None:
    with _client(served.url, served.ingest) as client:
        token = _csrf(client)
        answer = client.post(path, data={**form, "csrf_token": token})
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["message"]
        _no_content(answer)
    with _client(served.url, served.reader) as client:  # read: the page, with the error
        token = _csrf(client)
        answer = client.post(
            path, data={**form, "csrf_token": token}, headers={"Accept": "text/html"}
        )
        assert answer.status_code == 422 and SECRET in answer.text


def test_ingest_routes_answer_ids_and_counts(served: Served) -> None:
    with _client(served.url, served.ingest) as client:
        snapshot = client.post(f"/api/traces/{TRACE_ID}/snapshot", json={"name": "s"})
        assert snapshot.status_code == 201
        assert snapshot.json() == {"name": "s", "trace_id": TRACE_ID, "step_count": 2}
        item = client.post(f"/api/traces/{TRACE_ID}/item", json={"scenario_name": "support"})
        assert item.status_code == 201
        assert item.json()["item"]["trace_id"] == TRACE_ID
        _no_content(item)
        for answer in (
            client.post(f"/api/traces/{TRACE_ID}/pin"),
            client.post("/v1/traces", json={**VEVAL_TRACE, "trace_id": "tr_other"}),
            client.post("/otlp/v1/traces", json={"resourceSpans": []}),
        ):
            assert answer.status_code in (200, 201), answer.text
            _no_content(answer)
