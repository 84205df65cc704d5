"""OpenTelemetry both ways: OTLP traces in as recorded runs, our runs out as OTLP.

* :func:`parse_otlp` reads an OTLP ``ExportTraceServiceRequest`` (JSON, or protobuf with
  the ``otel`` extra) into :class:`~scenarist.model.record.TraceRecord` objects, one
  per trace id, reading the GenAI semantic conventions (current and previous names),
  OpenInference and Logfire/pydantic-ai (:mod:`scenarist.otel.mapping`);
* :func:`to_otlp_json` writes records as OTLP/JSON with GenAI semconv names (and every
  field of ours under ``scenarist.*``, so export then import is lossless);
* :mod:`scenarist.otel.replay` serves an imported trace's LLM calls at the HTTP layer.

Our spans stay native while a run records; conversion happens only here, at the edges.
``import scenarist`` does not load this package, and ``opentelemetry-proto`` is imported
only when a protobuf payload is read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scenarist.otel.convert import merge_records, records_from_spans
from scenarist.otel.export import to_otlp_json
from scenarist.otel.wire import OtlpError, decode, detect_format

if TYPE_CHECKING:
    from scenarist.model.record import TraceRecord

__all__ = [
    "OtlpError",
    "detect_format",
    "is_otel_record",
    "merge_records",
    "parse_otlp",
    "to_otlp_json",
]


def parse_otlp(data: bytes, content_type: str | None = None) -> list[TraceRecord]:
    """The traces of an OTLP export request (format from ``content_type`` or the bytes)."""
    return records_from_spans(decode(data, content_type))


def is_otel_record(record: TraceRecord) -> bool:
    """Whether ``record`` was imported from OpenTelemetry (not recorded by scenarist)."""
    return record.metadata.get("source") == "otel"
