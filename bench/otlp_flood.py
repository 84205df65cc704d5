"""One huge OTLP request against ``scenarist serve`` while ``/api/health`` is polled (not a
test): issue 29's 300,000 spans in one request.

``scenarist serve`` runs in its own process on a SQLite file (the receiver's cap on spans
per request from ``--cap``, default the server's). One client thread polls
``GET /api/health`` back to back over a keep-alive connection the whole time; the main
thread sends, one after the other:

1. nothing (``idle``: the baseline);
2. ``--spans`` spans in one protobuf ``ExportTraceServiceRequest`` (300,000, above the cap:
   answered 413 once the message is parsed);
3. exactly ``--cap`` spans (accepted: decoded, converted and stored).

Spans come in traces of ``--per-trace`` (a root and its children), bare (ids, a name, a
start: about 33 bytes each, as the issue's 9.9 MB) or with ``--genai`` the GenAI
attributes and messages ``otlp_ingest.py`` writes (about 370 bytes each). Printed per
phase: the request's status and seconds, the health polls' count, p50, p99 and max
latency, and the server's resident memory (VmRSS, and the peak VmHWM) after it. Target
(issue 29): health p99 <= 100 ms on SQLite.

    .venv/bin/python bench/otlp_flood.py [--spans 300000] [--cap 20000] [--per-trace 100]
        [--genai]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

sys.path.insert(0, str(Path(__file__).resolve().parent))

from otlp_ingest import _trace_spans

TARGET_P99_MS = 100.0
PROTOBUF = {"content-type": "application/x-protobuf"}


def _bare_spans(n: int) -> list[Span]:
    """A root and ``n - 1`` children with ids, a name and times only (about 33 bytes a
    span, as issue 29's 300,000 spans in 9.9 MB)."""
    trace_id = uuid.uuid4().bytes
    root = uuid.uuid4().bytes[:8]
    t0 = time.time_ns()
    return [
        Span(
            trace_id=trace_id,
            span_id=root if i == 0 else uuid.uuid4().bytes[:8],
            parent_span_id=b"" if i == 0 else root,
            name="s",
            start_time_unix_nano=t0 + i,
        )
        for i in range(n)
    ]


def body(spans: int, per_trace: int, *, genai: bool = False) -> bytes:
    make = _trace_spans if genai else _bare_spans
    collected: list[Span] = []
    while len(collected) < spans:
        collected.extend(make(min(per_trace, spans - len(collected))))
    request = ExportTraceServiceRequest(
        resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=collected)])]
    )
    return request.SerializeToString()


def _memory_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of ``pid`` in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) / 1024
    return fields["VmRSS"], fields["VmHWM"]


@contextmanager
def serve(cap: int | None) -> Iterator[tuple[str, int]]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "SCENARIST_HOME": home}
        if cap is not None:
            env["SCENARIST_OTLP_MAX_SPANS"] = str(cap)
        command = [
            sys.executable, "-m", "scenarist.cli", "serve", "--port", str(port),
            "--database-url", f"sqlite:///{home}/flood.db",
        ]  # fmt: skip
        log = open(Path(home) / "serve.log", "w+")  # noqa: SIM115 - closed below
        server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 600  # a limit for a hang, not a measure
            while True:
                if server.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(f"scenarist serve did not start:\n{log.read()}")
                try:
                    if httpx2.get(base + "/api/health", timeout=60).status_code == 200:
                        break
                except httpx2.TransportError:
                    time.sleep(0.1)
            yield base, server.pid
        finally:
            server.terminate()
            server.wait(timeout=60)
            log.close()


class Poller:
    """``GET /api/health`` back to back; latencies (ms) go to the current phase."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.phase = "idle"
        self.latencies: dict[str, list[float]] = {}
        self.errors: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with httpx2.Client(base_url=self.base, timeout=120) as http:
            while not self._stop.is_set():
                phase = self.phase
                start = time.perf_counter()
                try:
                    ok = http.get("/api/health").status_code == 200
                except httpx2.HTTPError:
                    ok = False
                elapsed = (time.perf_counter() - start) * 1000
                if ok:
                    self.latencies.setdefault(phase, []).append(elapsed)
                else:
                    self.errors[phase] = self.errors.get(phase, 0) + 1
                time.sleep(0.005)  # ~200 polls/s at most: a monitor, not a load

    def __enter__(self) -> Poller:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=120)


def _summary(latencies: list[float]) -> str:
    if not latencies:
        return "no answer"
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"{len(ordered)} polls, p50 {statistics.median(ordered):.1f} ms, p99 {p99:.1f} ms, "
        f"max {ordered[-1]:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=300_000)
    parser.add_argument("--cap", type=int, default=20_000)
    parser.add_argument("--per-trace", type=int, default=100)
    parser.add_argument("--idle-s", type=float, default=3.0)
    parser.add_argument(
        "--genai", action="store_true", help="spans with GenAI attributes and messages"
    )
    args = parser.parse_args()

    over = body(args.spans, args.per_trace, genai=args.genai)
    at_cap = body(args.cap, args.per_trace, genai=args.genai)
    print(
        f"bodies: {args.spans:,} spans {len(over) / 1e6:.1f} MB; "
        f"{args.cap:,} spans {len(at_cap) / 1e6:.1f} MB (protobuf"
        f"{', GenAI attributes' if args.genai else ', bare spans'})"
    )
    worst = 0.0
    with serve(args.cap) as (base, pid), Poller(base) as poller:
        time.sleep(args.idle_s)
        rss, hwm = _memory_mb(pid)
        print(f"idle: {_summary(poller.latencies.get('idle', []))}; RSS {rss:.0f} MiB")
        with httpx2.Client(base_url=base, timeout=600) as http:
            for phase, data in (("over the cap", over), ("at the cap", at_cap)):
                poller.phase = phase
                start = time.perf_counter()
                response = http.post("/otlp/v1/traces", content=data, headers=PROTOBUF)
                seconds = time.perf_counter() - start
                time.sleep(0.5)  # (polls after the answer count too: the store may lag)
                poller.phase = "after"
                latencies = poller.latencies.get(phase, [])
                rss, hwm = _memory_mb(pid)
                message = response.json()["error"]["message"][:80] if response.is_error else ""
                print(
                    f"{phase}: {response.status_code} in {seconds:.2f} s {message}\n"
                    f"  health: {_summary(latencies)}; errors {poller.errors.get(phase, 0)}\n"
                    f"  server RSS {rss:.0f} MiB, peak {hwm:.0f} MiB"
                )
                if latencies:
                    ordered = sorted(latencies)
                    worst = max(worst, ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))])
    verdict = "met" if worst <= TARGET_P99_MS else "MISSED"
    print(f"health p99, worst phase: {worst:.1f} ms (target <= {TARGET_P99_MS:.0f} ms): {verdict}")


if __name__ == "__main__":
    main()
