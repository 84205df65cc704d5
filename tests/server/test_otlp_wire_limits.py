"""The OTLP receiver as a collector's peer: gzip and deflate bodies (limits checked after
decompression), caps on spans and bytes per request (413 naming the limit), span depth and
timestamps refused at ingest (4xx naming the span), and ``/v1/traces`` routed by the body's
top-level shape only."""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult
from tests.otel import otlp_data as d
from tests.otel.real_sdk import instrumented, script, support_agent
from tests.server.conftest import LiveServer

from scenarist.server.app import create_app
from scenarist.testing import FakeLLMServer

pytestmark = pytest.mark.anyio

JSON = {"content-type": "application/json"}
TRACE_ID = f"tr_{d.TRACE}"


def _doc(n: int = 2) -> dict[str, Any]:
    return d.document(*(d.span(i, f"s{i}", {}) for i in range(1, n + 1)))


async def _client(app: Any) -> AsyncIterator[httpx2.AsyncClient]:
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            client.app = app  # type: ignore[attr-defined]
            yield client


@pytest.fixture
async def small_limits(database_url: str) -> AsyncIterator[httpx2.AsyncClient]:
    """An app with small limits: 20,000 body bytes, 10 spans and 8,000 bytes per OTLP request."""
    app = create_app(database_url, max_body_bytes=20_000, otlp_max_spans=10, otlp_max_bytes=8_000)
    async for client in _client(app):
        yield client


# -- item 13: Content-Encoding ---------------------------------------------------------------


def test_the_sdk_exporter_with_gzip_delivers_its_spans(database_url: str) -> None:
    """The OTel SDK's OTLP/HTTP exporter with gzip (the Collector's otlphttp default)."""
    with LiveServer(create_app(database_url)) as server:
        exporter = OTLPSpanExporter(
            endpoint=f"{server.url}/otlp/v1/traces", compression=Compression.Gzip, timeout=60
        )
        results: list[SpanExportResult] = []
        export = exporter.export

        def recording(spans: Any) -> SpanExportResult:
            results.append(export(spans))
            return results[-1]

        exporter.export = recording  # type: ignore[method-assign]
        with FakeLLMServer(script()) as llm, instrumented(exporter) as (provider, _):
            support_agent(provider, llm.openai_url, "Where is order A1?")
        assert results and set(results) == {SpanExportResult.SUCCESS}
        with httpx2.Client(base_url=server.url) as http:
            (summary,) = http.get("/api/traces").json()["items"]
            trace = http.get(f"/v1/traces/{summary['trace_id']}").json()
        assert {"support agent", "lookup"} <= {s["name"] for s in trace["steps"]}


async def test_gzip_and_deflate_bodies_on_otlp_and_json_routes(
    app_client: httpx2.AsyncClient,
) -> None:
    body = json.dumps(_doc()).encode()
    for encoding, data in (
        ("gzip", gzip.compress(body)),
        ("x-gzip", gzip.compress(body)),
        ("deflate", zlib.compress(body)),  # HTTP's deflate: zlib-wrapped
        ("deflate", _raw_deflate(body)),  # what some clients send for deflate
        ("identity", body),
        ("GZIP", gzip.compress(body)),
        ("gzip", gzip.compress(body[:100]) + gzip.compress(body[100:])),  # two members
    ):
        response = await app_client.post(
            "/otlp/v1/traces", content=data, headers={**JSON, "content-encoding": encoding}
        )
        assert (response.status_code, response.json()) == (200, {}), (encoding, response.text)
    veval = json.dumps({"trace_id": "t1", "steps": []}).encode()
    response = await app_client.post(
        "/v1/traces", content=gzip.compress(veval), headers={**JSON, "content-encoding": "gzip"}
    )
    assert (response.status_code, response.json()) == (201, {"trace_id": "t1"})
    otlp_at_v1 = await app_client.post(
        "/v1/traces", content=gzip.compress(body), headers={**JSON, "content-encoding": "gzip"}
    )
    assert (otlp_at_v1.status_code, otlp_at_v1.json()) == (200, {})
    stored = await app_client.get(f"/v1/traces/{TRACE_ID}")
    assert [s["name"] for s in stored.json()["steps"]] == ["s1", "s2"]


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-15)
    return packer.compress(data) + packer.flush()


def _bomb(megabytes: int) -> bytes:
    """gzip of ``megabytes`` MB of spaces, made a megabyte at a time (about 1 kB per MB)."""
    packer = zlib.compressobj(9, wbits=31)
    chunk = b" " * 1_000_000
    return b"".join(packer.compress(chunk) for _ in range(megabytes)) + packer.flush()


async def test_a_gzip_bomb_is_413_naming_the_limit(small_limits: httpx2.AsyncClient) -> None:
    bomb = _bomb(10)
    assert len(bomb) < 20_000  # under the body limit as sent
    for path in ("/otlp/v1/traces", "/v1/traces", "/api/runs"):
        response = await small_limits.post(
            path, content=bomb, headers={**JSON, "content-encoding": "gzip"}
        )
        assert response.status_code == 413, (path, response.text)
        message = response.json()["error"]["message"]
        assert "decompressed" in message and "20000 bytes" in message, message


