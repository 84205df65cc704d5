"""The OTLP/HTTP trace receiver: OpenTelemetry exporters send their spans here.

``POST /otlp/v1/traces`` takes an ``ExportTraceServiceRequest`` as protobuf
(``application/x-protobuf``, needs the ``otel`` extra on the server) or OTLP/JSON
(``application/json``), with the API's ``ingest`` scope, body limit and rate limit, and
stores its traces in the request's project (the key's only one when the request names
none, as on every route) (:mod:`scenarist.otel.ingest`: one trace per OTel trace id,
merged across requests, redacted before storage). ``POST /v1/traces`` is Veval's trace
upload; :class:`OtlpDispatch` sends it here when the body is OTLP (a protobuf content
type, or a JSON object with ``resourceSpans`` among its top-level keys: a Veval trace
holding that key deeper down, in a step's input, is a Veval trace), so an exporter pointed
at the server's base URL works as well. Compressed bodies (gzip, deflate) are inflated
before (``_encoding``).

Limits per request, each answered 413 naming it (exporters do not retry a 413; a smaller
batch passes): ``otlp_max_spans`` spans (``SCENARIST_OTLP_MAX_SPANS``, default
:data:`DEFAULT_OTLP_MAX_SPANS`) and ``otlp_max_bytes`` bytes after decompression
(``SCENARIST_OTLP_MAX_BYTES``, default :data:`DEFAULT_OTLP_MAX_BYTES`), besides the
server's body limit. A request within them is decoded and converted in a worker thread.

Answers: 200 with OTLP's (empty) ``ExportTraceServiceResponse`` in the request's encoding;
400 for a payload that cannot be read, naming the field (OTLP says 400, and exporters do
not retry it), and for spans nested deeper or timestamps larger than the store can read
back; 413 over a limit; 415 for another content type.
"""

from __future__ import annotations

import os
from typing import Any

from fastapi import APIRouter, FastAPI, Request, Response
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scenarist.errors import OtlpError
from scenarist.server._deps import Ingest, Store
from scenarist.server._errors import error_response

__all__ = [
    "DEFAULT_OTLP_MAX_BYTES",
    "DEFAULT_OTLP_MAX_SPANS",
    "OTLP_PATH",
    "OtlpDispatch",
    "install_otlp",
    "otlp_limits_from_env",
    "router",
]

OTLP_PATH = "/otlp/v1/traces"
DEFAULT_OTLP_MAX_SPANS = 20_000
"""Spans per OTLP request (the SDK sends 512 a batch, the Collector 8,192 by default;
50,000 GenAI spans held the event loop past 100 ms: ``bench/otlp_flood.py``)."""
DEFAULT_OTLP_MAX_BYTES = 32 * 1024 * 1024
"""Bytes per OTLP request, decompressed."""
MAX_SPANS_ENV = "SCENARIST_OTLP_MAX_SPANS"
MAX_BYTES_ENV = "SCENARIST_OTLP_MAX_BYTES"
_PROTOBUF = ("application/x-protobuf", "application/protobuf")

router = APIRouter(tags=["otlp"])

# Documented as JSON only: the protobuf form (application/x-protobuf) is the same message,
# which OpenAPI tools cannot generate; the description says so.
_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "description": "an OTLP ExportTraceServiceRequest, as OTLP/JSON or as protobuf "
        "(Content-Type: application/x-protobuf)",
        "content": {
            "application/json": {
                "schema": {"type": "object", "properties": {"resourceSpans": {"type": "array"}}}
            },
        },
    }
}


def otlp_limits_from_env() -> tuple[int, int]:
    """``(max_spans, max_bytes)`` per OTLP request: the environment's, else the defaults."""
    spans = os.environ.get(MAX_SPANS_ENV, "").strip()
    size = os.environ.get(MAX_BYTES_ENV, "").strip()
    return (
        int(spans) if spans else DEFAULT_OTLP_MAX_SPANS,
        int(size) if size else DEFAULT_OTLP_MAX_BYTES,
    )


