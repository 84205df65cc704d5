"""Serving the LLM calls of a recorded run: a recorded trace *is* a cassette.

The LLM-call capture stores each call an agent made through an SDK as an ``llm`` span:
the request JSON as input, the response as output (the raw events of a stream in
``metadata["stream_sse"]``), the URL and status in metadata. :class:`RecordedCalls` puts
those spans back behind the HTTP interception point, so replaying a trace-backed item
serves an SDK-based agent's calls with no code change and no ``track_step``.

Matching follows the cassettes: method-less (recorded calls are POSTs), path plus request
body without volatile fields, first-in-first-out per key. Calls belong to the step they
were recorded in:

* a step the replay **serves** serves its recorded calls too (they are consumed, copied
  under it, and never reported unused; see ``step_replay.served_subtree``);
* a call made inside a step that **runs** (a ``with`` block, or a diverged step under
  ``on_divergence="live"``) is answered from the calls recorded inside the step it is
  bound to: the one with the same request first, else, when the step's input diverged,
  the next one in recorded order (its prompt changed with its input). Never live.

A call with no recorded match is a :class:`~scenarist.errors.ReplayMissError` (unless
``live=True``, for ``live_model_steps``): never a silent live call.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scenarist.errors import ReplayMissError
from scenarist.model.record import TraceRecord
from scenarist.model.trace import Span
from scenarist.model.usage import is_captured_call
from scenarist.redaction import redact, redacted_fields
from scenarist.replay._cassette_http import serve
from scenarist.replay._request_key import (
    BODY_DEPTH,
    VOLATILE_FIELDS,
    canonical,
    describe,
    stored_request,
)
from scenarist.tracing.recorder import current_span

if TYPE_CHECKING:
    from scenarist.replay.step_replay import Replayer

__all__ = ["RecordedCalls", "is_captured_call"]


def _key(path: str, body: Any) -> str:
    if isinstance(body, dict):
        body = {k: v for k, v in body.items() if k not in VOLATILE_FIELDS}
    return canonical([path.rstrip("/") or "/", body])


def _span_key(span: Span) -> str:
    # redacted again: a span recorded before the capture redacted bodies holds its secrets
    # (and cut as deep as the live request's stored form is)
    return _key(urlsplit(str(span.metadata["url"])).path, redact(span.input, depth=BODY_DEPTH))


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
    raw = span.metadata.get("stream_raw")  # NDJSON (Ollama), Gemini's JSON array
    if isinstance(raw, str):
        kind = str(span.metadata.get("content_type") or "application/json")
        return {"status": status, "headers": {"content-type": kind}, "text": raw}
    return {"status": status, "headers": {"content-type": "application/json"}, "body": span.output}


def _captured_within(span: Span) -> list[Span]:
    return [s for s in span.walk() if s is not span and is_captured_call(s)]


class RecordedCalls:
    """A response source (see ``serve_llm_calls``) answering from a trace's LLM spans."""

    def __init__(
        self, record: TraceRecord, *, live: bool = False, replayer: Replayer | None = None
    ) -> None:
        self.trace_id = record.trace_id
        self.live = live
        self._replayer = replayer
        self._lock = threading.Lock()
        self._calls: list[Span] = []
        self._lanes: dict[str, deque[int]] = {}
        self._used: set[int] = set()
        self._index: dict[int, int] = {}  # id(span) -> index in _calls
        self.served = 0
        self.missed: list[str] = []
        for span in record.spans:
            if is_captured_call(span):
                index = len(self._calls)
                self._calls.append(span)
                self._index[id(span)] = index
                self._lanes.setdefault(_span_key(span), deque()).append(index)
        if replayer is not None:
            replayer.recorded_calls = self

    @property
    def unused(self) -> int:
        with self._lock:
            return len(self._calls) - len(self._used)

    def consume_within(self, recorded: Span) -> None:
        """A served step served the calls recorded inside it: none is left to serve."""
        with self._lock:
            for span in _captured_within(recorded):
                index = self._index.get(id(span))
                if index is not None:
                    self._used.add(index)

    def _bound_calls(self) -> tuple[list[int], bool] | None:
        """The unused calls recorded inside the step the calling code runs in (innermost
        bound step), and whether that step's input diverged; ``None`` outside any."""
        replayer, span = self._replayer, current_span()
        if replayer is None or span is None:
            return None
        bound = replayer.bound_step(span)
        if bound is None:
            return None
        recorded, outcome = bound
        indexes = [self._index[id(s)] for s in _captured_within(recorded) if id(s) in self._index]
        return [i for i in indexes if i not in self._used], outcome != "matched"

    def _pick(self, key: str) -> int | None:
        scoped = self._bound_calls()
        if scoped is not None:
            candidates, diverged = scoped
            exact = [i for i in candidates if _span_key(self._calls[i]) == key]
            if exact:
                return exact[0]
            if diverged and candidates:
                return candidates[0]
            if candidates:
                return None
        lane = self._lanes.get(key)
        while lane and lane[0] in self._used:
            lane.popleft()
        return lane[0] if lane else None

    def _take(self, request: Any) -> Span | None:
        stored = stored_request(
            request.method, request.url.path, request.content, redacted_fields()
        )
        key = _key(stored["path"], stored["body"])
        with self._lock:
            index = self._pick(key)
            if index is not None:
                self._used.add(index)
                self.served += 1
                return self._calls[index]
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
