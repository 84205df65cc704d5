"""What the trace page draws from a span tree: a waterfall to time scale and a chat view.

The waterfall places every span on one time axis: its start offset from the earliest
start in the trace, its duration, its depth in the tree, and whether it failed. Offsets
and widths are computed here as percentages of the trace's extent, so the template only
writes them into SVG attributes (the page's CSP forbids inline styles, and SVG geometry
is not a style). A span recorded without a start time sits at its parent's offset and is
marked ``timed=False`` rather than drawn at a made-up place.

The chat view reads LLM spans' requests and responses as messages (system, user,
assistant, tool calls and their results) for the shapes the capture and the OTel import
store: OpenAI chat (``messages`` / ``choices``), Anthropic (``system``, content blocks)
and an assistant message on its own. Anything else is left to the raw JSON, which stays
one click away on every span.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from scenarist.model.trace import Span

__all__ = [
    "ChatMessage",
    "ChatView",
    "ToolCallView",
    "Waterfall",
    "WaterfallRow",
    "chat_views",
    "first_token_ms",
    "ttft_ms",
    "waterfall",
]

_MIN_WIDTH_PCT = 0.4  # a 0 ms span still shows as a sliver


class WaterfallRow(BaseModel):
    span_id: str
    name: str
    kind: str
    status: str
    error: str | None
    depth: int
    offset_ms: float
    duration_ms: float | None
    timed: bool
    """Whether the span had a start time (else it is drawn at its parent's offset)."""
    left_pct: float
    width_pct: float


class Waterfall(BaseModel):
    """Every span on one time axis, in tree order (pre-order)."""

    total_ms: float
    rows: list[WaterfallRow]
    ticks: list[float] = Field(description="axis labels, in ms, at 0, 25, 50, 75, 100 %")


def _walk(spans: Sequence[Span], depth: int = 0) -> Iterator[tuple[Span, int, Span | None]]:
    stack: list[tuple[Span, int, Span | None]] = [(s, depth, None) for s in reversed(spans)]
    while stack:
        span, level, parent = stack.pop()
        yield span, level, parent
        stack.extend((child, level + 1, span) for child in reversed(span.children))


def _ms(later: datetime, earlier: datetime) -> float:
    return (later - earlier).total_seconds() * 1000


def _error_text(span: Span) -> str | None:
    if span.error is None:
        return None
    return f"{span.error.type}: {span.error.message}" if span.error.type else span.error.message


def waterfall(
    roots: Sequence[Span], *, started_at: datetime | None = None, duration_ms: float | None = None
) -> Waterfall:
    """The spans under ``roots`` on the time axis of a trace that started at
    ``started_at`` and lasted ``duration_ms`` (either may be unknown)."""
    walked = list(_walk(roots))
    starts = [s.started_at for s, _, _ in walked if s.started_at is not None]
    origin = min([*starts, *([started_at] if started_at is not None else [])], default=None)
    offsets: dict[int, float] = {}
    placed: list[tuple[Span, int, float, bool]] = []
    for span, depth, parent in walked:
        if span.started_at is not None and origin is not None:
            offset, timed = _ms(span.started_at, origin), True
        else:
            offset, timed = (offsets.get(id(parent), 0.0) if parent is not None else 0.0), False
        offsets[id(span)] = offset
        placed.append((span, depth, offset, timed))
    end = max((offset + (s.duration_ms or 0.0) for s, _, offset, _ in placed), default=0.0)
    total = max(end, duration_ms or 0.0) or 1.0
    rows = [
        WaterfallRow(
            span_id=span.span_id,
            name=span.name,
            kind=span.kind,
            status=span.status,
            error=_error_text(span),
            depth=depth,
            offset_ms=round(offset, 3),
            duration_ms=span.duration_ms,
            timed=timed,
            left_pct=round(min(100.0, 100 * offset / total), 3),
            width_pct=round(
                max(
                    _MIN_WIDTH_PCT,
                    min(100.0 - 100 * offset / total, 100 * (span.duration_ms or 0) / total),
                ),
                3,
            ),
        )
        for span, depth, offset, timed in placed
    ]
    ticks = [round(total * f, 3) for f in (0, 0.25, 0.5, 0.75, 1)]
    return Waterfall(total_ms=round(total, 3), rows=rows, ticks=ticks)


class ToolCallView(BaseModel):
    call_id: str | None
    name: str
    arguments: str


class ChatMessage(BaseModel):
    """One message: who said it, its text, the tools it called, or the call it answers."""

    role: str
    text: str | None = None
    tool_calls: list[ToolCallView] = Field(default_factory=list)
    tool_call_id: str | None = None


class ChatView(BaseModel):
    """One LLM call as a conversation: the messages sent and the reply."""

    span_id: str
    span_name: str
    model: str | None
    status: str
    duration_ms: float | None
    ttft_ms: float | None
    tokens_in: int | None
    tokens_out: int | None
    cost_usd: float | None
    messages: list[ChatMessage]
    reply: list[ChatMessage]
    raw_input: Any
    raw_output: Any


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def _content(content: Any) -> tuple[str | None, list[ToolCallView], list[ChatMessage]]:
    """Text, tool calls and (Anthropic) tool results inside one message's content."""
    if not isinstance(content, list):
        return _as_text(content), [], []
    texts: list[str] = []
    calls: list[ToolCallView] = []
    results: list[ChatMessage] = []
    for part in content:
        if not isinstance(part, dict):
            texts.append(str(part))
            continue
        kind = part.get("type")
        if kind in ("text", "input_text", "output_text") and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "tool_use":
            calls.append(
                ToolCallView(
                    call_id=_str(part.get("id")),
                    name=str(part.get("name")),
                    arguments=_as_text(part.get("input")) or "",
                )
            )
        elif kind == "tool_result":
            text, _, _ = _content(part.get("content"))
            results.append(
                ChatMessage(role="tool", text=text, tool_call_id=_str(part.get("tool_use_id")))
            )
        else:
            texts.append(_as_text(part) or "")
    return ("\n".join(texts) if texts else None), calls, results


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _openai_calls(raw: Any) -> list[ToolCallView]:
    calls = []
    for call in raw if isinstance(raw, list) else []:
        if not isinstance(call, dict):
            continue
        nested = call.get("function")
        function: dict[str, Any] = nested if isinstance(nested, dict) else call
        arguments = function.get("arguments")
        calls.append(
            ToolCallView(
                call_id=_str(call.get("id")),
                name=str(function.get("name")),
                arguments=arguments if isinstance(arguments, str) else (_as_text(arguments) or ""),
            )
        )
    return calls


def _message(raw: Any) -> list[ChatMessage]:
    if not isinstance(raw, dict) or not isinstance(raw.get("role"), str):
        return []
    text, calls, results = _content(raw.get("content"))
    calls = [*_openai_calls(raw.get("tool_calls")), *calls]
    own = ChatMessage(
        role=raw["role"], text=text, tool_calls=calls, tool_call_id=_str(raw.get("tool_call_id"))
    )
    if results and text is None and not calls:  # an Anthropic user turn of tool results
        return results
    return [own, *results]


def _request(raw: Any) -> list[ChatMessage] | None:
    messages = raw.get("messages") if isinstance(raw, dict) else raw
    if not isinstance(messages, list):
        return None
    shown: list[ChatMessage] = []
    if isinstance(raw, dict) and raw.get("system") is not None:  # Anthropic
        shown.append(ChatMessage(role="system", text=_content(raw["system"])[0]))
    for message in messages:
        shown.extend(_message(message))
    return shown


def _reply(raw: Any) -> list[ChatMessage]:
    if isinstance(raw, str):
        return [ChatMessage(role="assistant", text=raw)]
    if isinstance(raw, dict) and isinstance(raw.get("choices"), list):  # OpenAI chat
        return [
            m for c in raw["choices"] if isinstance(c, dict) for m in _message(c.get("message"))
        ]
    if isinstance(raw, list):
        return [m for item in raw for m in _message(item)]
    return _message(raw)


def ttft_ms(span: Span) -> float | None:
    """Time to first token of a streamed LLM call, as the capture measured it."""
    value = span.metadata.get("ttft_ms")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def chat_views(roots: Sequence[Span]) -> list[ChatView]:
    """The LLM spans under ``roots`` whose request reads as messages, in tree order."""
    views = []
    for span, _, _ in _walk(roots):
        if span.kind != "llm":
            continue
        messages = _request(span.input)
        if messages is None:
            continue
        views.append(
            ChatView(
                span_id=span.span_id,
                span_name=span.name,
                model=span.model,
                status=span.status,
                duration_ms=span.duration_ms,
                ttft_ms=ttft_ms(span),
                tokens_in=span.tokens_in,
                tokens_out=span.tokens_out,
                cost_usd=span.cost_usd,
                messages=messages,
                reply=_reply(span.output),
                raw_input=span.input,
                raw_output=span.output,
            )
        )
    return views


def first_token_ms(chart: Waterfall, roots: Sequence[Span]) -> float | None:
    """From the trace's start to the first token of its first streamed LLM call."""
    offsets = {row.span_id: row.offset_ms for row in chart.rows}
    for span, _, _ in _walk(roots):
        ttft = ttft_ms(span) if span.kind == "llm" else None
        if ttft is not None and span.span_id in offsets:
            return round(offsets[span.span_id] + ttft, 3)
    return None