async def test_a_large_bomb_is_stopped_at_the_limit(app_client: httpx2.AsyncClient) -> None:
    """400 MB inflated from 400 kB, against the default 64 MiB limit: refused, and the
    server never holds the inflated body (the peak memory of this process, which serves
    it, grows by less than the bomb)."""
    import resource

    bomb = _bomb(400)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    response = await app_client.post(
        "/otlp/v1/traces", content=bomb, headers={**JSON, "content-encoding": "gzip"}
    )
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert response.status_code == 413 and "decompressed" in response.text
    assert grown_mb < 300, grown_mb


async def test_an_unknown_or_broken_encoding_is_refused(app_client: httpx2.AsyncClient) -> None:
    body = json.dumps(_doc()).encode()
    response = await app_client.post(
        "/otlp/v1/traces", content=body, headers={**JSON, "content-encoding": "br"}
    )
    assert response.status_code == 415
    message = response.json()["error"]["message"]
    assert "'br'" in message and "gzip" in message and "deflate" in message
    broken = await app_client.post(
        "/otlp/v1/traces", content=b"not gzip at all", headers={**JSON, "content-encoding": "gzip"}
    )
    assert broken.status_code == 400 and "gzip" in broken.json()["error"]["message"]
    truncated = await app_client.post(
        "/otlp/v1/traces",
        content=gzip.compress(body)[:-12],
        headers={**JSON, "content-encoding": "gzip"},
    )
    assert truncated.status_code == 400, truncated.text


# -- item 10: spans and bytes per request ----------------------------------------------------


async def test_spans_per_request_are_capped(small_limits: httpx2.AsyncClient) -> None:
    at_cap = await small_limits.post("/otlp/v1/traces", json=_doc(10))
    assert at_cap.status_code == 200, at_cap.text
    over = await small_limits.post("/otlp/v1/traces", json=_doc(11))
    assert over.status_code == 413
    error = over.json()["error"]
    assert error["code"] == "payload_too_large"
    assert "11 spans" in error["message"] and "10 spans" in error["message"]
    assert "SCENARIST_OTLP_MAX_SPANS" in error["message"]
    over_v1 = await small_limits.post("/v1/traces", json=_doc(11))
    assert over_v1.status_code == 413


async def test_spans_per_request_are_capped_in_protobuf(small_limits: httpx2.AsyncClient) -> None:
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    def encoded(n: int) -> bytes:
        document = _doc(n)
        for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            for key in ("traceId", "spanId"):  # protobuf's JSON mapping: ids in base64
                import base64

                span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
        return ParseDict(document, ExportTraceServiceRequest()).SerializeToString()

    headers = {"content-type": "application/x-protobuf"}
    assert (
        await small_limits.post("/otlp/v1/traces", content=encoded(10), headers=headers)
    ).status_code == 200
    over = await small_limits.post("/otlp/v1/traces", content=encoded(11), headers=headers)
    assert over.status_code == 413 and "10 spans" in over.json()["error"]["message"]


async def test_bytes_per_otlp_request_are_capped(small_limits: httpx2.AsyncClient) -> None:
    big = d.document(d.span(1, "x" * 9_000, {}))
    response = await small_limits.post("/otlp/v1/traces", json=big)
    assert response.status_code == 413
    message = response.json()["error"]["message"]
    assert "8000 bytes" in message and "SCENARIST_OTLP_MAX_BYTES" in message
    # the same size through gzip: counted after decompression
    response = await small_limits.post(
        "/otlp/v1/traces",
        content=gzip.compress(json.dumps(big).encode()),
        headers={**JSON, "content-encoding": "gzip"},
    )
    assert response.status_code == 413 and "8000 bytes" in response.json()["error"]["message"]
    # a Veval trace of that size is not an OTLP request: the body limit only
    veval = {"trace_id": "t1", "steps": [{"step_id": "a", "name": "a", "input": "x" * 9_000}]}
    assert (await small_limits.post("/v1/traces", json=veval)).status_code == 201


# -- item 15: depth, timestamps, routing -----------------------------------------------------


def _chain(n: int, trace: str = d.TRACE) -> dict[str, Any]:
    return d.document(
        *(
            d.span(i, f"s{i}", {}, parent=i - 1 if i > 1 else None, trace=trace)
            for i in range(1, n + 1)
        )
    )


