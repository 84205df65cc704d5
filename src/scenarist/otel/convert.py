"""OTLP spans to :class:`~scenarist.model.record.TraceRecord`: one record per trace id.

Each span is converted on its own (kind, model, tokens, messages, tool call, error) by the
tables of :mod:`scenarist.otel.mapping`; the tree is then rebuilt from parent ids, so the
spans of one trace sent in several export requests merge (:func:`merge_records`).

Content that the instrumentation did not capture is never invented: the span's input or
output stays ``None`` and ``metadata["content"]`` says ``"missing"`` (``"captured"``
otherwise); replay reads that mark to tell the user how to turn capture on.

Depth is bounded so that what is stored can always be read back (every JSON reader of
scenarist stops at ``_json_limits.MAX_DEPTH``, 128 levels, and a span costs two: itself and
its ``children``): a trace whose spans nest deeper than :data:`MAX_SPAN_DEPTH` is refused
(:class:`OtlpError`, naming the span), in one request or once merged with what is stored;
an attribute holding JSON deeper than :data:`MAX_CONTENT_DEPTH` stays text.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from scenarist._json_limits import fast_loads, too_deep_text
from scenarist.errors import OtlpError
from scenarist.model._construct import construct
from scenarist.model.record import TraceRecord, with_total
from scenarist.model.trace import MAX_SPAN_DEPTH, Span, SpanError, first_too_deep
from scenarist.otel import mapping as m
from scenarist.otel.wire import WireSpan

__all__ = [
    "MAX_CONTENT_DEPTH",
    "MAX_SPAN_DEPTH",
    "merge_records",
    "records_from_spans",
    "span_from_wire",
]

MAX_CONTENT_DEPTH = 48
"""JSON levels of an attribute read as JSON (a span's input or output); deeper: its text."""

_SPAN_DEFAULTS: dict[str, Any] = {
    "input": None,
    "output": None,
    "model": None,
    "tokens_in": None,
    "tokens_out": None,
    "cost_usd": None,
}
_INDEXED = re.compile(r"^(?P<prefix>.+?)\.(?P<index>\d+)\.(?P<rest>.+)$")


def _first(attributes: dict[str, Any], names: tuple[str, ...]) -> Any:
    for name in names:
        value = attributes.get(name)
        if value is not None:
            return value
    return None


def _json_or_text(value: Any) -> Any:
    """A JSON-looking string parsed (each item of a list too), anything else as it is."""
    if isinstance(value, list):
        return [_json_or_text(v) for v in value]
    if isinstance(value, str) and value[:1] in ("{", "[", '"'):
        if too_deep_text(value, MAX_CONTENT_DEPTH):
            return value
        try:
            return fast_loads(value)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser: text
            return value
    return value


def _time(ns: int | None) -> datetime | None:
    return None if ns is None else datetime.fromtimestamp(ns / 1e9, UTC)


def _kind(attributes: dict[str, Any]) -> str:
    explicit = attributes.get("scenarist.kind")
    if isinstance(explicit, str):
        return explicit
    for attribute, kinds in m.KIND_BY_ATTRIBUTE:
        value = attributes.get(attribute)
        if isinstance(value, str):
            return kinds.get(value, kinds.get(value.upper(), "custom"))
    for attribute, kind in m.KIND_BY_PRESENCE:
        if attribute in attributes:
            return kind
    return "custom"


# -- messages ------------------------------------------------------------------------------


def _text(content: Any) -> Any:
    """Message content as text when it is text parts; other content kept as it is."""
    if isinstance(content, list) and all(isinstance(p, dict) for p in content):
        texts = [p.get("content", p.get("text")) for p in content if p.get("type") == "text"]
        if len(texts) == len(content) and all(isinstance(t, str) for t in texts):
            return "".join(texts)
    return content


def _tool_call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _semconv_message(message: dict[str, Any]) -> dict[str, Any]:
    """A current-semconv message (``role`` and ``parts``) in OpenAI chat shape."""
    role = message.get("role")
    parts = message.get("parts")
    if not isinstance(parts, list):
        return {"role": role, "content": _text(message.get("content"))}
    texts = [p.get("content") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
    calls = [
        _tool_call(p.get("id"), p.get("name"), p.get("arguments"))
        for p in parts
        if isinstance(p, dict) and p.get("type") == "tool_call"
    ]
    responses = [p for p in parts if isinstance(p, dict) and p.get("type") == "tool_call_response"]
    if responses:
        response = responses[0].get("response", responses[0].get("result"))
        return {
            "role": "tool",
            "tool_call_id": responses[0].get("id"),
            "content": response if isinstance(response, str) else json.dumps(response),
        }
    result: dict[str, Any] = {"role": role, "content": "".join(map(str, texts)) if texts else None}
    if calls:
        result["tool_calls"] = calls
    return result


def _indexed(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``prefix.N.rest`` attributes as a list of nested dicts (OpenLLMetry, OpenInference)."""
    rows: dict[int, dict[str, Any]] = {}
    start = prefix + "."
    for key, value in attributes.items():
        if not key.startswith(start):
            continue
        head, _, rest = key[len(start) :].partition(".")
        if not head.isdigit() or not rest:
            continue
        row = rows.setdefault(int(head), {})
        match = _INDEXED.match(rest)
        if match:  # one more level: contents.N.x, tool_calls.N.x
            row.setdefault(match["prefix"], {}).setdefault(int(match["index"]), {})[
                match["rest"]
            ] = value
        else:
            row[rest] = value
    return [rows[i] for i in sorted(rows)]


def _openinference_messages(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    messages = []
    for row in _indexed(attributes, prefix):
        content = row.get("message.content")
        parts = row.get("message.contents")
        if content is None and isinstance(parts, dict):
            content = "".join(str(parts[i].get("message_content.text", "")) for i in sorted(parts))
        message: dict[str, Any] = {"role": row.get("message.role"), "content": content}
        calls = row.get("message.tool_calls")
        if isinstance(calls, dict):
            message["tool_calls"] = [
                _tool_call(
                    calls[i].get("tool_call.id"),
                    calls[i].get("tool_call.function.name"),
                    calls[i].get("tool_call.function.arguments", "{}"),
                )
                for i in sorted(calls)
            ]
        if row.get("message.tool_call_id") is not None:
            message["tool_call_id"] = row["message.tool_call_id"]
        messages.append(message)
    return messages


def _openllmetry_messages(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    messages = []
    for row in _indexed(attributes, prefix):
        message: dict[str, Any] = {"role": row.get("role"), "content": row.get("content")}
        calls = row.get("tool_calls")
        if isinstance(calls, dict):
            message["tool_calls"] = [
                _tool_call(calls[i].get("id"), calls[i].get("name"), calls[i].get("arguments"))
                for i in sorted(calls)
            ]
        if row.get("finish_reason") is not None:
            message["finish_reason"] = row["finish_reason"]
        if row.get("tool_call_id") is not None:
            message["tool_call_id"] = row["tool_call_id"]
        messages.append(message)
    return messages


def _event_message(role: str, attributes: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": attributes.get("role", role)}
    message["content"] = _text(_json_or_text(attributes.get("content")))
    calls = _json_or_text(attributes.get("tool_calls"))
    if isinstance(calls, list):
        message["tool_calls"] = [
            _tool_call(
                c.get("id"),
                (c.get("function") or {}).get("name"),
                (c.get("function") or {}).get("arguments"),
            )
            for c in calls
            if isinstance(c, dict)
        ]
    if attributes.get("id") is not None and role == "tool":
        message["tool_call_id"] = attributes["id"]
    return message


def _event_messages(
    events: list[tuple[str, dict[str, Any]]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Messages from the previous conventions' span events (and Logfire's ``events``)."""
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    for name, attributes in events:
        if name in m.MESSAGE_EVENTS:
            inputs.append(_event_message(m.MESSAGE_EVENTS[name], attributes))
        elif name == "gen_ai.choice":
            message = _json_or_text(attributes.get("message"))
            choice = _event_message("assistant", message if isinstance(message, dict) else {})
            if attributes.get("finish_reason") is not None:
                choice["finish_reason"] = attributes["finish_reason"]
            outputs.append(choice)
        elif name == "gen_ai.content.prompt":
            prompt = _json_or_text(attributes.get("gen_ai.prompt"))
            if isinstance(prompt, list):
                inputs.extend(p for p in prompt if isinstance(p, dict))
        elif name == "gen_ai.content.completion":
            completion = _json_or_text(attributes.get("gen_ai.completion"))
            if isinstance(completion, list):
                outputs.extend(c for c in completion if isinstance(c, dict))
    return inputs, outputs


def _llm_messages(
    wire: WireSpan,
) -> tuple[list[dict[str, Any]] | None, list[dict[str, Any]] | None, str]:
    """Request and response messages, and the convention they were read from."""
    a = wire.attributes
    if "gen_ai.input.messages" in a or "gen_ai.output.messages" in a:
        inputs = _json_or_text(a.get("gen_ai.input.messages"))
        outputs = _json_or_text(a.get("gen_ai.output.messages"))
        instructions = _json_or_text(a.get("gen_ai.system_instructions"))
        request = (
            [_semconv_message(x) for x in inputs if isinstance(x, dict)]
            if isinstance(inputs, list)
            else None
        )
        if request is not None and isinstance(instructions, list):
            text = _text(instructions)
            request.insert(0, {"role": "system", "content": text})
        response = None
        if isinstance(outputs, list):
            response = []
            for x in outputs:
                if isinstance(x, dict):
                    message = _semconv_message(x)
                    if x.get("finish_reason") is not None:
                        message["finish_reason"] = x["finish_reason"]
                    response.append(message)
        return request, response, "gen_ai"
    if any(k.startswith(("llm.input_messages.", "llm.output_messages.")) for k in a):
        return (
            _openinference_messages(a, "llm.input_messages") or None,
            _openinference_messages(a, "llm.output_messages") or None,
            "openinference",
        )
    if any(k.startswith(("gen_ai.prompt.", "gen_ai.completion.")) for k in a):
        return (
            _openllmetry_messages(a, "gen_ai.prompt") or None,
            _openllmetry_messages(a, "gen_ai.completion") or None,
            "gen_ai (previous, flattened)",
        )
    events = [(name, attrs) for name, _, attrs in wire.events]
    logfire = _json_or_text(a.get("events"))
    if isinstance(logfire, list):  # pydantic-ai 0.x: the events as one JSON attribute
        events += [(str(e.get("event.name", "")), e) for e in logfire if isinstance(e, dict)]
    inputs, outputs = _event_messages(events)
    if inputs or outputs:
        return inputs or None, outputs or None, "gen_ai (previous, events)"
    return None, None, "none"


# -- spans ---------------------------------------------------------------------------------


def _error(wire: WireSpan) -> SpanError | None:
    if wire.status_code != 2:
        return None
    message, kind = wire.status_message, _first(wire.attributes, m.ERROR_TYPE)
    for name, _, attrs in wire.events:
        if name == "exception":
            message = message or str(attrs.get("exception.message") or "")
            kind = kind or attrs.get("exception.type")
    return SpanError(message=message or "error (no message recorded)", type=kind and str(kind))


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _llm_fields(wire: WireSpan, fields: dict[str, Any], metadata: dict[str, Any]) -> None:
    from scenarist.providers.pricing import cost_usd

    a = wire.attributes
    model = _first(a, m.MODEL)
    fields["model"] = None if model is None else str(model)
    fields["tokens_in"] = _int_or_none(_first(a, m.TOKENS_IN))
    fields["tokens_out"] = _int_or_none(_first(a, m.TOKENS_OUT))
    provider = _first(a, m.PROVIDER)
    metadata["provider"] = provider
    request_model = _first(a, m.REQUEST_MODEL)
    request, response, convention = _llm_messages(wire)
    metadata["convention"] = convention
    finish = _first(a, m.FINISH_REASONS)
    if isinstance(finish, list):
        finish = finish[0] if finish else None
    if request is not None:
        body: dict[str, Any] = {"model": request_model or fields["model"], "messages": request}
        parameters = _json_or_text(a.get("llm.invocation_parameters"))
        if isinstance(parameters, dict):
            body.update({k: v for k, v in parameters.items() if k not in ("messages", "model")})
        for attribute, name in m.REQUEST_PARAMETERS.items():
            if a.get(attribute) is not None:
                body[name] = a[attribute]
        fields["input"] = body
    if response:
        message = dict(response[0])
        finish = message.pop("finish_reason", finish)
        fields["output"] = message
    metadata["finish_reason"] = finish
    missing = [name for name, value in (("input", request), ("output", response)) if not value]
    metadata["content"] = "missing" if missing else "captured"
    if missing:
        metadata["missing"] = missing
    if fields.get("cost_usd") is None:
        fields["cost_usd"] = cost_usd(
            str(provider) if provider else None,
            str(fields["model"]) if fields["model"] else None,
            fields["tokens_in"],
            fields["tokens_out"],
        )


def _tool_fields(wire: WireSpan, fields: dict[str, Any], metadata: dict[str, Any]) -> None:
    a = wire.attributes
    name = _first(a, m.TOOL_NAME)
    if name is not None:
        metadata["tool_name"] = name
    if _first(a, m.TOOL_CALL_ID) is not None:
        metadata["tool_call_id"] = _first(a, m.TOOL_CALL_ID)
    arguments, result = _first(a, m.TOOL_ARGUMENTS), _first(a, m.TOOL_RESULT)
    fields["input"] = _json_or_text(arguments)
    fields["output"] = _json_or_text(result)
    missing = [n for n, v in (("input", arguments), ("output", result)) if v is None]
    metadata["content"] = "missing" if missing else "captured"
    if missing:
        metadata["missing"] = missing


def span_from_wire(wire: WireSpan) -> Span:
    """One OTLP span as our span (no children yet; ``parent_id`` kept)."""
    a = wire.attributes
    kind = _kind(a)
    metadata: dict[str, Any] = {"otel_span_id": wire.span_id}
    if wire.scope:
        metadata["otel_scope"] = wire.scope
    fields: dict[str, Any] = {
        "span_id": str(a.get("scenarist.span_id") or wire.span_id),
        "parent_id": wire.parent_id,
        "name": wire.name,
        "kind": kind,
        "started_at": _time(wire.start_ns),
        "ended_at": _time(wire.end_ns),
        "duration_ms": (wire.end_ns - wire.start_ns) / 1e6
        if wire.start_ns is not None and wire.end_ns is not None
        else None,
        "cost_usd": a.get("scenarist.cost_usd"),
    }
    if kind == "llm":
        _llm_fields(wire, fields, metadata)
    elif kind == "tool":
        _tool_fields(wire, fields, metadata)
    else:
        fields["input"] = _json_or_text(_first(a, m.SPAN_INPUT))
        fields["output"] = _json_or_text(_first(a, m.SPAN_OUTPUT))
        agent = _first(a, m.AGENT_NAME)
        if agent is not None:
            metadata["agent_name"] = agent
    kept = {key: value for key, value in a.items() if not key.startswith(m.CONTENT_PREFIXES)}
    if kept:
        metadata["otel_attributes"] = kept
    ours = _json_or_text(a.get("scenarist.span"))  # our own export: every field, lossless
    if isinstance(ours, dict):
        fields.update({k: v for k, v in ours.items() if k != "children"})
        fields["metadata"] = ours.get("metadata", {})
        fields["parent_id"] = ours.get("parent_id")
        return Span.model_validate(fields)
    error = _error(wire)
    fields["status"] = "error" if error is not None else "success"
    fields["error"] = error
    fields["metadata"] = metadata
    cost = fields.get("cost_usd")
    if cost is not None and (isinstance(cost, bool) or not isinstance(cost, int | float)):
        fields["cost_usd"] = None
    # every value is already of its field's type: built without validation (the hot path)
    return construct(Span, {**_SPAN_DEFAULTS, **fields, "children": []})


def _tree(spans: list[Span]) -> list[Span]:
    """Roots in start order, children nested under their parents (orphans become roots)."""
    by_id = {s.span_id: s for s in spans}
    roots: list[Span] = []
    for span in spans:
        span.children = []
    ordered = sorted(
        spans,
        key=lambda s: (s.started_at is None, s.started_at or datetime.min.replace(tzinfo=UTC)),
    )
    for span in ordered:
        parent = by_id.get(span.parent_id) if span.parent_id else None
        if parent is not None and not _in_cycle(span, by_id):
            parent.children.append(span)
        else:
            roots.append(span)
    return roots


def _in_cycle(span: Span, by_id: dict[str, Span]) -> bool:
    """Whether following parent ids up from ``span`` comes back to it (hostile ids)."""
    seen = {span.span_id}
    current = span.parent_id
    while current is not None and current in by_id:
        if current in seen:
            return True
        seen.add(current)
        current = by_id[current].parent_id
    return False


def _check_depth(trace_hex: str, spans: list[Span]) -> None:
    """Raise :class:`OtlpError` if ``spans`` nest deeper than :data:`MAX_SPAN_DEPTH`
    (parents followed as :func:`_tree` does; a cycle counts as a root)."""
    found = first_too_deep([(s.span_id, s.parent_id) for s in spans])
    if found is None:
        return
    deepest = spans[found[0]]
    shown = deepest.metadata.get("otel_span_id", deepest.span_id)
    raise OtlpError(
        f"trace {trace_hex}: span {shown!r} ({deepest.name!r}) is nested {found[1]} spans "
        f"deep, more than the limit of {MAX_SPAN_DEPTH} levels (counting the spans already "
        "stored for this trace); nothing of this request was stored"
    )


def _last_user_text(span: Span) -> Any:
    messages = span.input.get("messages") if isinstance(span.input, dict) else None
    for message in reversed(messages or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return message.get("content")
    return None


def _record(trace_hex: str, spans: list[Span], resource: dict[str, Any]) -> TraceRecord:
    roots = _tree(spans)
    flat = [s for root in roots for s in root.walk()]
    own = _json_or_text(resource.get("scenarist.record"))
    if isinstance(own, dict) and own.get("trace_id"):  # exported by scenarist: lossless
        return TraceRecord.model_validate({**own, "steps": roots})
    llm = [s for s in flat if s.kind == "llm"]
    root = roots[0] if len(roots) == 1 else None
    agents = [s for s in flat if s.kind == "agent"]
    agent_name = (agents[0].metadata.get("agent_name") or agents[0].name) if agents else None
    run_input = root.input if root is not None and root.kind != "llm" else None
    run_output = root.output if root is not None and root.kind != "llm" else None
    if run_input is None and llm:
        run_input = _last_user_text(llm[0])
    if run_output is None and llm and isinstance(llm[-1].output, dict):
        run_output = llm[-1].output.get("content")
    errors = [s.error for s in roots if s.error is not None]
    starts = [s.started_at for s in flat if s.started_at is not None]
    ends = [s.ended_at for s in flat if s.ended_at is not None]
    started, ended = (min(starts) if starts else None), (max(ends) if ends else None)
    metadata: dict[str, Any] = {"source": "otel", "otel_trace_id": trace_hex}
    service = resource.get("service.name")
    if service is not None:
        metadata["service_name"] = service
    if any(s.metadata.get("content") == "missing" for s in llm):
        metadata["content"] = "missing"
    record = TraceRecord(
        trace_id=f"tr_{trace_hex}",
        agent_name=str(agent_name or service or "otel"),
        input=run_input,
        output=run_output,
        status="error" if errors else "success",
        error=errors[0] if errors else None,
        started_at=started,
        ended_at=ended,
        duration_ms=(ended - started).total_seconds() * 1000 if started and ended else None,
        metadata=metadata,
        steps=roots,
    )
    return with_total(record)  # the total a run's own record has: the steps' cost


def records_from_spans(wires: list[WireSpan]) -> list[TraceRecord]:
    """One record per trace id, in first-seen order."""
    groups: dict[str, list[WireSpan]] = {}
    for wire in wires:
        groups.setdefault(wire.trace_id, []).append(wire)
    converted = {
        trace_hex: [span_from_wire(w) for w in group] for trace_hex, group in groups.items()
    }
    for trace_hex, spans in converted.items():  # all checked before any is stored
        _check_depth(trace_hex, spans)
    return [
        _record(trace_hex, converted[trace_hex], groups[trace_hex][0].resource)
        for trace_hex in groups
    ]


def merge_records(stored: TraceRecord, new: TraceRecord) -> TraceRecord:
    """The spans of one trace received in two exports, as one record: the union of their
    spans by span id, a span sent again replacing its first copy (never a batch replacing
    the trace).

    A record read from OTel spans has every trace-level field computed again from the
    union (start, end, duration, status and error, cost, span count, agent name, input and
    output); one that carries its own fields (scenarist's export, the resource's
    ``scenarist.record``) keeps the newer batch's fields over the union of the spans."""
    spans = {s.span_id: s for s in stored.spans}
    spans.update({s.span_id: s for s in new.spans})
    if new.metadata.get("source") != "otel":
        return new.model_copy(update={"steps": _tree(list(spans.values()))})
    resource: dict[str, Any] = {}
    if "service_name" in new.metadata:
        resource["service.name"] = new.metadata["service_name"]
    trace_hex = str(new.metadata.get("otel_trace_id") or new.trace_id.removeprefix("tr_"))
    _check_depth(trace_hex, list(spans.values()))
    merged = _record(trace_hex, list(spans.values()), resource)
    if merged.agent_name == "otel" and stored.agent_name:
        merged.agent_name = stored.agent_name
    return merged
