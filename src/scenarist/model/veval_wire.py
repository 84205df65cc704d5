"""Veval's wire format for traces, both ways.

Veval sends a trace as JSON with ``completed_at`` (our ``ended_at``), a string ``error``,
``total_cost_usd``, and a *flat* list of steps that point to their parent with
``parent_step_id`` and name their kind ``type``. :func:`to_veval` and
:func:`from_veval` convert a :class:`TraceRecord` to and from that shape.

Lossless from Veval and back: every field Veval sends is kept. From scenarist and back,
two things Veval has no room for travel in ``metadata`` under reserved keys, so they
survive a round trip through a Veval-compatible server: the error's exception type
(``_error_type``) and, on steps, the same (``_error_type``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from scenarist._jsonable import to_json_value
from scenarist.model.record import TraceRecord, with_total
from scenarist.model.trace import Span, SpanError

__all__ = ["from_veval", "to_veval"]

_ERROR_TYPE = "_error_type"


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _error_out(
    error: SpanError | None, metadata: dict[str, Any]
) -> tuple[str | None, dict[str, Any]]:
    if error is None:
        return None, metadata
    if error.type:
        metadata = {**metadata, _ERROR_TYPE: error.type}
    return error.message, metadata


def _error_in(
    message: str | None, metadata: dict[str, Any]
) -> tuple[SpanError | None, dict[str, Any]]:
    error_type = metadata.get(_ERROR_TYPE)
    rest = {k: v for k, v in metadata.items() if k != _ERROR_TYPE}
    if message is None:
        return None, rest
    return SpanError(message=message, type=error_type), rest


def to_veval(record: TraceRecord) -> dict[str, Any]:
    """``record`` as the JSON Veval's ``POST /v1/traces`` carries."""
    steps = []
    for span in record.spans:
        error, metadata = _error_out(span.error, dict(span.metadata))
        steps.append(
            {
                "step_id": span.span_id,
                "parent_step_id": span.parent_id,
                "name": span.name,
                "type": span.kind,
                "input": to_json_value(span.input),
                "output": to_json_value(span.output),
                "status": span.status,
                "error": error,
                "started_at": _iso(span.started_at),
                "completed_at": _iso(span.ended_at),
                "duration_ms": span.duration_ms,
                "cost_usd": span.cost_usd,
                "tokens_in": span.tokens_in,
                "tokens_out": span.tokens_out,
                "model": span.model,
                "metadata": to_json_value(metadata),
            }
        )
    error, metadata = _error_out(record.error, dict(record.metadata))
    return {
        "trace_id": record.trace_id,
        "agent_name": record.agent_name,
        "input": to_json_value(record.input),
        "output": to_json_value(record.output),
        "status": record.status,
        "error": error,
        "started_at": _iso(record.started_at),
        "completed_at": _iso(record.ended_at),
        "duration_ms": record.duration_ms,
        "total_cost_usd": with_total(record).total_cost_usd,
        "metadata": to_json_value(metadata),
        "steps": steps,
    }


def from_veval(data: dict[str, Any]) -> TraceRecord:
    """A :class:`TraceRecord` from Veval's trace JSON (steps nested by ``parent_step_id``)."""
    spans: dict[str, Span] = {}
    roots: list[Span] = []
    for index, step in enumerate(data.get("steps") or []):
        error, metadata = _error_in(step.get("error"), dict(step.get("metadata") or {}))
        span = Span(
            # Veval's steps default to an empty id and name: a hand-written step has neither
            span_id=str(step.get("step_id") or f"step-{index + 1}"),
            parent_id=step.get("parent_step_id"),
            name=step.get("name") or "",
            kind=step.get("type") or "custom",
            input=step.get("input"),
            output=step.get("output"),
            status=_status(step.get("status", ""), ""),
            error=error,
            started_at=step.get("started_at"),
            ended_at=step.get("completed_at"),
            duration_ms=step.get("duration_ms"),
            model=step.get("model"),
            tokens_in=step.get("tokens_in"),
            tokens_out=step.get("tokens_out"),
            cost_usd=step.get("cost_usd"),
            metadata=metadata,
        )
        spans[span.span_id] = span
        parent = spans.get(span.parent_id) if span.parent_id is not None else None
        (parent.children if parent is not None else roots).append(span)
    error, metadata = _error_in(data.get("error"), dict(data.get("metadata") or {}))
    return TraceRecord(
        trace_id=data["trace_id"],
        agent_name=data.get("agent_name", ""),
        input=data.get("input"),
        output=data.get("output"),
        status=_status(data.get("status", "running"), "running"),
        error=error,
        started_at=data.get("started_at"),
        ended_at=data.get("completed_at"),
        duration_ms=data.get("duration_ms"),
        total_cost_usd=data.get("total_cost_usd"),
        metadata=metadata,
        steps=roots,
    )


def _status(value: Any, default: str) -> str:
    """A status as Veval's ``from_dict`` reads it; ``None`` (no status) is the default."""
    return default if value is None else value