async def _body_within(request: Request, limit: int) -> bytes | None:
    """The body, or ``None`` as soon as it passes ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _media_type(value: str | None) -> str:
    return (value or "").split(";")[0].strip().lower()


@router.post(
    OTLP_PATH,
    dependencies=[Ingest],
    openapi_extra=_BODY,
    responses={
        200: {"description": "stored (OTLP's ExportTraceServiceResponse)"},
        413: {"description": "more spans or bytes than the server takes per request"},
        415: {"description": "not application/x-protobuf nor application/json"},
    },
)
async def receive_traces(request: Request, store: Store) -> Response:
    """Store the spans of an OTLP/HTTP trace export (protobuf or JSON)."""
    from scenarist.otel.ingest import ingest_otlp
    from scenarist.otel.wire import OtlpTooLarge

    media = _media_type(request.headers.get("content-type"))
    if media not in (*_PROTOBUF, "application/json"):
        return error_response(
            415,
            f"OTLP traces are sent as application/x-protobuf or application/json, not "
            f"{media or 'no content type'!r}",
        )
    max_spans, max_bytes = request.app.state.otlp_limits
    body = await _body_within(request, max_bytes)
    if body is None:
        return error_response(
            413,
            f"the OTLP request is larger than this server's limit of {max_bytes} bytes per "
            f"request, decompressed ({MAX_BYTES_ENV}): send smaller batches",
        )
    try:
        ingested = await ingest_otlp(store, body, media, max_spans=max_spans)
    except OtlpTooLarge as exc:
        return error_response(413, str(exc), limit_spans=exc.limit)
    except OtlpError as exc:
        return error_response(400, str(exc), code="invalid_otlp")
    except ImportError as exc:  # opentelemetry-proto missing on the server
        return error_response(415, f"{exc}; or send OTLP/JSON (application/json)")
    request.state.otlp_spans = ingested.spans
    if media in _PROTOBUF:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceResponse,
        )

        return Response(
            ExportTraceServiceResponse().SerializeToString(), media_type="application/x-protobuf"
        )
    return Response(b"{}", media_type="application/json")


class OtlpDispatch:
    """Route ``POST /v1/traces`` to the OTLP receiver when its body is OTLP.

    Installed inside the body-size limit, so what it reads to decide is already bounded.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or scope["path"].rstrip("/") != "/v1/traces"
        ):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", []))
        media = _media_type(headers.get(b"content-type", b"").decode("latin-1"))
        otlp = {**scope, "path": OTLP_PATH, "raw_path": OTLP_PATH.encode()}
        if media in _PROTOBUF:
            await self.app(otlp, receive, send)
            return
        if media != "application/json":
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        try:
            while True:
                message = await receive()
                messages.append(message)
                if message["type"] != "http.request" or not message.get("more_body"):
                    break
        except HTTPException as exc:  # the body limit, raised outside the route handlers
            await error_response(exc.status_code, str(exc.detail))(scope, receive, send)
            return
        body = b"".join(m.get("body", b"") for m in messages)
        pending = list(messages)

        async def replay() -> Message:
            return pending.pop(0) if pending else await receive()

        is_otlp = _has_resource_spans(body)
        await self.app(otlp if is_otlp else scope, replay, send)


def _has_resource_spans(body: bytes) -> bool:
    """Whether ``body`` is a JSON object with a top-level ``resourceSpans`` key (values
    are skipped, not parsed: the receiver parses them)."""
    import msgspec

    if b'"resourceSpans"' not in body:  # (the quick answer for most Veval traces)
        return False
    try:
        top = msgspec.json.decode(body, type=dict[str, msgspec.Raw])
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeError):
        return False  # not a JSON object: the Veval route says what is wrong
    return "resourceSpans" in top


def install_otlp(app: FastAPI) -> None:
    """The receiver's route and the ``/v1/traces`` dispatch (call before the body limit
    middleware is added, so that the limit wraps the dispatch)."""
    app.include_router(router)
    app.add_middleware(OtlpDispatch)
