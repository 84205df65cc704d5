"""What the OTLP receiver stores: in the key's project, a trace's batches merged (never
replaced), any number of trace ids per request within the drivers' argument limits, and
secrets in attributes redacted before storage. Through the real server on a socket, on
SQLite and PostgreSQL, with the real OpenTelemetry SDK exporter where it applies."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx2
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Status, StatusCode
from sqlalchemy import select, text
from tests.otel import otlp_data as d
from tests.server.conftest import LiveServer

from scenarist._sync import run_sync
from scenarist.model.record import TraceRecord
from scenarist.model.trace import Span
from scenarist.otel.export import to_otlp_json
from scenarist.server.app import create_app
from scenarist.store.sql.models import TraceRow, table_of
from scenarist.store.sql.store import SqlStore

TRACE_ID = f"tr_{d.TRACE}"
JSON = {"content-type": "application/json"}
PROTOBUF = {"content-type": "application/x-protobuf"}


def _key(database_url: str, scopes: list[str], projects: list[str] | None = None) -> str:
    store = SqlStore(database_url)

    async def create() -> str:
        try:
            _, key = await store.create_api_key(scopes, projects=projects)
            return key
        finally:
            await store.close()

    return run_sync(create)


@pytest.fixture
def server(database_url: str) -> Iterator[LiveServer]:
    with LiveServer(create_app(database_url)) as live:
        yield live


def _bearer(key: str, **extra: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}", **extra}


def _post(server: LiveServer, key: str, document: dict[str, Any], **headers: str) -> Any:
    with httpx2.Client(base_url=server.url, timeout=120) as http:
        return http.post(
            "/otlp/v1/traces", content=json.dumps(document), headers=_bearer(key, **JSON, **headers)
        )


def _get(server: LiveServer, key: str, path: str, **headers: str) -> Any:
    with httpx2.Client(base_url=server.url, timeout=120) as http:
        return http.get(path, headers=_bearer(key, **headers))


# -- the project comes from the key, and two batches of one trace merge ------------------


def test_the_sdk_exporter_with_a_project_key_stores_there_and_two_flushes_merge(
    server: LiveServer, database_url: str
) -> None:
    """An exporter holding alpha's key (naming no project) writes to alpha; a trace whose
    spans leave in two batches (a child flushed while its parent is still open) is one
    trace with both spans."""
    alpha = _key(database_url, ["ingest", "read"], ["alpha"])
    admin = _key(database_url, ["admin"])
    exporter = OTLPSpanExporter(
        endpoint=f"{server.url}/v1/traces", headers=_bearer(alpha), timeout=60
    )
    provider = TracerProvider(resource=Resource.create({"service.name": "support-agent"}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    tracer = provider.get_tracer("support")
    try:
        with tracer.start_as_current_span("support agent") as root:
            root.set_attribute("gen_ai.operation.name", "invoke_agent")
            root.set_attribute("gen_ai.agent.name", "support")
            with tracer.start_as_current_span("lookup") as tool:
                tool.set_attribute("gen_ai.operation.name", "execute_tool")
                tool.set_attribute("gen_ai.tool.name", "lookup")
            assert provider.force_flush(60_000)  # the first batch: the tool span alone
            trace_id = "tr_" + format(root.get_span_context().trace_id, "032x")
            first = _get(server, alpha, f"/v1/traces/{trace_id}")
            assert first.status_code == 200, first.text
            assert [s["name"] for s in first.json()["steps"]] == ["lookup"]
        assert provider.force_flush(60_000)  # the second batch: the root
    finally:
        provider.shutdown()
    stored = _get(server, alpha, f"/v1/traces/{trace_id}")
    assert stored.status_code == 200, stored.text
    assert [s["name"] for s in stored.json()["steps"]] == ["support agent", "lookup"]
    assert stored.json()["agent_name"] == "support"
    (summary,) = _get(server, alpha, "/api/traces").json()["items"]
    assert (summary["trace_id"], summary["span_count"]) == (trace_id, 2)
    elsewhere = _get(server, admin, f"/v1/traces/{trace_id}", **{"x-scenarist-project": "default"})
    assert elsewhere.status_code == 404


def test_a_named_project_must_be_one_the_key_opens(server: LiveServer, database_url: str) -> None:
    two = _key(database_url, ["ingest", "read"], ["alpha", "beta"])
    document = d.document(d.span(1, "root", {"gen_ai.agent.name": "support"}))
    refused = _post(server, two, document, **{"x-scenarist-project": "gamma"})
    assert refused.status_code == 403 and "alpha, beta" in refused.text
    with httpx2.Client(base_url=server.url, timeout=120) as http:
        by_query = http.post(
            "/otlp/v1/traces?project=beta",
            content=json.dumps(document),
            headers=_bearer(two, **JSON),
        )
    assert by_query.status_code == 200, by_query.text
    assert _get(server, two, f"/v1/traces/{TRACE_ID}?project=beta").status_code == 200
    assert _get(server, two, f"/v1/traces/{TRACE_ID}?project=alpha").status_code == 404


def test_trace_fields_are_recomputed_from_the_merged_spans(
    server: LiveServer, database_url: str
) -> None:
    """A re-sent span replaces its first copy; start, end, status, cost, span count and
    agent name are those of the union."""
    alpha = _key(database_url, ["ingest", "read"], ["alpha"])
    llm = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.usage.input_tokens": 1000,
        "gen_ai.usage.output_tokens": 1000,
    }
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}
    first = d.document(d.span(2, "agent", agent), d.span(3, "chat one", llm, parent=2))
    assert _post(server, alpha, first).status_code == 200
    one = _get(server, alpha, "/api/traces").json()["items"][0]
    assert (one["status"], one["span_count"]) == ("success", 2)
    assert one["cost_usd"] > 0
    second = d.document(
        d.span(1, "agent", agent, error="the tool failed"),  # the root again, now failed
        d.span(9, "chat two", llm, parent=2),
    )
    second["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["spanId"] = f"{2:016x}"
    assert _post(server, alpha, second).status_code == 200
    record = _get(server, alpha, f"/v1/traces/{TRACE_ID}").json()
    (summary,) = _get(server, alpha, "/api/traces").json()["items"]
    assert summary["span_count"] == 3
    assert summary["status"] == record["status"] == "error"
    assert record["agent_name"] == summary["agent_name"] == "support"
    assert summary["cost_usd"] == pytest.approx(2 * one["cost_usd"])
    names = [s["name"] for s in record["steps"]]
    assert sorted(names) == ["agent", "chat one", "chat two"]
    start, end = d.START + 1_000_000, d.START + 9_000_000 + 500_000  # the re-sent root's start
    assert record["started_at"] == _iso(start)
    assert record["completed_at"] == _iso(end)


def _iso(ns: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ns / 1e9, UTC).isoformat()


def test_a_scenarist_record_in_two_batches_keeps_every_span(
    server: LiveServer, database_url: str
) -> None:
    alpha = _key(database_url, ["ingest", "read"], ["alpha"])
    record = TraceRecord(
        trace_id="tr_" + "ab" * 16,
        agent_name="planner",
        steps=[
            Span(span_id="s1", name="plan", kind="custom"),
            Span(span_id="s2", name="act", kind="custom"),
        ],
    )
    document = to_otlp_json([record])
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    for part in ([spans[0]], [spans[1]]):
        batch = json.loads(json.dumps(document))
        batch["resourceSpans"][0]["scopeSpans"][0]["spans"] = part
        assert _post(server, alpha, batch).status_code == 200
    stored = _get(server, alpha, f"/v1/traces/{record.trace_id}").json()
    assert sorted(s["name"] for s in stored["steps"]) == ["act", "plan"]
    assert stored["agent_name"] == "planner"


def test_a_scenarist_record_cannot_reach_another_projects_trace(
    server: LiveServer, database_url: str
) -> None:
    alpha = _key(database_url, ["ingest", "read"], ["alpha"])
    beta = _key(database_url, ["ingest", "read"], ["beta"])
    beta_trace = d.document(d.span(1, "beta's", {"gen_ai.agent.name": "b"}))
    assert _post(server, beta, beta_trace).status_code == 200
    hostile = TraceRecord(trace_id=TRACE_ID, agent_name="alpha was here", steps=[])
    document = to_otlp_json([hostile])
    document["resourceSpans"][0]["scopeSpans"][0]["spans"] = [
        d.span(7, "injected", {"scenarist.kind": "custom"})
    ]
    assert _post(server, alpha, document).status_code == 200
    kept = _get(server, beta, f"/v1/traces/{TRACE_ID}").json()
    assert kept["agent_name"] == "b"
    assert [s["name"] for s in kept["steps"]] == ["beta's"]


def test_concurrent_exports_of_one_trace_lose_no_span(
    server: LiveServer, database_url: str
) -> None:
    """Services exporting spans of one trace at once (distributed tracing): every span
    is kept (the read, merge and write of a trace are one transaction)."""
    alpha = _key(database_url, ["ingest", "read"], ["alpha"])
    count = 12

    def export(n: int) -> int:
        parent = None if n == 1 else 1
        document = d.document(d.span(n, f"span {n}", {}, parent=parent))
        return int(_post(server, alpha, document).status_code)

    with ThreadPoolExecutor(count) as pool:
        assert list(pool.map(export, range(1, count + 1))) == [200] * count
    stored = _get(server, alpha, f"/v1/traces/{TRACE_ID}").json()
    assert sorted(s["name"] for s in stored["steps"]) == sorted(
        f"span {n}" for n in range(1, count + 1)
    )


# -- batching under the drivers' argument limits ------------------------------------------


def _many_traces(count: int) -> bytes:
    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add().scope_spans.add().spans
    for n in range(1, count + 1):
        span = spans.add()
        span.trace_id = n.to_bytes(16, "big")
        span.span_id = n.to_bytes(8, "big")
        span.name = "s"
        span.start_time_unix_nano = d.START
        span.end_time_unix_nano = d.START + 1000
    return bytes(request.SerializeToString())


def _trace_count(database_url: str, project: str) -> int:
    store = SqlStore(database_url)
    traces = table_of(TraceRow)

    async def count() -> int:
        try:
            async with store._read() as connection:
                query = select(text("count(*)")).select_from(traces)
                found = await connection.scalar(query.where(traces.c.project == project))
                return int(found or 0)
        finally:
            await store.close()

    return run_sync(count)


def test_an_export_of_32768_trace_ids_is_stored_and_again_merged(database_url: str) -> None:
    """asyncpg takes at most 32,767 arguments a statement: more trace ids than that in one
    request are read and written in batches (was a 503 that exporters retried for ever).
    The server's span cap (20,000 by default) is raised for it: an operator may."""
    alpha = _key(database_url, ["ingest"], ["alpha"])
    body = _many_traces(32_768)
    app = create_app(database_url, otlp_max_spans=40_000)
    with LiveServer(app) as server, httpx2.Client(base_url=server.url, timeout=600) as http:
        for _ in range(2):  # the second time, every trace is stored: each is read and merged
            headers = _bearer(alpha, **PROTOBUF)
            response = http.post("/otlp/v1/traces", content=body, headers=headers)
            assert response.status_code == 200, response.text[:500]
    assert _trace_count(database_url, "alpha") == 32_768