async def test_span_trees_deeper_than_the_limit_are_refused(app_client: httpx2.AsyncClient) -> None:
    from scenarist.otel.convert import MAX_SPAN_DEPTH

    ok = await app_client.post("/otlp/v1/traces", json=_chain(MAX_SPAN_DEPTH))
    assert ok.status_code == 200, ok.text
    for path in (f"/v1/traces/{TRACE_ID}", f"/traces/{TRACE_ID}.json"):
        read = await app_client.get(path)
        assert read.status_code == 200, (path, read.text[:300])
    item = await app_client.post(f"/api/traces/{TRACE_ID}/item", json={"scenario_name": "deep"})
    assert item.status_code == 201, item.text
    for depth in (MAX_SPAN_DEPTH + 1, 500, 2000):
        trace = f"{depth:032x}"
        response = await app_client.post("/otlp/v1/traces", json=_chain(depth, trace))
        assert response.status_code == 400, (depth, response.text[:300])
        message = response.json()["error"]["message"]
        assert (
            f"limit of {MAX_SPAN_DEPTH} levels" in message
            and f"{MAX_SPAN_DEPTH + 1:016x}" in message
        ), message
        assert (await app_client.get(f"/v1/traces/tr_{trace}")).status_code == 404


async def test_a_deep_tree_sent_in_two_batches_is_refused(app_client: httpx2.AsyncClient) -> None:
    from scenarist.otel.convert import MAX_SPAN_DEPTH

    spans = _chain(MAX_SPAN_DEPTH + 5)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    first = d.document(*spans[: MAX_SPAN_DEPTH - 2])
    second = d.document(*spans[MAX_SPAN_DEPTH - 2 :])
    assert (await app_client.post("/otlp/v1/traces", json=first)).status_code == 200
    response = await app_client.post("/otlp/v1/traces", json=second)
    assert response.status_code == 400, response.text
    read = await app_client.get(f"/v1/traces/{TRACE_ID}")
    assert read.status_code == 200 and len(read.json()["steps"]) == MAX_SPAN_DEPTH - 2


async def test_timestamps_out_of_range_are_400_naming_the_field(
    app_client: httpx2.AsyncClient,
) -> None:
    for field, value in (
        ("startTimeUnixNano", str(10**30)),
        ("endTimeUnixNano", str(2**64)),
        ("startTimeUnixNano", "-5"),
    ):
        span = d.span(1, "x", {}) | {field: value}
        response = await app_client.post("/otlp/v1/traces", json=d.document(span))
        assert response.status_code == 400, (field, value, response.text)
        message = response.json()["error"]["message"]
        assert f"resourceSpans[0].scopeSpans[0].spans[0].{field}" in message, message
    event = d.span(1, "x", {}, events=[("e", {})])
    event["events"][0]["timeUnixNano"] = str(10**25)
    response = await app_client.post("/otlp/v1/traces", json=d.document(event))
    assert response.status_code == 400 and "events[0].timeUnixNano" in response.text


async def test_a_veval_trace_with_resource_spans_inside_is_a_veval_trace(
    app_client: httpx2.AsyncClient,
) -> None:
    trace = {
        "trace_id": "t-otlp-inside",
        "steps": [
            {
                "step_id": "s1",
                "name": "export",
                "input": {"resourceSpans": []},
                "output": "resourceSpans",
            }
        ],
    }
    response = await app_client.post("/v1/traces", json=trace)
    assert (response.status_code, response.json()) == (201, {"trace_id": "t-otlp-inside"})
    stored = (await app_client.get("/v1/traces/t-otlp-inside")).json()
    assert stored["steps"][0]["input"] == {"resourceSpans": []}
    # "resourceSpans" as a value at the top level is not the key either
    response = await app_client.post(
        "/v1/traces", json={"trace_id": "t2", "agent_name": "resourceSpans", "steps": []}
    )
    assert response.status_code == 201, response.text
    # and an OTLP body still goes to the receiver, whatever its key order
    document = {"extra": {"resourceSpans": 1}, **_doc()}
    response = await app_client.post("/v1/traces", json=document)
    assert (response.status_code, response.json()) == (200, {})


async def test_veval_traces_have_the_same_depth_limit(app_client: httpx2.AsyncClient) -> None:
    """One rule for every trace from outside: a Veval trace nested past the limit is 422
    naming the step (600 levels were a 500), one at the limit is stored and reads back."""
    from scenarist.model.trace import MAX_SPAN_DEPTH

    def chain(n: int) -> list[dict[str, Any]]:
        return [
            {"step_id": f"s{i}", "parent_step_id": f"s{i - 1}" if i else None, "name": "x"}
            for i in range(n)
        ]

    ok = await app_client.post(
        "/v1/traces", json={"trace_id": "ok", "steps": chain(MAX_SPAN_DEPTH)}
    )
    assert ok.status_code == 201, ok.text
    assert (await app_client.get("/traces/ok.json")).status_code == 200
    for n in (MAX_SPAN_DEPTH + 1, 600):
        response = await app_client.post(
            "/v1/traces", json={"trace_id": f"deep{n}", "steps": chain(n)}
        )
        assert response.status_code == 422, (n, response.text[:300])
        error = response.json()["error"]
        assert error["fields"][0]["field"] == f"steps.{MAX_SPAN_DEPTH}.parent_step_id"
        assert f"limit of {MAX_SPAN_DEPTH}" in error["message"]
        assert (await app_client.get(f"/v1/traces/deep{n}")).status_code == 404
