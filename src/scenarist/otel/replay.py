"""Replaying an OpenTelemetry-imported trace: its LLM calls served at the HTTP layer.

An OTel trace holds what the instrumentation captured of each call (model, messages,
response message, finish reason, usage), not the HTTP exchange. :class:`OtelCalls`
answers an OpenAI chat-completions request from the recorded ``llm`` span whose model and
messages are the same (roles, text, tool calls and their arguments; provider-assigned ids
aside), as a chat-completion body or, for ``stream=True``, as SSE chunks. Strict as the
other replays: a request no recorded call matches is a ``ReplayMissError`` naming the
nearest recorded call's difference, and nothing goes live.

A trace whose llm spans lack content (the instrumentations do not capture prompts by
default) cannot be replayed: :func:`content_problem` says so and how to turn capture on.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from scenarist.errors import ReplayMissError
from scenarist.trace import Span
from scenarist.tracing.record import TraceRecord

__all__ = ["CAPTURE_HINT", "OtelCalls", "content_problem", "llm_spans"]

CAPTURE_HINT = (
    "Enable content capture in the instrumentation and record the trace again: "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true for the GenAI-semconv "
    "instrumentations (OpenLLMetry: TRACELOOP_TRACE_CONTENT=true); OpenInference captures "
    "content unless OPENINFERENCE_HIDE_INPUTS / OPENINFERENCE_HIDE_OUTPUTS are set; "
    "Logfire/pydantic-ai: instrument with include_content=True."
)


def llm_spans(record: TraceRecord) -> list[Span]:
    return [s for s in record.spans if s.kind == "llm"]


def content_problem(record: TraceRecord) -> str | None:
    """Why ``record``'s LLM calls cannot be served (``None`` when they can)."""
    spans = llm_spans(record)
    if not spans:
        return None
    missing = [s for s in spans if s.metadata.get("content") == "missing"]
    if not missing:
        return None
    names = ", ".join(
        f"'{s.name}' ({', '.join(s.metadata.get('missing', []))})" for s in missing[:5]
    )
    return (
        f"Trace {record.trace_id} was imported from OpenTelemetry without the content of "
        f"{len(missing)} of its {len(spans)} LLM call(s): {names}; the replay cannot serve "
        f"a response that was not recorded, and a live call is never made instead. {CAPTURE_HINT}"
    )


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, list):
        return "".join(
            str(p.get("text", p.get("content", ""))) for p in content if isinstance(p, dict)
        )
    return str(content)


def _arguments(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def comparable(model: Any, messages: Any) -> str:
    """What must be equal between a request and a recorded call, as one string."""
    rows: list[Any] = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            rows.append(["?", str(message)])
            continue
        calls = [
            [
                (c.get("function") or {}).get("name"),
                _arguments((c.get("function") or {}).get("arguments")),
            ]
            for c in message.get("tool_calls") or []
            if isinstance(c, dict)
        ]
        rows.append([message.get("role"), _text(message.get("content")), calls])
    return json.dumps([model, rows], sort_keys=True, ensure_ascii=False)


def _completion(span: Span, model: str | None) -> dict[str, Any]:
    output = dict(span.output) if isinstance(span.output, dict) else {}
    message: dict[str, Any] = {"role": "assistant", "content": output.get("content")}
    if output.get("tool_calls"):
        message["tool_calls"] = [
            {
                "id": c.get("id") or f"call_{span.span_id}_{i}",
                "type": "function",
                "function": c.get("function") or {},
            }
            for i, c in enumerate(output["tool_calls"])
        ]
    finish = span.metadata.get("finish_reason") or (
        "tool_calls" if output.get("tool_calls") else "stop"
    )
    tokens_in, tokens_out = span.tokens_in or 0, span.tokens_out or 0
    return {
        "id": f"chatcmpl-otel-{span.span_id}",
        "object": "chat.completion",
        "created": int(span.started_at.timestamp()) if span.started_at else 0,
        "model": span.model or model or "unknown",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
        },
    }