@pytest.mark.anyio
async def test_get_traces_reads_more_ids_than_a_statement_takes(database_url: str) -> None:
    store = SqlStore(database_url, project="alpha")
    try:
        await store.save_traces([TraceRecord(trace_id=f"tr_{n}", steps=[]) for n in range(3)])
        found = await store.get_traces([f"tr_{n}" for n in range(40_000)])
        assert sorted(found) == ["tr_0", "tr_1", "tr_2"]
    finally:
        await store.close()


# -- secrets in attributes are redacted before storage ------------------------------------


def _kv(key: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"key": key, "value": value}


def _s(text_value: str) -> dict[str, Any]:
    return {"stringValue": text_value}


SECRET_ATTRIBUTES = [
    _kv("url.full", _s("https://api.example.com/v1/items?api_key=SECRET-A1&page=2")),
    _kv("http.url", _s("https://bob:SECRET-A2@files.example.com/report.pdf")),
    _kv("db.connection_string", _s("Server=db;Database=app;User Id=sa;Password=SECRET-A3;")),
    _kv("peer.dsn", _s("postgresql://app:SECRET-A4@db.internal:5432/app")),
    _kv("db.libpq", _s("host=db.internal user=app password=SECRET-A5 dbname=app")),
    _kv("db.odbc", _s("Pwd=SECRET-A6;Server=db.internal")),
    _kv(
        "config",
        {
            "kvlistValue": {
                "values": [
                    _kv("endpoint", _s("https://llm.example.com")),
                    _kv("api_key", _s("SECRET-A7")),
                    _kv(
                        "auth",
                        {"kvlistValue": {"values": [_kv("client_secret", _s("SECRET-A8"))]}},
                    ),
                ]
            }
        },
    ),
    _kv(
        "http.request.urls",
        {
            "arrayValue": {
                "values": [
                    _s("https://h.example.com/a?token=SECRET-A9"),
                    {"kvlistValue": {"values": [_kv("password", _s("SECRET-B1"))]}},
                    _s("plain text"),
                ]
            }
        },
    ),
    _kv("app.settings", _s(json.dumps({"db": {"url": "mysql://root:SECRET-B2@db/app"}}))),
]


