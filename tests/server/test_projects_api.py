"""Projects over HTTP: the request's project (query, header, cookie), keys scoped to
projects, ``RemoteStore(project=...)`` / ``Client(project=...)``, and the switcher."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from tests.server.conftest import make_run_log, run_log_json

from scenarist._sync import run_sync
from scenarist.model.record import TraceRecord
from scenarist.server.app import create_app
from scenarist.store.remote import RemoteStore

pytestmark = pytest.mark.anyio


def _client(app: Any, key: str | None = None) -> httpx2.AsyncClient:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1", headers=headers
    )


async def test_each_request_reads_and_writes_its_project(database_url: str) -> None:
    app = create_app(database_url)
    async with app.router.lifespan_context(app), _client(app) as client:
        alpha = {"X-Scenarist-Project": "alpha"}
        posted = await client.post(
            "/api/runs", json=run_log_json(make_run_log("ra")), headers=alpha
        )
        assert posted.status_code == 201
        assert (
            await client.post("/api/runs?project=beta", json=run_log_json(make_run_log("rb")))
        ).status_code == 201
        ids = lambda page: [r["run_id"] for r in page.json()["items"]]  # noqa: E731
        assert ids(await client.get("/api/runs", headers=alpha)) == ["ra"]
        assert ids(await client.get("/api/runs?project=beta")) == ["rb"]
        assert ids(await client.get("/api/runs")) == []  # default
        assert (await client.get("/api/runs/rb", headers=alpha)).status_code == 404
        bad = await client.get("/api/runs", headers={"X-Scenarist-Project": "no way"})
        assert bad.status_code == 400
        assert bad.json()["error"]["code"] == "bad_project"
        assert "X-Scenarist-Project: project: 'no way' is not a project name" in bad.text


async def test_a_key_scoped_to_a_project_opens_that_project_only(database_url: str) -> None:
    app = create_app(database_url)
    async with app.router.lifespan_context(app):
        _, admin = await app.state.store.create_api_key(["admin"])
        _, key = await app.state.store.create_api_key(["ingest", "read"], projects=["alpha"])
        async with _client(app, key) as client:
            # naming no project: the key's only one
            assert (
                await client.post("/api/runs", json=run_log_json(make_run_log("r1")))
            ).status_code == 201
            listed = await client.get("/api/runs?project=alpha")
            assert [r["run_id"] for r in listed.json()["items"]] == ["r1"]
            other = await client.get("/api/runs", headers={"X-Scenarist-Project": "beta"})
            assert other.status_code == 403
            assert "scoped to the project(s) alpha, not 'beta'" in other.json()["error"]["message"]
            log = make_run_log("r2")
            log.header.project = "beta"  # a run log naming another project is refused too
            assert (await client.post("/api/runs", json=run_log_json(log))).status_code == 403
        async with _client(app, admin) as client:
            everything = await client.get("/api/runs?project=alpha")
            assert [r["run_id"] for r in everything.json()["items"]] == ["r1"]
            created = await client.post(
                "/api/keys", json={"scopes": ["read"], "projects": ["beta"]}
            )
            assert created.status_code == 201 and created.json()["projects"] == ["beta"]
        _, scoped_admin = await app.state.store.create_api_key(["admin"], projects=["alpha"])
        async with _client(app, scoped_admin) as client:
            refused = await client.post("/api/keys", json={"projects": ["beta"]})
            assert refused.status_code == 403
            inherited = await client.post("/api/keys", json={"scopes": ["read"]})
            assert inherited.json()["projects"] == ["alpha"]


def test_remote_store_and_client_send_their_project(database_url: str) -> None:
    from scenarist.server.threaded import ThreadedServer
    from scenarist.store.sql.store import SqlStore
    from scenarist.veval.client import Client, ClientOptions

    with ThreadedServer(create_app(database_url)) as server:
        remote = RemoteStore(server.url, project="alpha", retries=0)
        run_sync(remote.save_trace, TraceRecord(trace_id="t-alpha"))
        client = Client(base_url=server.url, project="beta")
        assert client.store.project == "beta"  # type: ignore[attr-defined]
        run_sync(client.store.save_trace, TraceRecord(trace_id="t-beta"))
        with pytest.warns(DeprecationWarning, match=r"ClientOptions\.project_id is deprecated"):
            options = ClientOptions(project_id="gamma", base_url=server.url)
        veval = Client(options)  # deprecated as in Veval, still the project here
        assert veval.store.project == "gamma"  # type: ignore[attr-defined]
    stored = SqlStore(database_url)
    assert run_sync(stored.scoped("alpha").get_trace, "t-alpha") is not None
    assert run_sync(stored.scoped("beta").get_trace, "t-beta") is not None
    assert run_sync(stored.get_trace, "t-alpha") is None  # not in "default"


async def test_the_dashboard_switcher_lists_projects_and_remembers_the_choice(
    database_url: str,
) -> None:
    app = create_app(database_url)
    async with app.router.lifespan_context(app), _client(app) as client:
        await client.post("/api/runs?project=alpha", json=run_log_json(make_run_log("ra")))
        page = await client.get("/?project=alpha", headers={"Accept": "text/html"})
        assert page.status_code == 200
        assert '<b id="current-project">alpha</b>' in page.text
        assert '<a href="/?project=alpha" aria-current="true">alpha</a>' in page.text
        assert '<a href="/?project=default">default</a>' in page.text
        assert "scenarist_project=alpha" in page.headers["set-cookie"]
        # the browser keeps the cookie: its next requests stay on the project chosen
        listed = await client.get("/api/runs")
        assert [r["run_id"] for r in listed.json()["items"]] == ["ra"]
        client.cookies.clear()
        assert (await client.get("/api/runs")).json()["items"] == []


async def test_the_switcher_lists_only_what_the_caller_may_open(database_url: str) -> None:
    app = create_app(database_url)
    async with app.router.lifespan_context(app):
        store = app.state.store
        for project in ("alpha", "beta", "gamma"):
            await store.scoped(project).ingest_run_log(make_run_log(f"run-{project}"))
        _, key = await store.create_api_key(["read"], projects=["alpha", "beta"])
        html = {"Accept": "text/html"}
        async with _client(app) as anonymous:
            login = await anonymous.get("/login", headers=html)
            assert login.status_code == 200
            assert "project-switcher" not in login.text  # nothing listed before a key
            assert "gamma" not in login.text
        async with _client(app, key) as client:
            page = await client.get("/?project=beta", headers=html)
            assert page.status_code == 200
            assert '<b id="current-project">beta</b>' in page.text
            assert '<a href="/?project=alpha">alpha</a>' in page.text
            assert "gamma" not in page.text and "?project=default" not in page.text
