"""Storing OTLP traces: the one path the file import and the server's receiver share.

A trace's spans often arrive in several export requests (a batch processor sends spans as
they end, children before their parents; several services send their own spans of one
trace), so a stored trace is merged with the new spans, never replaced
(:func:`~scenarist.otel.convert.merge_records`). Attributes are redacted before anything
is stored (:func:`~scenarist.redaction.redact_received`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scenarist.otel.convert import merge_records, records_from_spans
from scenarist.otel.wire import decode
from scenarist.redaction import redact_received

if TYPE_CHECKING:
    from scenarist.model.record import TraceRecord
    from scenarist.store.base import Store

__all__ = ["Ingested", "ingest_otlp", "store_records"]


@dataclass(frozen=True, slots=True)
class Ingested:
    """What one OTLP payload added: the trace ids touched and the spans read."""

    trace_ids: list[str]
    spans: int


async def store_records(store: Store, records: list[TraceRecord]) -> None:
    """Save ``records``, each merged with the stored trace of the same id, if any.

    On the SQL store the read, the merge and the write are one transaction
    (:meth:`~scenarist.store.sql.store.SqlStore.merge_traces`), in the store's project;
    elsewhere each trace is read, then written."""
    merge_many = getattr(store, "merge_traces", None)
    if merge_many is not None:
        await merge_many(records, merge_records)
        return
    stored = await asyncio.gather(*(store.get_trace(r.trace_id) for r in records))
    merged = [
        new if old is None else merge_records(old, new)
        for old, new in zip(stored, records, strict=True)
    ]
    await asyncio.gather(*(store.save_trace(r) for r in merged))


def _records(
    data: bytes, content_type: str | None, max_spans: int | None
) -> tuple[int, list[TraceRecord]]:
    spans = decode(data, content_type, max_spans=max_spans)
    return len(spans), [redact_received(r) for r in records_from_spans(spans)]


async def ingest_otlp(
    store: Store, data: bytes, content_type: str | None = None, *, max_spans: int | None = None
) -> Ingested:
    """Decode an OTLP export request (JSON or protobuf) and store its traces; more than
    ``max_spans`` spans raise :class:`~scenarist.otel.wire.OtlpTooLarge`.

    Decoding and converting run in a worker thread: a large request (tens of thousands
    of spans, seconds of work) must not hold the event loop, which serves every other
    request meanwhile."""
    count, records = await asyncio.to_thread(_records, data, content_type, max_spans)
    await store_records(store, records)
    return Ingested([r.trace_id for r in records], count)
