"""Serving the LLM calls of a recorded run: a recorded trace *is* a cassette.

The LLM-call capture stores each call an agent made through an SDK as an ``llm`` span:
the request JSON as input, the response as output (the raw events of a stream in
``metadata["stream_sse"]``), the URL and status in metadata. :class:`RecordedCalls` puts
those spans back behind the HTTP interception point, so replaying a trace-backed item
serves an SDK-based agent's calls with no code change and no ``track_step``.

Matching follows the cassettes: method-less (recorded calls are POSTs), path plus request
body without volatile fields, first-in-first-out per key. A call with no recorded match is
a :class:`~scenarist.errors.ReplayMissError` (unless ``live=True``, for
``live_model_steps``): never a silent live call.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from scenarist.errors import ReplayMissError
from scenarist.replay._cassette_http import serve
from scenarist.replay._request_key import VOLATILE_FIELDS, canonical, describe, stored_request
from scenarist.trace import Span
from scenarist.tracing.record import TraceRecord

__all__ = ["RecordedCalls", "is_captured_call"]


def is_captured_call(span: Span) -> bool:
    """Whether ``span`` is an LLM call the HTTP capture recorded (not a tracked step)."""
    return span.kind == "llm" and "url" in span.metadata and "provider" in span.metadata


def _key(path: str, body: Any) -> str:
    if isinstance(body, dict):
        body = {k: v for k, v in body.items() if k not in VOLATILE_FIELDS}
    return canonical([path.rstrip("/") or "/", body])


def _response(span: Span) -> dict[str, Any]:
    status = int(span.metadata.get("http_status") or 200)
    raw = span.metadata.get("stream_sse")
    if isinstance(raw, str):
        events = [event for event in raw.replace("\r\n", "\n").split("\n\n") if event.strip()]
        return {
            "status": status,
            "headers": {"content-type": "text/event-stream"},
            "events": events,
        }
    return {"status": status, "headers": {"content-type": "application/json"}, "body": span.output}


class RecordedCalls:
    """A response source (see ``serve_llm_calls``) answering from a trace's LLM spans."""

    def __init__(self, record: TraceRecord, *, live: bool = False) -> None:
        self.trace_id = record.trace_id
        self.live = live
        self._lanes: dict[str, deque[Span]] = {}
        self._lock = threading.Lock()
        self.served = 0
        self.missed: list[str] = []
        for span in record.spans:
            if is_captured_call(span):
                path = urlsplit(str(span.metadata["url"])).path
                self._lanes.setdefault(_key(path, span.input), deque()).append(span)

    @property
    def unused(self) -> int:
        return sum(len(lane) for lane in self._lanes.values())

    def _take(self, request: Any) -> Span | None:
        stored = stored_request(request.method, request.url.path, request.content, frozenset())
        with self._lock:
            lane = self._lanes.get(_key(stored["path"], stored["body"]))
            if lane:
                self.served += 1
                return lane.popleft()
            if self.live:
                return None
            message = (
                f"Replay of trace {self.trace_id}: no recorded LLM call matches "
                f"{describe(stored)}; a live call is never made instead. Re-record the "
                "trace, or replay with live_model_steps=True to call the model."
            )
            self.missed.append(message)
        raise ReplayMissError(message)

    def respond(self, request: Any, module: Any, send: Callable[[], Any]) -> Any:
        span = self._take(request)
        return send() if span is None else serve(module, _response(span))

    async def respond_async(
        self, request: Any, module: Any, send: Callable[[], Awaitable[Any]]
    ) -> Any:
        span = self._take(request)
        return await send() if span is None else serve(module, _response(span))