def _events(completion: dict[str, Any], include_usage: bool) -> list[str]:
    """A completion as chat-completion stream chunks (SSE ``data:`` events)."""
    choice = completion["choices"][0]
    base = {k: completion[k] for k in ("id", "created", "model")} | {
        "object": "chat.completion.chunk"
    }
    delta: dict[str, Any] = {"role": "assistant", "content": choice["message"].get("content")}
    if choice["message"].get("tool_calls"):
        delta["tool_calls"] = [
            {"index": i, **call} for i, call in enumerate(choice["message"]["tool_calls"])
        ]
    chunks = [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
    ]
    if include_usage:
        chunks.append({**base, "choices": [], "usage": completion["usage"]})
    return [f"data: {json.dumps(c, ensure_ascii=False)}" for c in chunks] + ["data: [DONE]"]


def _rows(key: str) -> str:
    return json.dumps(json.loads(key)[1], ensure_ascii=False)


class OtelCalls:
    """A response source (see ``serve_llm_calls``) answering from an OTel trace's llm spans."""

    def __init__(self, record: TraceRecord) -> None:
        self.trace_id = record.trace_id
        self._lock = threading.Lock()
        self._calls = llm_spans(record)
        self._keys = [
            comparable(
                (s.input or {}).get("model") if isinstance(s.input, dict) else None,
                (s.input or {}).get("messages") if isinstance(s.input, dict) else None,
            )
            for s in self._calls
        ]
        self._used: set[int] = set()
        self.served = 0
        self.missed: list[str] = []

    @property
    def unused(self) -> int:
        with self._lock:
            return len(self._calls) - len(self._used)

    def _miss(self, detail: str) -> ReplayMissError:
        message = (
            f"Replay of OpenTelemetry trace {self.trace_id}: {detail}; a live call is never "
            "made instead."
        )
        self.missed.append(message)
        return ReplayMissError(message)

    def _take(self, request: Any) -> dict[str, Any]:
        path = request.url.path
        try:
            body = json.loads(request.content or b"null")
        except ValueError:
            body = None
        with self._lock:
            if not path.rstrip("/").endswith("/chat/completions") or not isinstance(body, dict):
                raise self._miss(
                    f"{request.method} {path} is not an OpenAI chat-completions call, the only "
                    "kind an OTel trace can serve"
                )
            key = comparable(body.get("model"), body.get("messages"))
            for index, recorded in enumerate(self._keys):
                if index not in self._used and recorded == key:
                    self._used.add(index)
                    self.served += 1
                    completion = _completion(self._calls[index], body.get("model"))
                    break
            else:
                pending = [i for i in range(len(self._calls)) if i not in self._used]
                if not pending:
                    raise self._miss(
                        f"the agent made more LLM calls than the {len(self._calls)} recorded"
                    )
                expected = json.loads(self._keys[pending[0]])
                raise self._miss(
                    "the request diverged from the recording: next recorded call "
                    f"'{self._calls[pending[0]].name}' has model {expected[0]!r} and messages "
                    f"{json.dumps(expected[1], ensure_ascii=False)}, the agent sent model "
                    f"{body.get('model')!r} and messages {_rows(key)}"
                )
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return {
                "status": 200,
                "headers": {"content-type": "text/event-stream"},
                "events": _events(completion, include_usage),
            }
        return {"status": 200, "headers": {"content-type": "application/json"}, "body": completion}

    def respond(self, request: Any, module: Any, send: Callable[[], Any]) -> Any:
        from scenarist.replay._cassette_http import serve

        return serve(module, self._take(request))

    async def respond_async(
        self, request: Any, module: Any, send: Callable[[], Awaitable[Any]]
    ) -> Any:
        from scenarist.replay._cassette_http import serve

        return serve(module, self._take(request))
