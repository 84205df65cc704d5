"""Our recorded runs as OTLP/JSON, with the GenAI semantic-convention names.

Each record becomes one ``resourceSpans`` entry; each span an OTLP span named as ours,
with ``gen_ai.operation.name`` (``chat``, ``execute_tool``, ``invoke_agent``), the model,
provider, token counts, ``gen_ai.input.messages`` / ``gen_ai.output.messages`` and the
tool call's name, arguments and result. OTel wants hex ids: a trace id ``tr_<32 hex>``
keeps its hex, other ids are hashed to the right width. Every field of ours also travels
under ``scenarist.span`` (and the record under the resource's ``scenarist.record``), so
importing the export gives back the same record.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from datetime import datetime
from typing import Any

from scenarist.model.record import TraceRecord
from scenarist.model.trace import Span

__all__ = ["otel_trace_hex", "to_otlp_json"]


def _hex(value: str, digits: int) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:digits]


def otel_trace_hex(trace_id: str) -> str:
    """The OTel trace id (32 hex digits) of one of our trace ids."""
    tail = trace_id.removeprefix("tr_")
    if len(tail) == 32 and all(c in "0123456789abcdef" for c in tail):
        return tail
    return _hex(trace_id, 32)


def _ns(moment: datetime | None) -> str | None:
    return None if moment is None else str(int(moment.timestamp() * 1e9))


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [_value(v) for v in value]}}
    return {"stringValue": json.dumps(value, ensure_ascii=False, default=str)}


def _attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _value(v)} for k, v in values.items() if v is not None]


def _parts(message: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI chat message as a semconv message (``role`` and ``parts``)."""
    parts: list[dict[str, Any]] = []
    content = message.get("content")
    if message.get("role") == "tool":
        parts.append(
            {"type": "tool_call_response", "id": message.get("tool_call_id"), "response": content}
        )
    elif isinstance(content, str):
        parts.append({"type": "text", "content": content})
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        arguments = function.get("arguments")
        with contextlib.suppress(ValueError):
            arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
        parts.append(
            {
                "type": "tool_call",
                "id": call.get("id"),
                "name": function.get("name"),
                "arguments": arguments,
            }
        )
    return {"role": message.get("role"), "parts": parts}


def _response_message(output: Any) -> dict[str, Any] | None:
    """The assistant message of an llm span's output: ours, or an OpenAI response body."""
    if isinstance(output, dict) and isinstance(output.get("choices"), list) and output["choices"]:
        choice = output["choices"][0]
        message = dict(choice.get("message") or {})
        message["finish_reason"] = choice.get("finish_reason")
        return message
    if isinstance(output, dict) and "role" in output:
        return output
    return None


def _semconv(span: Span) -> dict[str, Any]:
    attributes: dict[str, Any] = {}
    metadata = span.metadata
    if span.kind == "llm":
        attributes["gen_ai.operation.name"] = "chat"
        attributes["gen_ai.provider.name"] = metadata.get("provider")
        request = span.input if isinstance(span.input, dict) else {}
        attributes["gen_ai.request.model"] = request.get("model") or span.model
        attributes["gen_ai.response.model"] = span.model
        attributes["gen_ai.usage.input_tokens"] = span.tokens_in
        attributes["gen_ai.usage.output_tokens"] = span.tokens_out
        messages = request.get("messages")
        if isinstance(messages, list):
            attributes["gen_ai.input.messages"] = json.dumps(
                [_parts(x) for x in messages if isinstance(x, dict)], ensure_ascii=False
            )
        response = _response_message(span.output)
        if response is not None:
            finish = response.get("finish_reason") or metadata.get("finish_reason")
            output = {**_parts(response), "finish_reason": finish}
            attributes["gen_ai.output.messages"] = json.dumps([output], ensure_ascii=False)
            if finish:
                attributes["gen_ai.response.finish_reasons"] = [finish]
    elif span.kind == "tool":
        attributes["gen_ai.operation.name"] = "execute_tool"
        attributes["gen_ai.tool.name"] = metadata.get("tool_name") or span.name
        attributes["gen_ai.tool.call.id"] = metadata.get("tool_call_id")
        attributes["gen_ai.tool.call.arguments"] = json.dumps(span.input, default=str)
        attributes["gen_ai.tool.call.result"] = json.dumps(span.output, default=str)
    elif span.kind == "agent":
        attributes["gen_ai.operation.name"] = "invoke_agent"
        attributes["gen_ai.agent.name"] = metadata.get("agent_name") or span.name
    if span.error is not None:
        attributes["error.type"] = span.error.type or "error"
    return attributes


def _span(span: Span, trace_hex: str, ids: dict[str, str]) -> dict[str, Any]:
    from scenarist._jsonable import to_json_value

    own = to_json_value(span.model_dump(exclude={"children"}))
    attributes = {**_semconv(span), "scenarist.span": json.dumps(own, ensure_ascii=False)}
    result: dict[str, Any] = {
        "traceId": trace_hex,
        "spanId": ids[span.span_id],
        "name": span.name,
        "kind": 1,  # INTERNAL
        "attributes": _attributes(attributes),
        "status": {"code": 2, "message": span.error.message}
        if span.error is not None
        else {"code": 1 if span.status == "success" else 0},
    }
    if span.parent_id is not None and span.parent_id in ids:
        result["parentSpanId"] = ids[span.parent_id]
    start, end = _ns(span.started_at), _ns(span.ended_at)
    if start is not None:
        result["startTimeUnixNano"] = start
    if end is not None:
        result["endTimeUnixNano"] = end
    return result


def _resource_spans(record: TraceRecord) -> dict[str, Any]:
    from scenarist._jsonable import to_json_value

    trace_hex = otel_trace_hex(record.trace_id)
    spans = record.spans
    ids = {s.span_id: _hex(f"{record.trace_id}/{s.span_id}", 16) for s in spans}
    own = to_json_value(record.model_dump(exclude={"steps"}))
    resource = {
        "service.name": record.agent_name or "scenarist",
        "scenarist.record": json.dumps(own, ensure_ascii=False),
    }
    return {
        "resource": {"attributes": _attributes(resource)},
        "scopeSpans": [
            {
                "scope": {"name": "scenarist"},
                "spans": [_span(s, trace_hex, ids) for s in spans],
            }
        ],
    }


def to_otlp_json(records: list[TraceRecord]) -> dict[str, Any]:
    """An OTLP/JSON ``ExportTraceServiceRequest`` holding ``records``."""
    return {"resourceSpans": [_resource_spans(r) for r in records]}
