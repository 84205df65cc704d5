"""OTLP trace payloads (JSON or protobuf ``ExportTraceServiceRequest``) as plain spans.

Both encodings become the same :class:`WireSpan` list, so one converter serves the file
import, the server's receiver and the tests. JSON follows the OTLP/JSON rules (hex ids,
``lowerCamelCase`` keys, 64-bit integers as strings); protobuf needs the ``otel`` extra
(``opentelemetry-proto``, imported only here, on first use). A malformed payload raises
:class:`OtlpError` naming the field, e.g. ``resourceSpans[0].scopeSpans[0].spans[2].traceId``.

Limits, each an :class:`OtlpError` naming the field: timestamps are OTLP's ``fixed64``
nanoseconds (0 to 2**64 - 1, which every reader turns into a date); attribute values nest
at most :data:`MAX_VALUE_DEPTH` arrays and key-value lists; ``max_spans`` (the server's cap
per request) raises :class:`OtlpTooLarge` before any span is converted.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from typing import Any

from scenarist._json_limits import fast_loads
from scenarist.errors import OtlpError

__all__ = [
    "MAX_VALUE_DEPTH",
    "OtlpError",
    "OtlpTooLarge",
    "WireSpan",
    "count_spans",
    "decode",
    "decode_json",
    "decode_protobuf",
    "detect_format",
]

_HEX = re.compile(r"[0-9a-fA-F]*")
_MAX_NS = 2**64 - 1  # OTLP's fixed64: year 2554
MAX_VALUE_DEPTH = 32
"""Arrays and key-value lists nested in one attribute value (deeper: :class:`OtlpError`)."""


class OtlpTooLarge(OtlpError):
    """A request with more spans than the receiver takes at once (answered 413)."""

    def __init__(self, spans: int, limit: int) -> None:
        self.spans = spans
        self.limit = limit
        super().__init__(
            f"the request holds {spans} spans, more than this server's limit of {limit} spans "
            "per request (SCENARIST_OTLP_MAX_SPANS): send smaller batches (the SDK's "
            "BatchSpanProcessor max_export_batch_size, the Collector's batch "
            "send_batch_max_size)"
        )


@dataclass(slots=True)
class WireSpan:
    """One OTLP span, its attributes as Python values (resource attributes beside)."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int | None
    end_ns: int | None
    attributes: dict[str, Any]
    events: list[tuple[str, int | None, dict[str, Any]]] = field(default_factory=list)
    status_code: int = 0  # 0 unset, 1 ok, 2 error
    status_message: str = ""
    resource: dict[str, Any] = field(default_factory=dict)
    scope: str = ""


def detect_format(data: bytes, content_type: str | None = None) -> str:
    """``"json"`` or ``"protobuf"``: from the content type when given, else the bytes."""
    if content_type:
        kind = content_type.split(";")[0].strip().lower()
        if kind in ("application/x-protobuf", "application/protobuf"):
            return "protobuf"
        if kind == "application/json":
            return "json"
    return "json" if data.lstrip()[:1] in (b"{", b"[") else "protobuf"


def decode(
    data: bytes, content_type: str | None = None, *, max_spans: int | None = None
) -> list[WireSpan]:
    """The spans of an OTLP export request in either encoding; more than ``max_spans``
    spans raise :class:`OtlpTooLarge` once the message is parsed, before any is read."""
    if detect_format(data, content_type) == "protobuf":
        return decode_protobuf(data, max_spans=max_spans)
    document = _span_by_span(data, max_spans)
    if document is None:  # not the expected shape: read whole, so the error names the field
        try:
            document = fast_loads(data)
        except ValueError as exc:
            raise OtlpError(f"not OTLP JSON: {exc}") from exc
        except RecursionError:  # JSON nested thousands of levels deep
            raise OtlpError("not OTLP JSON: nested too deeply") from None
        if max_spans is not None:
            _check_count(count_spans(document), max_spans)
    return decode_json(document)


