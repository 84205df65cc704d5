"""OTLP/JSON documents as instrumentations write them, built from short span descriptions."""

from __future__ import annotations

import json
from typing import Any

TRACE = "5b8efff798038103d269b633813fc60c"
START = 1_764_590_000_000_000_000


def value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, list) and not any(isinstance(x, dict) for x in v):
        return {"arrayValue": {"values": [value(x) for x in v]}}
    return {"stringValue": v if isinstance(v, str) else json.dumps(v)}


def attrs(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": value(v)} for k, v in values.items()]


def span(
    number: int,
    name: str,
    attributes: dict[str, Any],
    *,
    parent: int | None = None,
    events: list[tuple[str, dict[str, Any]]] = (),  # type: ignore[assignment]
    error: str | None = None,
    trace: str = TRACE,
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "traceId": trace,
        "spanId": f"{number:016x}",
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(START + number * 1_000_000),
        "endTimeUnixNano": str(START + number * 1_000_000 + 500_000),
        "attributes": attrs(attributes),
        "events": [
            {"name": n, "timeUnixNano": str(START), "attributes": attrs(a)} for n, a in events
        ],
        "status": {"code": 2, "message": error} if error else {},
    }
    if parent is not None:
        result["parentSpanId"] = f"{parent:016x}"
    return result


def document(*spans: dict[str, Any], service: str = "support-agent") -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": attrs({"service.name": service})},
                "scopeSpans": [{"scope": {"name": "test"}, "spans": list(spans)}],
            }
        ]
    }


def encoded(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc).encode()
