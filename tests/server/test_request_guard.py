"""What a web page on another site cannot make the server do, on SQLite and PostgreSQL:
plant runs or prune and pin through the user's browser (a foreign ``Origin`` or
``Sec-Fetch-Site``, JSON endpoints sent as ``text/plain`` or a form), or read runs
through DNS rebinding (a ``Host`` that is not the server's own name). The CLI, the SDKs
and the dashboard's own pages (no ``Origin``, or their own) keep working."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from tests.server.conftest import make_run_log, run_log_json

from scenarist.server.app import create_app

pytestmark = pytest.mark.anyio

EVIL = "https://evil.example"
OWN = "http://127.0.0.1:8480"


async def _client(app: Any, host: str = "127.0.0.1:8480") -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=f"http://{host}")


@pytest.fixture
async def client(database_url: str) -> AsyncIterator[httpx2.AsyncClient]:
    """A loopback app in open mode, reached as ``http://127.0.0.1:8480``."""
    app = create_app(database_url)
    async with app.router.lifespan_context(app), await _client(app) as http:
        http.app = app  # type: ignore[attr-defined]
        yield http


def _run_log_text(run_id: str) -> str:
    return json.dumps(run_log_json(make_run_log(run_id)))


async def _stored_runs(client: httpx2.AsyncClient) -> list[str]:
    return [run["run_id"] for run in (await client.get("/api/runs")).json()["items"]]


async def test_cross_origin_writes_are_refused_whatever_their_content_type(
    client: httpx2.AsyncClient,
) -> None:
    for headers in (
        {"Origin": EVIL, "Content-Type": "text/plain"},  # what a page can send without CORS
        {"Origin": EVIL, "Content-Type": "application/json"},
        {"Origin": "null", "Content-Type": "application/json"},  # a sandboxed frame
        {"Origin": "http://127.0.0.1:9999", "Content-Type": "application/json"},  # other port
        {"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"},
        {"Sec-Fetch-Site": "same-site", "Content-Type": "application/json"},
    ):
        answer = await client.post("/api/runs", content=_run_log_text("planted"), headers=headers)
        assert answer.status_code == 403, (headers, answer.text)
        error = answer.json()["error"]
        assert error["code"] == "cross_origin"
        assert "another origin" in error["message"]
    assert await _stored_runs(client) == []


async def test_json_endpoints_sent_as_text_or_forms_are_415(client: httpx2.AsyncClient) -> None:
    for content_type in (
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ):
        answer = await client.post(
            "/api/runs", content=_run_log_text("as-text"), headers={"Content-Type": content_type}
        )
        assert answer.status_code == 415, (content_type, answer.text)
        assert answer.json()["error"]["code"] == "unsupported_media_type"
        assert "application/json" in answer.json()["error"]["message"]
        trace = await client.post(
            "/v1/traces", content='{"trace_id": "t"}', headers={"Content-Type": content_type}
        )
        assert trace.status_code == 415
    assert await _stored_runs(client) == []
    assert (await client.get("/v1/traces/t")).status_code == 404


async def test_bodiless_cross_origin_posts_change_nothing(client: httpx2.AsyncClient) -> None:
    assert (
        await client.post("/api/runs", json=run_log_json(make_run_log("r1")))
    ).status_code == 201
    for method, path in (
        ("POST", "/api/retention/prune"),
        ("POST", "/api/runs/r1/pin"),
        ("DELETE", "/api/runs/r1/pin"),
        ("POST", "/v1/snapshots"),
    ):
        for headers in ({"Origin": EVIL}, {"Sec-Fetch-Site": "cross-site"}):
            answer = await client.request(method, path, headers=headers)
            assert answer.status_code == 403, (method, path, answer.text)
    store = client.app.state.store  # type: ignore[attr-defined]
    assert (await store.get_run("r1")) is not None
    assert not (await client.get("/api/runs/r1")).json().get("pinned")