_skeleton: Any = None


def _skeleton_decoder() -> Any:
    """msgspec's decoder of an export request's skeleton: resources, scopes and spans as
    unparsed text (``None`` without msgspec)."""
    global _skeleton
    if _skeleton is None:
        try:
            import msgspec
        except ImportError:  # pragma: no cover - msgspec comes with the server and otel extras
            _skeleton = False
            return None

        # (built with defstruct: this module's annotations are strings, which msgspec
        # cannot resolve for classes defined in a function)
        raw = msgspec.Raw | None
        scope: Any = msgspec.defstruct(
            "Scope", [("scope", raw, None), ("spans", list[msgspec.Raw], [])]
        )
        resource: Any = msgspec.defstruct(
            "Resource", [("resource", raw, None), ("scopeSpans", list.__class_getitem__(scope), [])]
        )
        request = msgspec.defstruct(
            "Request", [("resourceSpans", list.__class_getitem__(resource))]
        )
        _skeleton = (msgspec.json.Decoder(request), (msgspec.DecodeError, UnicodeError))
    return _skeleton or None


def _span_by_span(data: bytes, max_spans: int | None) -> dict[str, Any] | None:
    """The OTLP/JSON document, its spans counted before any is parsed and then parsed one
    at a time (a whole request in one parse holds the interpreter's lock for its whole
    length: 0.9 s for 37 MB, the event loop included); ``None`` when the body does not
    have an export request's shape (the caller parses it whole and says why)."""
    found = _skeleton_decoder()
    if found is None:
        return None
    decoder, errors = found
    try:
        skeleton = decoder.decode(data)
    except errors:  # (msgspec.ValidationError is a DecodeError)
        return None
    if max_spans is not None:
        _check_count(
            sum(len(s.spans) for r in skeleton.resourceSpans for s in r.scopeSpans), max_spans
        )

    def value(raw: Any) -> Any:
        try:
            return None if raw is None else fast_loads(bytes(raw))
        except (ValueError, RecursionError):
            raise _Unreadable from None

    try:
        return {
            "resourceSpans": [
                {
                    "resource": value(r.resource),
                    "scopeSpans": [
                        {"scope": value(s.scope), "spans": [value(x) for x in s.spans]}
                        for s in r.scopeSpans
                    ],
                }
                for r in skeleton.resourceSpans
            ]
        }
    except _Unreadable:
        return None


class _Unreadable(Exception):
    """A part of the body that json cannot read either (the whole parse names it)."""


def _check_count(spans: int, limit: int) -> None:
    if spans > limit:
        raise OtlpTooLarge(spans, limit)


def count_spans(document: Any) -> int:
    """The spans of a parsed OTLP/JSON document (what is not a list of them counts 0:
    :func:`decode_json` names it)."""
    total = 0
    resources = document.get("resourceSpans") if isinstance(document, dict) else None
    for resource_spans in resources if isinstance(resources, list) else ():
        scopes = resource_spans.get("scopeSpans") if isinstance(resource_spans, dict) else None
        for scope_spans in scopes if isinstance(scopes, list) else ():
            spans = scope_spans.get("spans") if isinstance(scope_spans, dict) else None
            total += len(spans) if isinstance(spans, list) else 0
    return total


# -- JSON ----------------------------------------------------------------------------------


