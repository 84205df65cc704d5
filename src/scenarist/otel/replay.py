"""Replaying an OpenTelemetry-imported trace: its LLM calls served at the HTTP layer.

An OTel trace holds what the instrumentation captured of each call (model, messages,
response message, finish reason, usage), not the HTTP exchange. :class:`OtelCalls`
answers a request from the recorded ``llm`` span whose model and messages are the same
(roles, text, tool calls and their arguments; provider-assigned ids aside). Two wire
formats are served, each in its own shape, streamed (SSE) when the request asks for it:

* OpenAI chat completions (``.../chat/completions``), also what OpenAI-compatible
  servers speak;
* Anthropic messages (``.../v1/messages``): the request's ``system`` and content blocks
  (text, ``tool_use``, ``tool_result``) are compared in the same normalised form the
  import gives every convention (a ``tool_result`` block is a ``tool`` message), so a
  trace recorded by either instrumentation family serves the agent's calls.

Strict as the other replays: a request no recorded call matches is a ``ReplayMissError``
naming the nearest recorded call's difference, and nothing goes live.

A trace whose llm spans lack content (the instrumentations do not capture prompts by
default) cannot be replayed: :func:`content_problem` says so and how to turn capture on.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from scenarist.errors import ReplayMissError
from scenarist.model.record import TraceRecord
from scenarist.model.trace import Span
from scenarist.tracing.http._llm_payloads import classify

__all__ = ["CAPTURE_HINT", "OtelCalls", "anthropic_rows", "content_problem", "llm_spans"]

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


def anthropic_rows(body: dict[str, Any]) -> list[dict[str, Any]]:
    """An Anthropic messages request's ``system`` and messages in the normalised (OpenAI
    chat) shape the import gives recorded calls."""
    rows: list[dict[str, Any]] = []
    system = body.get("system")
    if system:
        rows.append({"role": "system", "content": _text(system)})
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            rows.append({"role": "?", "content": str(message)})
            continue
        content = message.get("content")
        if not isinstance(content, list):
            rows.append({"role": message.get("role"), "content": _text(content)})
            continue
        blocks = [b for b in content if isinstance(b, dict)]
        for block in blocks:
            if block.get("type") == "tool_result":
                rows.append({"role": "tool", "content": _text(block.get("content"))})
        texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
        calls = [
            {"function": {"name": b.get("name"), "arguments": b.get("input")}}
            for b in blocks
            if b.get("type") == "tool_use"
        ]
        if texts or calls:
            row: dict[str, Any] = {"role": message.get("role"), "content": "".join(texts)}
            if calls:
                row["tool_calls"] = calls
            rows.append(row)
    return rows


# The endpoints (as the capture classifies them) an OTel trace's recorded messages can answer.
_SERVED = ("openai.chat.completions", "anthropic.messages")

# Finish reasons across the two wire formats (a recording from one served to the other).
# GenAI semconv spells a tool call's finish ``tool_call``.
_TO_OPENAI = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "tool_call": "tool_calls",
    "max_tokens": "length",
}
_TO_ANTHROPIC = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "tool_call": "tool_use",
    "length": "max_tokens",
}


def _anthropic_message(span: Span, model: str | None) -> dict[str, Any]:
    output = dict(span.output) if isinstance(span.output, dict) else {}
    content: list[dict[str, Any]] = []
    if output.get("content"):
        content.append({"type": "text", "text": _text(output["content"])})
    for i, call in enumerate(output.get("tool_calls") or []):
        function = call.get("function") or {}
        arguments = _arguments(function.get("arguments"))
        content.append(
            {
                "type": "tool_use",
                "id": call.get("id") or f"toolu_{span.span_id}_{i}",
                "name": function.get("name"),
                "input": arguments if isinstance(arguments, dict) else {},
            }
        )
    recorded = span.metadata.get("finish_reason")
    finish = _TO_ANTHROPIC.get(recorded, recorded) if isinstance(recorded, str) else None
    finish = finish or ("tool_use" if output.get("tool_calls") else "end_turn")
    return {
        "id": f"msg_otel_{span.span_id}",
        "type": "message",
        "role": "assistant",
        "model": span.model or model or "unknown",
        "content": content,
        "stop_reason": finish,
        "stop_sequence": None,
        "usage": {"input_tokens": span.tokens_in or 0, "output_tokens": span.tokens_out or 0},
    }


def _anthropic_events(message: dict[str, Any]) -> list[str]:
    """A message as Anthropic's stream events (``event:`` and ``data:`` lines)."""

    def event(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps({'type': name, **data}, ensure_ascii=False)}"

    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 0}}
    events = [event("message_start", {"message": start})]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            first, delta = {**block, "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            first = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            event("content_block_start", {"index": index, "content_block": first}),
            event("content_block_delta", {"index": index, "delta": delta}),
            event("content_block_stop", {"index": index}),
        ]
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events += [
        event("message_delta", {"delta": stop, "usage": {"output_tokens": usage["output_tokens"]}}),
        event("message_stop", {}),
    ]
    return events


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
    recorded = span.metadata.get("finish_reason")
    finish = _TO_OPENAI.get(recorded, recorded) if isinstance(recorded, str) else None
    finish = finish or ("tool_calls" if output.get("tool_calls") else "stop")
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
        path = request.url.path.rstrip("/")
        try:
            body = json.loads(request.content or b"null")
        except ValueError:
            body = None
        endpoint = classify(request.method, path)
        kind = endpoint.name if endpoint is not None else None
        anthropic = kind == "anthropic.messages"
        with self._lock:
            if kind not in _SERVED or not isinstance(body, dict):
                raise self._miss(
                    f"{request.method} {path} is neither an OpenAI chat-completions call nor "
                    "an Anthropic messages call, the kinds an OTel trace can serve"
                )
            messages = anthropic_rows(body) if anthropic else body.get("messages")
            key = comparable(body.get("model"), messages)
            for index, recorded in enumerate(self._keys):
                if index not in self._used and recorded == key:
                    self._used.add(index)
                    self.served += 1
                    span = self._calls[index]
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
        if anthropic:
            message = _anthropic_message(span, body.get("model"))
            if body.get("stream"):
                return {
                    "status": 200,
                    "headers": {"content-type": "text/event-stream"},
                    "events": _anthropic_events(message),
                }
            return {"status": 200, "headers": {"content-type": "application/json"}, "body": message}
        completion = _completion(span, body.get("model"))
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
