"""One captured LLM call: the span from request to the last byte of the response.

The transport hooks (``capture``) own the HTTP plumbing; this module owns what a
call records: the request JSON as input, the response (or the message a stream amounts
to) as output, model, usage, cost, HTTP status, time to first token, errors.

Timings in ``metadata``: ``ttfb_ms`` (time to first byte: the response headers),
``ttft_ms`` (a stream's first token) and, for a streamed response, ``queue_ms``. A server
that streams sends its headers when it starts answering, so the time before them is the
call's wait: queueing at a busy or single-worker server (what ``--parallel`` adds),
connection setup, the server's time to its first chunk. What follows is the call's own
work. A non-streamed response comes whole, so its wait cannot be told apart: no
``queue_ms``. :class:`~scenarist.checks.spans.MaxDuration` with ``measure="wall"`` leaves
queued time out, so a latency budget does not depend on how many scenarios ran at once.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import Any, NamedTuple

from scenarist.model._construct import field_values
from scenarist.model.trace import SpanError
from scenarist.providers.pricing import cost_usd
from scenarist.redaction import redact, redact_body, redact_url, redacted_fields, response_fields
from scenarist.tracing.http import _llm_payloads as payloads
from scenarist.tracing.recorder import RunRecorder

__all__ = ["NOT_PARSED", "REPLAYED", "LLMCall", "parsed_request", "served_json"]

_clock = time.perf_counter
"""The clock every timing of a call reads (one name, so a test can inject its own)."""

REPLAYED = "scenarist.replayed"
"""Response extension a response source sets when it answered a call itself (replay)."""


_served: ContextVar[tuple[bytes, Any] | None] = ContextVar("scenarist_served_json", default=None)
"""The body a response source last served in this context, and its JSON already parsed
(a cassette's recording): a call whose body is that very object takes the value instead
of parsing the bytes again (see :func:`served_json`)."""


_requested: ContextVar[tuple[bytes, Any] | None] = ContextVar(
    "scenarist_request_json", default=None
)
"""The request body the last call of this context was made with, and its parse."""
NOT_PARSED: Any = object()


def parsed_request(body: bytes) -> Any:
    """``parse_body(body)`` when the capture parsed that very ``body`` object for the call
    in flight (a response source keys the request on it: one parse, not two), else
    :data:`NOT_PARSED`. Shared with the span's input: read it, never mutate it."""
    known = _requested.get()
    if known is None or known[0] is not body:
        return NOT_PARSED
    _requested.set(None)  # taken once: a request object sent again is parsed again
    return known[1]


def served_json(body: bytes, value: Any) -> None:
    """Say that ``body``, about to be served in this context, parses to ``value`` (what
    ``json.loads(body)`` gives; a cassette's recorded body, which it was encoded from).
    The capture then takes ``value`` as the call's output, shared, never mutated."""
    _served.set((body, value))


_WANTED_HEADERS = frozenset({"content-encoding", "content-type", "x-request-id", "request-id"})
_WANTED_RAW = {name.encode(): name for name in _WANTED_HEADERS}


def _wanted_headers(headers: Any) -> dict[str, str]:
    """The response headers a call records, repeated ones joined as ``get`` does.

    An httpx-style ``Headers`` is read once through its raw byte pairs and only the
    wanted values are decoded (``get`` scans every header again, ``multi_items`` decodes
    every name and value: a provider sends twenty). ASCII is what every encoding httpx
    may pick reads alike; other bytes are decoded with the encoding ``get`` uses.
    """
    found: dict[str, str] = {}
    raw = getattr(headers, "raw", None)
    if raw is None:  # our shim for urllib3 and aiohttp: names already lowered text
        for key, value in headers.multi_items():
            if key in _WANTED_HEADERS:
                found[key] = f"{found[key]}, {value}" if key in found else value
        return found
    for key, value in raw:
        name = _WANTED_RAW.get(key.lower())
        if name is not None:
            try:
                text = value.decode("ascii")
            except UnicodeDecodeError:
                text = value.decode(headers.encoding)
            found[name] = f"{found[name]}, {text}" if name in found else text
    return found


class _Status(NamedTuple):
    code: int
    streaming: bool
    encoding: str
    ndjson: bool = False
    """A stream of JSON lines (Ollama), captured raw in ``metadata["stream_raw"]``."""


_NO_RESPONSE = _Status(0, False, "")
"""A call's status until its response headers arrive (a tuple: shared safely)."""


class LLMCall:
    """One LLM call in flight: its span, the bytes seen so far, stream timings.

    Made when a hooked transport sees an LLM request; told about the response headers
    (:meth:`headers`), each body chunk as the caller reads it (:meth:`feed`), and the end
    (:meth:`finish`: exhausted, closed, or failed), which closes the span exactly once.
    """

    __slots__ = (
        "_blocks",
        "_body",
        "_chunks",
        "_done",
        "_fields",
        "_headers_at",
        "_module",
        "_recorder",
        "_replayed",
        "_sse",
        "_t0",
        "_ttft",
        "endpoint",
        "span",
        "status",
    )

    def __init__(
        self, recorder: RunRecorder, endpoint: payloads.Endpoint, request: Any, module: Any
    ) -> None:
        try:
            body = request.content
        except Exception:  # a streamed request body that was not read
            body = b""
        self.endpoint = endpoint
        # the one redaction, before anything is recorded (see scenarist.redaction)
        self._fields = fields = redacted_fields()  # read once a call (the environment)
        parsed = payloads.parse_body(body)
        _requested.set((body, parsed))
        request_json = redact_body(body, parsed, fields)
        self.span = span = recorder.open(endpoint.name, "llm", request_json)
        metadata = span.metadata
        metadata["provider"] = endpoint.provider
        metadata["url"] = redact_url(str(request.url), fields)
        self.status = _NO_RESPONSE
        self._recorder, self._module = recorder, module
        self._chunks: list[bytes] = []
        self._body: bytes | None = None
        self._blocks: list[bytes] = []  # raw SSE events, decoded once at the end
        self._sse: payloads.SSEParser | None = None
        self._ttft: float | None = None
        self._headers_at: float | None = None
        self._done = False
        self._replayed = False
        self._t0 = _clock()

    def headers(self, response: Any) -> None:
        self._headers_at = _clock()
        headers = _wanted_headers(response.headers)
        encoding = headers.get("content-encoding", "").strip().lower()
        content_type = headers.get("content-type", "")
        streaming = "text/event-stream" in content_type
        ndjson = "ndjson" in content_type or "jsonl" in content_type
        self.status = _Status(response.status_code, streaming, encoding, ndjson)
        self._replayed = bool(response.extensions.get(REPLAYED))
        if streaming and encoding in ("", "identity"):
            self._sse = payloads.SSEParser()
        metadata = self.span.metadata
        metadata["http_status"] = response.status_code
        request_id = headers.get("x-request-id") or headers.get("request-id")
        if request_id:
            metadata["request_id"] = request_id

    def feed(self, chunk: bytes) -> None:
        if self._sse is None:
            self._chunks.append(chunk)
            if self._ttft is None:
                self._ttft = _clock()
            return
        blocks = self._sse.feed(chunk)
        if blocks:
            self._blocks += blocks
            if self._ttft is None:
                for block in blocks:
                    event = payloads.parse_event(block)
                    if event is not None and payloads.is_token_event(event):
                        self._ttft = _clock()
                        break

    def finish(self, error: BaseException | None = None, *, early: bool = False) -> None:
        """Close the span (once): output, model, usage, cost, status."""
        if self._done:
            return
        self._done = True
        span, values, metadata = self.span, field_values(self.span), self.span.metadata
        output: Any = None
        try:
            output, finished = self._output()
            if early and self.status.streaming and not finished:
                metadata["stream_closed_early"] = True  # the caller stopped reading
            self._describe(output, values, metadata)
            answers = response_fields(self._fields)
            body = self._body
            output = redact(output, answers) if body is None else redact_body(body, output, answers)
        except Exception as problem:  # never break the caller's call over a payload
            metadata["capture_error"] = f"{type(problem).__name__}: {problem}"
        if error is not None:
            self._recorder.close(span, error=error)
            values["output"] = output
            return
        self._recorder.close(span, output=output)
        if self.status.code >= 400:
            values["status"] = "error"
            values["error"] = SpanError(
                message=payloads.error_message(self.status.code, output), type="HTTPStatusError"
            )

    def _output(self) -> tuple[Any, bool]:
        """The response (a stream's assembled message) and whether a stream was complete."""
        if self._sse is not None:
            self._blocks += self._sse.flush()
        elif self._chunks:
            body = b"".join(self._chunks)
            if self.status.encoding not in ("", "identity"):
                body = self._module.Response(
                    200, headers={"content-encoding": self.status.encoding}, content=body
                ).read()
            if self.status.ndjson or (
                self.endpoint.name == "gemini.stream_generate_content" and not self.status.streaming
            ):  # a stream that is not SSE: kept raw (what replay serves), assembled
                metadata = self.span.metadata
                metadata["stream"] = True
                metadata["stream_raw"] = body.decode("utf-8", "replace")
                metadata["content_type"] = (
                    "application/x-ndjson" if self.status.ndjson else ("application/json")
                )
                chunks = payloads.parse_ndjson(body) if self.status.ndjson else None
                parsed = chunks if chunks is not None else payloads.parse_body(body)
                return payloads.normalize(self.endpoint.name, parsed), True
            if not self.status.streaming:
                self._body = body  # what the output is parsed from: redact_body's text
                known = _served.get()
                if known is not None and known[0] is body:  # a recording's, parsed already
                    _served.set(None)
                    return known[1], True
                return payloads.parse_body(body), True
            parser = payloads.SSEParser()
            self._blocks = parser.feed(body) + parser.flush()
        if not self.status.streaming:
            return None, False
        events = [e for e in map(payloads.parse_event, self._blocks) if e is not None]
        if self._ttft is None and events:
            self._ttft = _clock()
        finished = payloads.stream_finished(events)
        if self.status.code >= 400 and not events:
            return None, finished
        return payloads.assemble_stream(self.endpoint.name, events), finished

    def _describe(self, output: Any, values: dict[str, Any], metadata: dict[str, Any]) -> None:
        request = values["input"] if isinstance(values["input"], dict) else {}
        url = metadata.get("url", "")
        path = (url if type(url) is str else str(url)).partition("?")[0]
        usage = payloads.usage_of(output)
        values["model"] = payloads.model_of(output, request, path)
        values["tokens_in"], values["tokens_out"] = usage.tokens_in, usage.tokens_out
        if self.status.code < 400:
            values["cost_usd"] = cost_usd(
                self.endpoint.provider,
                values["model"],
                usage.tokens_in,
                usage.tokens_out,
                cache_read_tokens=usage.cache_read,
                cache_write_tokens=usage.cache_write,
                api_url=metadata.get("url"),
            )
        if self._replayed:  # served from a recording: nothing spent, the recorded cost kept
            metadata["replayed"] = True
            if values["cost_usd"] is not None:
                metadata["recorded_cost_usd"] = values["cost_usd"]
                values["cost_usd"] = 0.0
        if self._headers_at is not None:
            metadata["ttfb_ms"] = (self._headers_at - self._t0) * 1000
            if self.status.streaming or self.status.ndjson:  # headers came before the work
                metadata["queue_ms"] = metadata["ttfb_ms"]
        if self.status.streaming:
            metadata["stream"] = True
            raw = b"".join(block + b"\n\n" for block in self._blocks)
            metadata["stream_sse"] = raw.decode("utf-8", "replace")
            if self._ttft is not None:
                metadata["ttft_ms"] = (self._ttft - self._t0) * 1000