async def test_same_origin_and_non_browser_clients_keep_working(
    client: httpx2.AsyncClient,
) -> None:
    body = _run_log_text("ok-1")
    plain = await client.post(
        "/api/runs", content=body, headers={"Content-Type": "application/json"}
    )
    assert plain.status_code == 201  # the CLI and the SDKs send no Origin
    same = await client.post(
        "/api/runs",
        content=_run_log_text("ok-2"),
        headers={
            "Origin": OWN,
            "Sec-Fetch-Site": "same-origin",
            "Content-Type": "application/json",
        },
    )
    assert same.status_code == 201, same.text
    lines = "\n".join(
        json.dumps(record.model_dump(mode="json")) for record in make_run_log("ok-3").records()
    )
    ndjson = await client.post(
        "/api/runs", content=lines + "\n", headers={"Content-Type": "application/x-ndjson"}
    )
    assert ndjson.status_code == 201, ndjson.text
    no_type = await client.post("/api/runs/ok-1/pin")  # bodiless, no Content-Type: fine
    assert no_type.status_code == 200
    typed = await client.post(
        "/v1/traces", content='{"trace_id": "t2"}', headers={"Content-Type": "application/vnd+json"}
    )
    assert typed.status_code == 201
    assert sorted(await _stored_runs(client)) == ["ok-1", "ok-2", "ok-3"]
    user_started = await client.post(
        "/api/retention/prune", headers={"Sec-Fetch-Site": "none"}
    )  # typed into the address bar or a bookmark: no other site involved
    assert user_started.status_code == 200


async def test_foreign_host_names_are_421_on_a_loopback_server(database_url: str) -> None:
    """DNS rebinding: evil.example resolves to 127.0.0.1, the browser sends its own name."""
    app = create_app(database_url)
    async with app.router.lifespan_context(app):
        async with await _client(app) as http:
            assert (await http.post("/api/runs", json=run_log_json(make_run_log("r")))).is_success
        for host in ("evil.example:8480", "evil.example", "127.0.0.1.evil.example", "0.0.0.0:8480"):
            async with await _client(app, host) as http:
                for path in ("/api/runs", "/", "/api/runs/r", "/api/health"):
                    answer = await http.get(path, headers={"Accept": "application/json"})
                    assert answer.status_code == 421, (host, path, answer.text)
                    assert answer.json()["error"]["code"] == "host_not_allowed"
                    assert "--allowed-host" in answer.json()["error"]["message"]
                    assert "r" not in answer.text.split('"')  # no run leaked
        for host in ("127.0.0.1:8480", "localhost:1", "LOCALHOST", "[::1]:8480", "127.0.0.2"):
            async with await _client(app, host) as http:
                assert (await http.get("/api/runs")).status_code == 200, host


async def test_the_allow_list_admits_named_hosts(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(database_url, allowed_hosts=["Scenarist.Example.com"])
    async with app.router.lifespan_context(app):
        for host, status in (
            ("scenarist.example.com", 200),
            ("scenarist.example.com:443", 200),
            ("127.0.0.1:8480", 200),
            ("other.example.com", 421),
        ):
            async with await _client(app, host) as http:
                assert (await http.get("/api/health")).status_code == status, host
    monkeypatch.setenv("SCENARIST_ALLOWED_HOSTS", "ci.internal, dash.internal")
    public = create_app(database_url, host="0.0.0.0")  # keys required: any name, unless listed
    async with public.router.lifespan_context(public):
        for host, status in (("ci.internal:8480", 200), ("dash.internal", 200), ("x.y", 421)):
            async with await _client(public, host) as http:
                assert (await http.get("/api/health")).status_code == status, host
    monkeypatch.delenv("SCENARIST_ALLOWED_HOSTS")
    unlisted = create_app(database_url, host="0.0.0.0")
    async with unlisted.router.lifespan_context(unlisted), await _client(unlisted, "x.y") as http:
        assert (await http.get("/api/health")).status_code == 200