def _expect(value: Any, kind: type, where: str) -> Any:
    if not isinstance(value, kind):
        raise OtlpError(f"{where}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def _hex_id(value: Any, digits: int, where: str, *, optional: bool = False) -> str | None:
    if optional and (value is None or value == ""):
        return None
    if not isinstance(value, str) or len(value) != digits or not _HEX.fullmatch(value):
        raise OtlpError(f"{where}: expected {digits} hex digits, got {value!r}")
    if set(value) == {"0"}:
        if optional:
            return None
        raise OtlpError(f"{where}: an all-zero id is invalid")
    return value.lower()


def _int(value: Any, where: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise OtlpError(f"{where}: expected an integer, got {value!r}")
    try:
        return int(value)
    except ValueError:
        raise OtlpError(f"{where}: expected an integer, got {value!r}") from None


def _time_ns(value: Any, where: str) -> int | None:
    ns = _int(value, where)
    if ns is not None and not 0 <= ns <= _MAX_NS:
        raise OtlpError(
            f"{where}: {value!r} is not a time in nanoseconds since 1970 (OTLP's fixed64: "
            f"0 to {_MAX_NS})"
        )
    return ns


def _any_value(value: Any, where: str, depth: int = 0) -> Any:
    if depth > MAX_VALUE_DEPTH:
        raise OtlpError(f"{where}: values nested deeper than {MAX_VALUE_DEPTH} levels")
    _expect(value, dict, where)
    if not value:
        return None
    if len(value) != 1:
        raise OtlpError(f"{where}: an AnyValue has one key, got {sorted(value)}")
    ((key, inner),) = value.items()
    if key == "stringValue":
        return _expect(inner, str, f"{where}.stringValue")
    if key == "boolValue":
        return _expect(inner, bool, f"{where}.boolValue")
    if key == "intValue":
        return _int(inner, f"{where}.intValue")
    if key == "doubleValue":
        if isinstance(inner, bool) or not isinstance(inner, int | float | str):
            raise OtlpError(f"{where}.doubleValue: expected a number, got {inner!r}")
        try:
            return float(inner)
        except ValueError:
            raise OtlpError(f"{where}.doubleValue: expected a number, got {inner!r}") from None
    if key == "bytesValue":
        try:
            return base64.b64decode(_expect(inner, str, f"{where}.bytesValue"), validate=True)
        except ValueError:
            raise OtlpError(f"{where}.bytesValue: not base64") from None
    if key == "arrayValue":
        values = _expect(_expect(inner, dict, f"{where}.arrayValue").get("values", []), list, where)
        return [
            _any_value(v, f"{where}.arrayValue.values[{i}]", depth + 1)
            for i, v in enumerate(values)
        ]
    if key == "kvlistValue":
        values = _expect(
            _expect(inner, dict, f"{where}.kvlistValue").get("values", []), list, where
        )
        return _attributes(values, f"{where}.kvlistValue.values", depth + 1)
    raise OtlpError(f"{where}: unknown AnyValue key {key!r}")


def _attributes(items: Any, where: str, depth: int = 0) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for i, item in enumerate(_expect(items, list, where)):
        here = f"{where}[{i}]"
        _expect(item, dict, here)
        key = _expect(item.get("key"), str, f"{here}.key")
        result[key] = _any_value(item.get("value", {}), f"{here}.value", depth)
    return result


def decode_json(document: Any) -> list[WireSpan]:
    """The spans of an OTLP/JSON ``ExportTraceServiceRequest`` (already parsed)."""
    _expect(document, dict, "the document")
    if "resourceSpans" not in document:
        raise OtlpError("the document has no resourceSpans: not an OTLP trace export")
    spans: list[WireSpan] = []
    for r, resource_spans in enumerate(_expect(document["resourceSpans"], list, "resourceSpans")):
        rwhere = f"resourceSpans[{r}]"
        _expect(resource_spans, dict, rwhere)
        resource = _expect(resource_spans.get("resource") or {}, dict, f"{rwhere}.resource")
        resource_attrs = _attributes(
            resource.get("attributes", []), f"{rwhere}.resource.attributes"
        )
        scopes = _expect(resource_spans.get("scopeSpans", []), list, f"{rwhere}.scopeSpans")
        for s, scope_spans in enumerate(scopes):
            swhere = f"{rwhere}.scopeSpans[{s}]"
            _expect(scope_spans, dict, swhere)
            scope = _expect(scope_spans.get("scope") or {}, dict, f"{swhere}.scope")
            scope_name = scope.get("name") or ""
            for n, span in enumerate(
                _expect(scope_spans.get("spans", []), list, f"{swhere}.spans")
            ):
                spans.append(
                    _json_span(span, f"{swhere}.spans[{n}]", resource_attrs, str(scope_name))
                )
    return spans


def _json_span(span: Any, where: str, resource: dict[str, Any], scope: str) -> WireSpan:
    _expect(span, dict, where)
    events = []
    for e, event in enumerate(_expect(span.get("events", []), list, f"{where}.events")):
        ewhere = f"{where}.events[{e}]"
        _expect(event, dict, ewhere)
        events.append(
            (
                str(event.get("name") or ""),
                _time_ns(event.get("timeUnixNano"), f"{ewhere}.timeUnixNano"),
                _attributes(event.get("attributes", []), f"{ewhere}.attributes"),
            )
        )
    status = _expect(span.get("status") or {}, dict, f"{where}.status")
    code = status.get("code", 0)
    if isinstance(code, str):  # the enum's name, which protobuf's JSON mapping writes
        code = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}.get(code, code)
    if code not in (0, 1, 2):
        raise OtlpError(f"{where}.status.code: expected 0, 1 or 2, got {code!r}")
    name = span.get("name", "")
    return WireSpan(
        trace_id=_hex_id(span.get("traceId"), 32, f"{where}.traceId") or "",
        span_id=_hex_id(span.get("spanId"), 16, f"{where}.spanId") or "",
        parent_id=_hex_id(span.get("parentSpanId"), 16, f"{where}.parentSpanId", optional=True),
        name=_expect(name, str, f"{where}.name"),
        start_ns=_time_ns(span.get("startTimeUnixNano"), f"{where}.startTimeUnixNano"),
        end_ns=_time_ns(span.get("endTimeUnixNano"), f"{where}.endTimeUnixNano"),
        attributes=_attributes(span.get("attributes", []), f"{where}.attributes"),
        events=events,
        status_code=code,
        status_message=str(status.get("message") or ""),
        resource=resource,
        scope=scope,
    )


# -- protobuf ------------------------------------------------------------------------------


class _TooDeep(Exception):
    """An attribute value nested past MAX_VALUE_DEPTH (named by the span that holds it)."""


def _proto_value(value: Any, depth: int = 0) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if depth >= MAX_VALUE_DEPTH and kind in ("array_value", "kvlist_value"):
        raise _TooDeep
    if kind == "array_value":
        return [_proto_value(v, depth + 1) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _proto_value(kv.value, depth + 1) for kv in value.kvlist_value.values}
    return getattr(value, kind)


_PROTO_SCALARS = frozenset({"string_value", "int_value", "bool_value", "double_value"})


def _proto_attributes(items: Any) -> dict[str, Any]:
    attributes = {}
    for kv in items:  # (scalars read inline: most attributes are, and this runs per span)
        value = kv.value
        kind = value.WhichOneof("value")
        attributes[kv.key] = getattr(value, kind) if kind in _PROTO_SCALARS else _proto_value(value)
    return attributes


_ZERO_TRACE, _ZERO_SPAN = bytes(16), bytes(8)


def decode_protobuf(data: bytes, *, max_spans: int | None = None) -> list[WireSpan]:
    """The spans of a protobuf ``ExportTraceServiceRequest`` (extra ``otel``); more than
    ``max_spans`` raise :class:`OtlpTooLarge`."""
    from scenarist._extras import missing_extra

    try:
        from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )
    except ImportError as exc:
        raise missing_extra("otel", exc) from exc
    if max_spans is not None:  # counted on the wire: no message built for a refusal
        counted = _proto_span_count(data)
        if counted is not None:
            _check_count(counted, max_spans)
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(data)
    except DecodeError as exc:
        raise OtlpError(f"not an OTLP protobuf ExportTraceServiceRequest: {exc}") from exc
    if max_spans is not None:  # (when the count above could not be made)
        _check_count(
            sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans),
            max_spans,
        )
    try:
        return _proto_spans(request)
    except _TooDeep:
        raise OtlpError(
            f"an attribute value nests arrays or key-value lists deeper than "
            f"{MAX_VALUE_DEPTH} levels"
        ) from None


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _submessages(data: bytes, start: int, end: int, number: int) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each length-delimited field ``number`` in ``data[start:end]``
    (protobuf's wire format; other fields skipped)."""
    found = []
    at = start
    while at < end:
        tag, at = _varint(data, at)
        kind = tag & 7
        if kind == 2:
            size, at = _varint(data, at)
            if tag >> 3 == number:
                found.append((at, at + size))
            at += size
        elif kind == 0:
            _, at = _varint(data, at)
        elif kind in (1, 5):
            at += 8 if kind == 1 else 4
        else:
            raise ValueError(f"wire type {kind}")
    if at != end:
        raise ValueError("a field runs past its message")
    return found


def _proto_span_count(data: bytes) -> int | None:
    """The spans of a serialised ``ExportTraceServiceRequest``, counted without parsing
    it (a request over the cap is refused before the parser, which holds the
    interpreter's lock while it builds every span); ``None`` if the bytes are not
    well-formed (the parser then says what is wrong)."""
    try:
        return sum(
            len(_submessages(data, s_start, s_end, 2))
            for r_start, r_end in _submessages(data, 0, len(data), 1)
            for s_start, s_end in _submessages(data, r_start, r_end, 2)
        )
    except (IndexError, ValueError):
        return None


def _proto_spans(request: Any) -> list[WireSpan]:
    spans: list[WireSpan] = []
    for r, resource_spans in enumerate(request.resource_spans):
        resource = _proto_attributes(resource_spans.resource.attributes)
        for s, scope_spans in enumerate(resource_spans.scope_spans):
            scope = scope_spans.scope.name
            for n, span in enumerate(scope_spans.spans):
                trace_id, span_id, parent = span.trace_id, span.span_id, span.parent_span_id
                if (
                    len(trace_id) != 16
                    or trace_id == _ZERO_TRACE
                    or len(span_id) != 8
                    or span_id == _ZERO_SPAN
                    or (parent and len(parent) != 8)
                ):
                    _refuse_ids(f"resourceSpans[{r}].scopeSpans[{s}].spans[{n}]", span)
                spans.append(
                    WireSpan(
                        trace_id=trace_id.hex(),
                        span_id=span_id.hex(),
                        parent_id=parent.hex() if parent and parent != _ZERO_SPAN else None,
                        name=span.name,
                        start_ns=span.start_time_unix_nano or None,
                        end_ns=span.end_time_unix_nano or None,
                        attributes=_proto_attributes(span.attributes),
                        events=[
                            (e.name, e.time_unix_nano or None, _proto_attributes(e.attributes))
                            for e in span.events
                        ],
                        status_code=int(span.status.code),
                        status_message=span.status.message,
                        resource=resource,
                        scope=scope,
                    )
                )
    return spans


def _refuse_ids(where: str, span: Any) -> None:
    """Raise the error naming the first of ``span``'s ids that is not a valid OTLP id."""
    trace_id, span_id, parent = span.trace_id, span.span_id, span.parent_span_id
    if len(trace_id) != 16 or not any(trace_id):
        raise OtlpError(f"{where}.traceId: expected 16 bytes, got {len(trace_id)}")
    if len(span_id) != 8 or not any(span_id):
        raise OtlpError(f"{where}.spanId: expected 8 bytes, got {len(span_id)}")
    raise OtlpError(f"{where}.parentSpanId: expected 8 bytes, got {len(parent)}")
