"""Live export: every recorded run also sent to an OTLP/HTTP endpoint, as it finishes.

Set ``SCENARIST_OTLP_ENDPOINT`` (a collector, Jaeger, Phoenix, another ``scenarist
serve``...): ``http://host:4318`` gets ``/v1/traces`` appended, a URL already ending in
``/v1/traces`` is used as it is. ``SCENARIST_OTLP_HEADERS`` adds headers
(``Authorization=Bearer%20sk_...,x-team=a``, the OTel ``k=v`` list, values URL-encoded).

The OTel SDK is not on the hot path: our spans stay native while the run records, and the
finished record is queued here; a daemon thread converts it (:func:`to_otlp_json`, GenAI
semconv names) and posts OTLP/JSON batches with the standard library. A failed export is
logged, never raised into the run; what is queued at interpreter exit is flushed (for up
to five seconds).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import queue
import threading
import urllib.request
from typing import TYPE_CHECKING
from urllib.parse import unquote

if TYPE_CHECKING:
    from scenarist.model.record import TraceRecord

__all__ = ["ENDPOINT_ENV", "LiveExporter", "export_record", "flush"]

ENDPOINT_ENV = "SCENARIST_OTLP_ENDPOINT"
HEADERS_ENV = "SCENARIST_OTLP_HEADERS"
_log = logging.getLogger("scenarist.otel")


def traces_url(endpoint: str) -> str:
    endpoint = endpoint.strip()
    return (
        endpoint
        if endpoint.rstrip("/").endswith("/v1/traces")
        else endpoint.rstrip("/") + "/v1/traces"
    )


def _headers(text: str) -> dict[str, str]:
    headers = {}
    for pair in text.split(","):
        key, sep, value = pair.partition("=")
        if sep and key.strip():
            headers[key.strip()] = unquote(value.strip())
    return headers


class LiveExporter:
    """A queue of finished records and the thread that posts them (max 64 per request)."""

    def __init__(self, endpoint: str, headers: dict[str, str] | None = None) -> None:
        self.url = traces_url(endpoint)
        self.headers = {"Content-Type": "application/json", **(headers or {})}
        self.sent = 0
        self.failed = 0
        self._queue: queue.Queue[TraceRecord | None] = queue.Queue()
        self._idle = threading.Condition()
        self._pending = 0
        self._thread = threading.Thread(target=self._run, name="scenarist-otlp", daemon=True)
        self._thread.start()

    def submit(self, record: TraceRecord) -> None:
        with self._idle:
            self._pending += 1
        self._queue.put(record)

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until everything submitted was sent (or failed); ``False`` on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def _post(self, records: list[TraceRecord]) -> None:
        from scenarist.otel.export import to_otlp_json

        body = json.dumps(to_otlp_json(records), ensure_ascii=False, default=str).encode()
        request = urllib.request.Request(self.url, data=body, headers=self.headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                response.read()
            self.sent += len(records)
        except Exception as exc:  # an export never breaks a run
            self.failed += len(records)
            _log.warning("OTLP export of %d trace(s) to %s failed: %s", len(records), self.url, exc)

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            while len(batch) < 64:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    break
                batch.append(more)
            self._post(batch)
            with self._idle:
                self._pending -= len(batch)
                self._idle.notify_all()


_exporters: dict[str, LiveExporter] = {}
_lock = threading.Lock()


def _exporter() -> LiveExporter | None:
    endpoint = os.environ.get(ENDPOINT_ENV, "").strip()
    if not endpoint:
        return None
    headers = os.environ.get(HEADERS_ENV, "")
    key = f"{endpoint}\n{headers}"
    with _lock:
        exporter = _exporters.get(key)
        if exporter is None:
            exporter = _exporters[key] = LiveExporter(endpoint, _headers(headers))
    return exporter


def export_record(record: TraceRecord) -> None:
    """Queue ``record`` for the configured endpoint (nothing when none is configured)."""
    exporter = _exporter()
    if exporter is not None:
        exporter.submit(record)


def flush(timeout: float = 5.0) -> bool:
    """Wait for every configured exporter's queue to drain."""
    with _lock:
        exporters = list(_exporters.values())
    return all(e.flush(timeout) for e in exporters)


atexit.register(flush)
