"""The OTLP/HTTP receiver: protobuf and JSON, both paths, auth, limits, 4xx; and the whole
way from an OTel-instrumented agent to a replayed item, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from tests.otel import otlp_data as d
from tests.otel.real_sdk import instrumented, script, support_agent
from tests.server.conftest import LiveServer

from scenarist._sync import run_sync
from scenarist.server.app import create_app
from scenarist.server.ratelimit import RateLimit
from scenarist.store.sql.store import SqlStore
from scenarist.testing import FakeLLMServer, ScriptedLLM
from scenarist.veval.client import Client

pytestmark = pytest.mark.anyio

PROTOBUF = {"content-type": "application/x-protobuf"}
TRACE_ID = f"tr_{d.TRACE}"


def _doc() -> dict[str, Any]:
    return d.document(
        d.span(
            1, "agent", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}
        ),
        d.span(
            2,
            "chat",
            {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"},
            parent=1,
        ),
    )


def _protobuf() -> bytes:
    with FakeLLMServer(script()) as server, instrumented() as (provider, sink):
        support_agent(provider, server.openai_url, "Where is order A1?")
        return encode_spans(sink.get_finished_spans()).SerializeToString()


async def test_otlp_json_at_the_dedicated_path(app_client: httpx2.AsyncClient) -> None:
    response = await app_client.post("/otlp/v1/traces", json=_doc())
    assert (response.status_code, response.json()) == (200, {})
    stored = await app_client.get(f"/v1/traces/{TRACE_ID}")
    assert stored.status_code == 200
    assert [s["name"] for s in stored.json()["steps"]] == ["agent", "chat"]  # Veval's flat steps
    store: SqlStore = app_client.app.state.store  # type: ignore[attr-defined]
    record = await store.get_trace(TRACE_ID)
    assert record is not None
    (agent,) = record.steps
    assert [c.name for c in agent.children] == ["chat"]


async def test_protobuf_and_json_at_v1_traces_are_otlp_and_veval_still_works(
    app_client: httpx2.AsyncClient,
) -> None:
    response = await app_client.post("/v1/traces", content=_protobuf(), headers=PROTOBUF)
    assert (
        response.status_code == 200 and response.headers["content-type"] == "application/x-protobuf"
    )
    ExportTraceServiceResponse().ParseFromString(response.content)  # OTLP's success body
    as_json = await app_client.post("/v1/traces", json=_doc())
    assert (as_json.status_code, as_json.json()) == (200, {})
    store: SqlStore = app_client.app.state.store  # type: ignore[attr-defined]
    record = await store.get_trace(TRACE_ID)
    assert record is not None and record.metadata["source"] == "otel"
    veval = await app_client.post("/v1/traces", json={"trace_id": "t1"})
    assert (veval.status_code, veval.json()) == (201, {"trace_id": "t1"})


async def test_a_trace_in_two_requests_is_merged(app_client: httpx2.AsyncClient) -> None:
    child = d.document(d.span(2, "child", {}, parent=1))
    root = d.document(d.span(1, "root", {"gen_ai.agent.name": "a"}))
    assert (await app_client.post("/otlp/v1/traces", json=child)).status_code == 200
    assert (await app_client.post("/otlp/v1/traces", json=root)).status_code == 200
    store: SqlStore = app_client.app.state.store  # type: ignore[attr-defined]
    record = await store.get_trace(TRACE_ID)
    assert record is not None
    (top,) = record.steps
    assert (top.name, [c.name for c in top.children]) == ("root", ["child"])


async def test_bad_payloads_are_4xx_naming_the_field(app_client: httpx2.AsyncClient) -> None:
    bad = d.document(d.span(1, "x", {}) | {"spanId": "nothex"})
    response = await app_client.post("/otlp/v1/traces", json=bad)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_otlp"
    assert (
        "resourceSpans[0].scopeSpans[0].spans[0].spanId: expected 16 hex digits" in error["message"]
    )
    junk = await app_client.post("/otlp/v1/traces", content=b"\xff\xff\xff", headers=PROTOBUF)
    assert junk.status_code == 400 and "not an OTLP protobuf" in junk.json()["error"]["message"]
    not_json = await app_client.post(
        "/otlp/v1/traces", content=b"{nope", headers={"content-type": "application/json"}
    )
    assert not_json.status_code == 400
    other = await app_client.post(
        "/otlp/v1/traces", content=b"x", headers={"content-type": "text/plain"}
    )
    assert other.status_code == 415 and "application/x-protobuf" in other.json()["error"]["message"]


async def test_same_auth_as_the_api(app_client: httpx2.AsyncClient) -> None:
    store: SqlStore = app_client.app.state.store  # type: ignore[attr-defined]
    _, ingest = await store.create_api_key(["ingest"])
    _, read = await store.create_api_key(["read"])
    body = json.dumps(_doc())
    headers = {"content-type": "application/json"}
    for path in ("/otlp/v1/traces", "/v1/traces"):
        assert (await app_client.post(path, content=body, headers=headers)).status_code == 401
        forbidden = await app_client.post(
            path, content=body, headers=headers | {"authorization": f"Bearer {read}"}
        )
        assert forbidden.status_code == 403
        ok = await app_client.post(
            path, content=body, headers=headers | {"authorization": f"Bearer {ingest}"}
        )
        assert ok.status_code == 200


async def test_body_limit_and_rate_limit_apply(database_url: str) -> None:
    app = create_app(database_url, max_body_bytes=2000, rate_limit=RateLimit.parse("1/min", 1))
    big = d.document(*(d.span(i, "s" * 50, {}) for i in range(1, 40)))
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            for path in ("/otlp/v1/traces", "/v1/traces"):
                too_big = await client.post(path, json=big)
                assert too_big.status_code == 413, path
                assert too_big.json()["error"]["code"] == "payload_too_large"

            async def chunks() -> Any:
                for _ in range(10):
                    yield b" " * 500
                yield json.dumps(_doc()).encode()

            streamed = await client.post(
                "/v1/traces", content=chunks(), headers={"content-type": "application/json"}
            )
            assert streamed.status_code == 413
            assert (await client.post("/otlp/v1/traces", json=_doc())).status_code == 200
            limited = await client.post("/otlp/v1/traces", json=_doc())
            assert limited.status_code == 429 and "Retry-After" in limited.headers


def test_an_instrumented_agent_exports_to_serve_and_its_trace_replays_offline(
    database_url: str,
) -> None:
    """The real SDK, OpenInference's OpenAI instrumentation and the OTLP/HTTP exporter, to a
    real server on loopback; the trace shows on the dashboard, becomes an item, and the item
    replays with nothing reaching the provider."""
    with LiveServer(create_app(database_url)) as server:
        exporter = OTLPSpanExporter(endpoint=f"{server.url}/v1/traces", timeout=60)
        with FakeLLMServer(script()) as llm, instrumented(exporter) as (provider, _):
            assert support_agent(provider, llm.openai_url, "Where is order A1?") == "It shipped."
        with httpx2.Client(base_url=server.url) as http:
            (summary,) = http.get("/api/traces").json()["items"]
            trace_id = summary["trace_id"]
            page = http.get(f"/traces/{trace_id}.json")
            assert page.status_code == 200, page.text
            text = json.dumps(page.json())
            assert "support agent" in text and "ChatCompletion" in text and "lookup" in text
            item = http.post(f"/api/traces/{trace_id}/item", json={"scenario_name": "support"})
            assert item.status_code == 201, item.text
        store = SqlStore(database_url)
        with FakeLLMServer(ScriptedLLM()) as live, instrumented() as (provider, _):

            def agent(ctx: Any) -> str:
                return support_agent(provider, live.openai_url, ctx.input)

            result = Client(store=store).run_scenario("support", agent)
            assert live.requests == []
        run_sync(store.close)
        (outcome,) = result.results
        assert outcome.passed, outcome.failures
        assert outcome.output == "It shipped."


def test_live_export_sends_each_run_to_the_otlp_endpoint(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scenarist.otel import live_export
    from scenarist.store.memory import MemoryStore

    def agent(ctx: Any) -> str:
        with ctx.step("plan", input={"q": ctx.input}, kind="custom"):
            ctx.track_step("lookup", "A1", lambda: {"status": "shipped"})
        return "shipped"

    with LiveServer(create_app(database_url)) as server:
        monkeypatch.setenv("SCENARIST_OTLP_ENDPOINT", server.url + "/otlp")
        client = Client(store=MemoryStore())
        client.run("support", agent, input="where is A1?")
        assert live_export.flush(timeout=60)
        (local,) = client.store.traces.values()  # type: ignore[attr-defined]
        store = SqlStore(database_url)
        remote = run_sync(store.get_trace, local.trace_id)
        run_sync(store.close)
    assert remote is not None
    assert remote.model_dump(mode="json") == local.model_dump(mode="json")
    assert [s.name for s in remote.spans] == ["plan", "lookup"]


def test_live_export_failures_never_break_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.helpers.databases import free_port

    from scenarist.otel import live_export
    from scenarist.store.memory import MemoryStore

    endpoint = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    monkeypatch.setenv("SCENARIST_OTLP_ENDPOINT", endpoint)
    monkeypatch.delenv("SCENARIST_OTLP_HEADERS", raising=False)
    client = Client(store=MemoryStore())
    client.run("support", lambda ctx: "ok", input="x")
    assert live_export.flush(timeout=60)
    exporter = live_export._exporters[f"{endpoint}\n"]
    assert exporter.failed >= 1 and exporter.url.endswith("/v1/traces")
    assert len(client.store.traces) == 1  # type: ignore[attr-defined]