def _secret_document() -> dict[str, Any]:
    span = d.span(1, "fetch report", {}, error="GET https://x.example.com/r?sig=SECRET-B3 failed")
    span["attributes"] = SECRET_ATTRIBUTES
    return d.document(span)


def _database_text(database_url: str) -> str:
    store = SqlStore(database_url)
    traces = table_of(TraceRow)

    async def dump() -> str:
        try:
            async with store._read() as connection:
                rows = (await connection.execute(select(traces))).all()
                return "\n".join(repr(tuple(row)) for row in rows)
        finally:
            await store.close()

    return run_sync(dump)


def test_secrets_in_otlp_attributes_are_redacted_before_storage(
    server: LiveServer, database_url: str
) -> None:
    alpha = _key(database_url, ["ingest", "read"], ["alpha"])
    assert _post(server, alpha, _secret_document()).status_code == 200
    stored = _get(server, alpha, f"/v1/traces/{TRACE_ID}")
    assert stored.status_code == 200, stored.text
    in_database = _database_text(database_url)
    assert "fetch report" in in_database
    for where in (stored.text, in_database):
        assert "SECRET-" not in where, [w for w in where.split('"') if "SECRET-" in w]
    (span,) = stored.json()["steps"]
    attributes = span["metadata"]["otel_attributes"]
    # what is not a secret stays readable
    assert attributes["url.full"] == "https://api.example.com/v1/items?api_key=[redacted]&page=2"
    assert attributes["http.url"] == "https://[redacted]@files.example.com/report.pdf"
    assert attributes["peer.dsn"] == "postgresql://[redacted]@db.internal:5432/app"
    assert attributes["db.libpq"] == "host=db.internal user=app password=[redacted] dbname=app"
    assert attributes["config"]["endpoint"] == "https://llm.example.com"
    assert attributes["config"]["api_key"] == "[redacted]"
    assert attributes["http.request.urls"][2] == "plain text"
    assert "x.example.com" in span["error"] and "sig=[redacted]" in span["error"]


