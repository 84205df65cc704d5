"""OTLP ingest numbers (not a test): spans per second through the receiver, and the cost of
our OTLP/JSON export per span.

(a) ``POST /otlp/v1/traces`` of ``scenarist serve`` on 127.0.0.1, in its own process as an
exporter meets it (``--server thread``: the app in a thread of this process instead, sharing
the GIL with the client; the route is the one an OTel exporter uses),
protobuf ``ExportTraceServiceRequest`` bodies of ``--batch`` spans (512, the SDK's
``BatchSpanProcessor`` default) spread over traces of 8 spans each (an agent span, llm
and tool spans with GenAI-semconv attributes and captured messages), sent sequentially
from one client, on SQLite and on a throw-away PostgreSQL 15 (``server_bench.PgCluster``).
Issue 17's target: >= 5,000 spans/s.

(b) ``to_otlp_json`` over the stored records, per span (conversion only).

    .venv/bin/python bench/otlp_ingest.py [--spans N] [--batch N] [--backends sqlite,postgresql]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

sys.path.insert(0, str(Path(__file__).resolve().parent))

from server_bench import PGBIN, PgCluster, in_thread, served

from scenarist.otel import parse_otlp, to_otlp_json

TARGET_SPANS_PER_S = 5000.0
SPANS_PER_TRACE = 8


def _kv(key: str, value: Any) -> KeyValue:
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=str(value)))


def _trace_spans(n: int) -> list[Span]:
    trace_id = uuid.uuid4().bytes
    root_id = uuid.uuid4().bytes[:8]
    t0 = time.time_ns()
    spans = [
        Span(
            trace_id=trace_id,
            span_id=root_id,
            name="invoke_agent support",
            start_time_unix_nano=t0,
            end_time_unix_nano=t0 + 10**9,
            attributes=[
                _kv("gen_ai.operation.name", "invoke_agent"),
                _kv("gen_ai.agent.name", "support"),
            ],
        )
    ]
    messages = json.dumps(
        [{"role": "user", "parts": [{"type": "text", "content": "Where is my order?"}]}]
    )
    answer = json.dumps(
        [
            {
                "role": "assistant",
                "parts": [{"type": "text", "content": "It shipped."}],
                "finish_reason": "stop",
            }
        ]
    )
    for i in range(1, n):
        llm = i % 2 == 1
        attributes = (
            [
                _kv("gen_ai.operation.name", "chat"),
                _kv("gen_ai.provider.name", "openai"),
                _kv("gen_ai.request.model", "gpt-4o-mini"),
                _kv("gen_ai.usage.input_tokens", 120),
                _kv("gen_ai.usage.output_tokens", 30),
                _kv("gen_ai.input.messages", messages),
                _kv("gen_ai.output.messages", answer),
            ]
            if llm
            else [
                _kv("gen_ai.operation.name", "execute_tool"),
                _kv("gen_ai.tool.name", "lookup"),
                _kv("gen_ai.tool.call.arguments", '{"order": "A1"}'),
                _kv("gen_ai.tool.call.result", '{"status": "shipped"}'),
            ]
        )
        spans.append(
            Span(
                trace_id=trace_id,
                span_id=uuid.uuid4().bytes[:8],
                parent_span_id=root_id,
                name="chat gpt-4o-mini" if llm else "execute_tool lookup",
                start_time_unix_nano=t0 + i * 1000,
                end_time_unix_nano=t0 + i * 1000 + 500,
                attributes=attributes,
            )
        )
    return spans


def payloads(total: int, batch: int) -> list[bytes]:
    bodies = []
    for _ in range(max(1, total // batch)):
        spans: list[Span] = []
        while len(spans) < batch:
            spans += _trace_spans(SPANS_PER_TRACE)
        request = ExportTraceServiceRequest(
            resource_spans=[
                ResourceSpans(
                    resource={"attributes": [_kv("service.name", "bench")]},
                    scope_spans=[ScopeSpans(spans=spans[:batch])],
                )
            ]
        )
        bodies.append(request.SerializeToString())
    return bodies


def ingest(url: str, bodies: list[bytes], where: str = "process") -> dict[str, Any]:
    headers = {"content-type": "application/x-protobuf"}
    server = served(url) if where == "process" else in_thread(url)
    with server as base, httpx2.Client(base_url=base, timeout=60) as http:
        warm = http.post("/otlp/v1/traces", content=bodies[0], headers=headers)
        assert warm.status_code == 200, warm.text
        spans = sum(  # counted before the clock starts: the client's work is not timed
            len(ExportTraceServiceRequest.FromString(b).resource_spans[0].scope_spans[0].spans)
            for b in bodies[1:]
        )
        start = time.perf_counter()
        for body in bodies[1:]:
            response = http.post("/otlp/v1/traces", content=body, headers=headers)
            assert response.status_code == 200, response.text
        elapsed = time.perf_counter() - start
    return {
        "server": where,
        "spans": spans,
        "seconds": round(elapsed, 3),
        "spans_per_s": round(spans / elapsed),
    }


def export_cost(bodies: list[bytes]) -> dict[str, Any]:
    records = [r for body in bodies for r in parse_otlp(body, "application/x-protobuf")]
    spans = sum(len(r.spans) for r in records)
    start = time.perf_counter()
    to_otlp_json(records)
    elapsed = time.perf_counter() - start
    return {"spans": spans, "us_per_span": round(elapsed / spans * 1e6, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=20_480)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument(
        "--server",
        choices=("process", "thread"),
        default="process",
        help="scenarist serve in its own process (default), or the app in a thread of this one",
    )
    args = parser.parse_args()
    bodies = payloads(args.spans + args.batch, args.batch)
    results: dict[str, Any] = {"target_spans_per_s": TARGET_SPANS_PER_S, "batch": args.batch}
    backends = args.backends.split(",")
    with tempfile.TemporaryDirectory() as folder:
        if "sqlite" in backends:
            results["sqlite"] = ingest(f"sqlite:///{folder}/otlp.db", bodies, args.server)
            print("sqlite", results["sqlite"], flush=True)
        if "postgresql" in backends:
            if not (PGBIN / "initdb").exists():
                results["postgresql"] = f"skipped: no PostgreSQL binaries in {PGBIN}"
            else:
                cluster = PgCluster()
                cluster.start()
                try:
                    results["postgresql"] = ingest(cluster.createdb("otlp"), bodies, args.server)
                finally:
                    cluster.stop()
            print("postgresql", results["postgresql"], flush=True)
    results["export"] = export_cost(bodies[:8])
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
