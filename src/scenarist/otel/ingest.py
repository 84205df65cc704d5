"""Storing OTLP traces: the one path the file import and the server's receiver share.

A trace's spans often arrive in several export requests (a batch processor sends spans as
they end, children before their parents), so a trace already stored from OpenTelemetry is
merged with the new spans rather than replaced.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scenarist.otel.convert import merge_records, records_from_spans
from scenarist.otel.wire import decode

if TYPE_CHECKING:
    from scenarist.store.base import Store
    from scenarist.tracing.record import TraceRecord

__all__ = ["Ingested", "ingest_otlp", "store_records"]


@dataclass(frozen=True, slots=True)
class Ingested:
    """What one OTLP payload added: the trace ids touched and the spans read."""

    trace_ids: list[str]
    spans: int


async def store_records(store: Store, records: list[TraceRecord]) -> None:
    """Save ``records``, each merged with the stored OTel trace of the same id, if any."""
    for record in records:
        stored = await store.get_trace(record.trace_id)
        if stored is not None and stored.metadata.get("source") == "otel":
            record = merge_records(stored, record)
        await store.save_trace(record)


async def ingest_otlp(store: Store, data: bytes, content_type: str | None = None) -> Ingested:
    """Decode an OTLP export request (JSON or protobuf) and store its traces."""
    spans = decode(data, content_type)
    records = records_from_spans(spans)
    await store_records(store, records)
    return Ingested([r.trace_id for r in records], len(spans))