def test_secrets_in_protobuf_key_value_lists_are_redacted(
    server: LiveServer, database_url: str
) -> None:
    alpha = _key(database_url, ["ingest", "read"], ["alpha"])
    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = bytes.fromhex(d.TRACE), (1).to_bytes(8, "big"), "x"
    attribute = span.attributes.add()
    attribute.key = "client"
    inner = attribute.value.kvlist_value.values.add()
    inner.key, inner.value.string_value = "x-api-key", "SECRET-C1"
    listed = span.attributes.add()
    listed.key = "urls"
    listed.value.array_value.values.add().string_value = "https://u:SECRET-C2@h.example.com/"
    with httpx2.Client(base_url=server.url, timeout=120) as http:
        response = http.post(
            "/otlp/v1/traces",
            content=request.SerializeToString(),
            headers=_bearer(alpha, **PROTOBUF),
        )
    assert response.status_code == 200, response.text
    stored = _get(server, alpha, f"/v1/traces/{TRACE_ID}")
    assert stored.status_code == 200 and "SECRET-" not in stored.text
    assert "SECRET-" not in _database_text(database_url)


def test_an_exported_error_status_keeps_its_secret_out(
    server: LiveServer, database_url: str
) -> None:
    """The SDK exporter end to end: an exception's URL in the span status is redacted."""
    alpha = _key(database_url, ["ingest", "read"], ["alpha"])
    exporter = OTLPSpanExporter(
        endpoint=f"{server.url}/otlp/v1/traces", headers=_bearer(alpha), timeout=60
    )
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    try:
        with provider.get_tracer("t").start_as_current_span("call") as span:
            span.set_attribute("url.full", "https://h.example.com/x?access_token=SECRET-D1")
            span.set_attribute("server.credentials", ["user=u", "passwd=SECRET-D2"])
            span.set_status(Status(StatusCode.ERROR, "401 for https://u:SECRET-D3@h.example.com"))
            trace_id = "tr_" + format(span.get_span_context().trace_id, "032x")
        assert provider.force_flush(60_000)
    finally:
        provider.shutdown()
    stored = _get(server, alpha, f"/v1/traces/{trace_id}")
    assert stored.status_code == 200, stored.text
    assert "SECRET-" not in stored.text and "SECRET-" not in _database_text(database_url)


def test_what_retrying_cannot_store_is_a_4xx_never_a_503(
    server: LiveServer, database_url: str
) -> None:
    """OTLP exporters retry 503 (and 429, 502, 504) for ever: a trace that no retry can
    store is answered 4xx, naming the field."""
    alpha = _key(database_url, ["ingest"], ["alpha"])
    too_long = TraceRecord(trace_id="tr_" + "a" * 2000, agent_name="x", steps=[])
    nul = TraceRecord(trace_id="tr_nul", agent_name="a\x00b", steps=[])
    for record, field in ((too_long, "trace_id"), (nul, "agent_name")):
        document = to_otlp_json([record])
        document["resourceSpans"][0]["scopeSpans"][0]["spans"] = [d.span(1, "s", {})]
        response = _post(server, alpha, document)
        assert 400 <= response.status_code < 500, response.text
        assert "retry-after" not in response.headers
        assert field in response.text
