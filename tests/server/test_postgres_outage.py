"""A PostgreSQL server restarting under load: every request is answered 2xx or 503 with
``Retry-After`` (never 500), and the real OTel exporter's retries deliver its spans once
the database is back. Runs against its own throw-away cluster, restarted for real
(``pg_ctl restart``, ``stop`` then ``start``, an ``immediate`` stop, as a crash)."""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from tests.helpers.databases import PGBIN, PgCluster
from tests.otel import otlp_data as d
from tests.server.conftest import LiveServer

from scenarist.server.app import create_app

pytestmark = pytest.mark.skipif(
    not (PGBIN / "initdb").exists(), reason=f"PostgreSQL binaries not found in {PGBIN}"
)


@pytest.fixture
def cluster() -> Iterator[PgCluster]:
    """A cluster of this test's own: restarting it disturbs no other test."""
    pytest.importorskip("asyncpg")
    own = PgCluster()
    try:
        own.start()
        yield own
    finally:
        own.stop()


def _requests(counter: Any) -> list[tuple[str, str, dict[str, Any] | None]]:
    n = next(counter)
    trace = uuid.uuid4().hex
    return [
        ("GET", "/api/health", None),
        ("GET", "/api/runs", None),
        ("GET", "/api/traces", None),
        ("POST", "/v1/traces", {"trace_id": f"veval-{n}"}),
        ("GET", f"/v1/traces/veval-{n}", None),
        ("POST", "/otlp/v1/traces", d.document(d.span(1, "root", {}, trace=trace))),
    ]


def test_requests_during_restarts_are_2xx_or_503(cluster: PgCluster) -> None:
    cluster.createdb("outage", template=cluster.template)
    answers: list[tuple[str, int]] = []
    wrong: list[str] = []
    done = threading.Event()
    counter = itertools.count()

    def client() -> None:
        with httpx2.Client(base_url=server.url, timeout=120) as http:
            while not done.is_set():
                for method, path, body in _requests(counter):
                    try:
                        response = http.request(method, path, json=body)
                    except httpx2.HTTPError as exc:  # our server must always answer
                        wrong.append(f"{method} {path}: {exc!r}")
                        continue
                    answers.append((path, response.status_code))
                    ok = response.status_code < 300 or (
                        response.status_code == 404
                        and (
                            path.startswith("/v1/traces/veval-")  # its POST got a 503
                        )
                    )
                    if response.status_code == 503:
                        ok = response.headers.get("retry-after") == "1" and (
                            response.json()["error"]["code"] == "database_unavailable"
                        )
                    if not ok:
                        wrong.append(f"{method} {path}: {response.status_code} {response.text}")

    with LiveServer(create_app(cluster.url("outage"))) as server:
        threads = [threading.Thread(target=client) for _ in range(4)]
        for thread in threads:
            thread.start()
        try:
            for outage in ("restart-fast", "stop-start", "restart-immediate", "stop-start"):
                time.sleep(0.5)  # (no timing is asserted: requests flow between outages)
                if outage == "restart-fast":
                    cluster.restart("fast")
                elif outage == "restart-immediate":
                    cluster.restart("immediate")
                else:
                    cluster.stop_server()
                    time.sleep(0.5)
                    cluster.start_server()
            time.sleep(0.5)
        finally:
            done.set()
            for thread in threads:
                thread.join(timeout=300)
        with httpx2.Client(base_url=server.url, timeout=120) as http:  # recovered
            assert http.post("/v1/traces", json={"trace_id": "after"}).status_code == 201
            assert http.get("/v1/traces/after").status_code == 200
    assert not wrong, "\n".join(wrong[:20])
    assert len(answers) > 50


def test_the_otel_exporter_retries_a_503_and_delivers_after_the_outage(
    cluster: PgCluster,
) -> None:
    cluster.createdb("exported", template=cluster.template)
    with LiveServer(create_app(cluster.url("exported"))) as server:
        exporter = OTLPSpanExporter(endpoint=f"{server.url}/otlp/v1/traces", timeout=120)
        results: list[SpanExportResult] = []
        codes: list[int] = []
        _record_exports(exporter, results)
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        tracer = provider.get_tracer("outage")
        with httpx2.Client(base_url=server.url, timeout=120) as http:
            assert http.get("/api/traces").status_code == 200  # the pool holds connections
            cluster.stop_server()
            restarted = threading.Timer(2.0, cluster.start_server)
            restarted.start()
            try:
                codes.append(http.get("/api/traces").status_code)
                with tracer.start_as_current_span("during the outage"):
                    pass  # exported on end: retried while the database is down
            finally:
                restarted.join()
            provider.shutdown()
            assert codes == [503]
            assert results == [SpanExportResult.SUCCESS]
            (summary,) = http.get("/api/traces").json()["items"]
            trace = http.get(f"/v1/traces/{summary['trace_id']}").json()
            assert [s["name"] for s in trace["steps"]] == ["during the outage"]


def _record_exports(exporter: SpanExporter, results: list[SpanExportResult]) -> None:
    export = exporter.export

    def recording(spans: Any) -> SpanExportResult:
        results.append(export(spans))
        return results[-1]

    exporter.export = recording  # type: ignore[method-assign]
