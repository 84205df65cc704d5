"""Stream assembly joins each text once (linear in the chunks) and answers as the
piece-by-piece version did: the same response, or the same error, for any sequence of
OpenAI, Anthropic and Gemini stream payloads. The references below are that earlier
version."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from scenarist.tracing.http._llm_payloads import assemble_stream

# -- the reference: each piece added to the text so far ---------------------------------


def _reference_openai(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    choices: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        for key in ("id", "created", "model", "system_fingerprint", "service_tier"):
            if chunk.get(key) is not None:
                out.setdefault(key, chunk[key])
        if chunk.get("usage"):
            out["usage"] = chunk["usage"]
        for part in chunk.get("choices") or ():
            choice = choices.setdefault(part.get("index", 0), {"index": part.get("index", 0)})
            if part.get("finish_reason") is not None:
                choice["finish_reason"] = part["finish_reason"]
            if "text" in part:
                choice["text"] = choice.get("text", "") + (part["text"] or "")
            if isinstance(part.get("delta"), dict):
                _reference_merge(choice.setdefault("message", {}), part["delta"])
    out["object"] = (
        "text_completion" if any("text" in c for c in choices.values()) else "chat.completion"
    )
    out["choices"] = [choices[i] for i in sorted(choices)]
    return out


def _reference_merge(message: dict[str, Any], delta: dict[str, Any]) -> None:
    for key, value in delta.items():
        if key == "tool_calls":
            if not value:
                continue
            calls: list[dict[str, Any]] = message.setdefault("tool_calls", [])
            for piece in value:
                index = piece.get("index", len(calls))
                while len(calls) <= index:
                    calls.append({"id": None, "type": "function", "function": {}})
                call = calls[index]
                call["id"] = piece.get("id") or call["id"]
                call["type"] = piece.get("type") or call["type"]
                function = call["function"]
                for field, part in (piece.get("function") or {}).items():
                    if part is not None:
                        function[field] = function.get(field, "") + part
        elif isinstance(value, str) and key != "role":
            message[key] = (message.get(key) or "") + value
        elif value is not None or key not in message:
            message[key] = value


def _reference_anthropic(events: list[dict[str, Any]]) -> dict[str, Any]:
    message: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    partial_json: dict[int, str] = {}
    for event in events:
        kind = event.get("type")
        if kind == "message_start":
            message = dict(event.get("message") or {})
        elif kind == "content_block_start":
            blocks[event.get("index", 0)] = dict(event.get("content_block") or {})
        elif kind == "content_block_delta":
            index = event.get("index", 0)
            block = blocks.setdefault(index, {})
            delta = event.get("delta") or {}
            if delta.get("type") == "input_json_delta":
                partial_json[index] = partial_json.get(index, "") + delta.get("partial_json", "")
            elif delta.get("type") == "citations_delta":
                block.setdefault("citations", []).append(delta.get("citation"))
            else:
                for key, value in delta.items():
                    if key != "type" and isinstance(value, str):
                        block[key] = block.get(key, "") + value
        elif kind == "message_delta":
            message.update(event.get("delta") or {})
            usage = {k: v for k, v in (event.get("usage") or {}).items() if v is not None}
            message["usage"] = {**(message.get("usage") or {}), **usage}
    for index, text in partial_json.items():
        try:
            blocks[index]["input"] = json.loads(text) if text else {}
        except ValueError:
            blocks[index]["input"] = text
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


def _reference_gemini(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    candidates: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        for key in ("usageMetadata", "modelVersion", "responseId", "promptFeedback"):
            if chunk.get(key) is not None:
                out[key] = chunk[key]
        for part in chunk.get("candidates") or ():
            if not isinstance(part, dict):
                continue
            index = part.get("index", 0)
            candidate = candidates.setdefault(index, {"content": {"parts": []}, "index": index})
            content = part.get("content") or {}
            if content.get("role"):
                candidate["content"]["role"] = content["role"]
            parts = candidate["content"]["parts"]
            for piece in content.get("parts") or ():
                if (
                    parts
                    and "text" in piece
                    and set(parts[-1]) == {"text"}
                    and set(piece) == {"text"}
                ):
                    parts[-1] = {"text": parts[-1]["text"] + piece["text"]}
                else:
                    parts.append(dict(piece))
            for key, value in part.items():
                if key not in ("content", "index") and value is not None:
                    candidate[key] = value
    out["candidates"] = [candidates[i] for i in sorted(candidates)]
    return out


def _outcome(assemble: Any, *args: Any) -> Any:
    try:
        return ("value", assemble(*copy.deepcopy(args)))
    except Exception as error:  # the same error, or the same value
        return ("error", type(error), str(error))


# -- payloads, odd ones included (None, numbers, texts after non-texts) ----------------

_text = st.text(alphabet='ab{}":1 ', max_size=3)
_value = st.one_of(st.none(), _text, _text, st.integers(0, 3), st.just({"x": 1}))
_index = st.sampled_from([0, 0, 0, 1])

_tool_piece = st.fixed_dictionaries(
    {},
    optional={
        "index": _index,
        "id": st.one_of(st.none(), _text),
        "type": st.one_of(st.none(), _text),
        "function": st.dictionaries(st.sampled_from(["name", "arguments"]), _value, max_size=2),
    },
)
_delta = st.dictionaries(
    st.sampled_from(["role", "content", "content", "refusal", "tool_calls"]),
    st.one_of(_value, st.lists(_tool_piece, max_size=2)),
    max_size=3,
)
_openai_chunk = st.fixed_dictionaries(
    {"choices": st.lists(
        st.fixed_dictionaries(
            {"index": _index},
            optional={"delta": _delta, "text": _value, "finish_reason": _value},
        ),
        max_size=2,
    )},
    optional={"id": _value, "model": _value, "usage": st.just({"prompt_tokens": 1})},
)  # fmt: skip
_anthropic_event = st.one_of(
    st.fixed_dictionaries({"type": st.just("message_start"), "message": st.just({"id": "m"})}),
    st.fixed_dictionaries(
        {"type": st.just("content_block_start"), "index": _index,
         "content_block": st.dictionaries(st.sampled_from(["type", "text"]), _text, max_size=2)}
    ),
    st.fixed_dictionaries(
        {"type": st.just("content_block_delta"), "index": _index,
         "delta": st.one_of(
             st.fixed_dictionaries(
                 {"type": st.just("input_json_delta")}, optional={"partial_json": _value}
             ),
             st.dictionaries(st.sampled_from(["type", "text", "thinking"]), _value, max_size=3),
         )}
    ),
    st.fixed_dictionaries({"type": st.just("message_delta"), "delta": st.just({"stop": "end"})}),
)  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(chunks=st.lists(_openai_chunk, max_size=12))
@example(
    chunks=[
        {"choices": [{"index": 0, "delta": {"content": "a"}}]},
        {"choices": [{"index": 0, "delta": {"content": 0}}]},
        {"choices": [{"index": 0, "delta": {"content": "b"}}]},
    ]
)
@example(
    chunks=[
        {"choices": [{"index": 0, "delta": {"content": None}}]},
        {"choices": [{"index": 0, "delta": {"content": "a"}}]},
        {"choices": [{"index": 0, "delta": {"content": "b"}}]},
    ]
)
@example(
    chunks=[
        {"choices": [{"index": 0, "delta": {"content": "a"}}]},
        {"choices": [{"index": 0, "delta": {"content": None}}]},
        {"choices": [{"index": 0, "delta": {"content": "b"}}]},
    ]
)
@example(
    chunks=[
        {"choices": [{"index": 0, "delta": {"content": {"x": 1}}}]},
        {"choices": [{"index": 0, "delta": {"content": "a"}}]},
    ]
)
@example(
    chunks=[
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"function": {"arguments": "{"}}]}}]},
        {
            "choices": [
                {"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": 1}}]}}
            ]
        },
    ]
)
@example(
    chunks=[
        {
            "choices": [
                {"index": 0, "text": "a"},
                {"index": 0, "text": None},
                {"index": 0, "text": "b"},
            ]
        }
    ]
)
def test_openai_streams_assemble_as_piece_by_piece(chunks: list[dict[str, Any]]) -> None:
    events = [{"data": chunk} for chunk in chunks]
    assert _outcome(assemble_stream, "openai.chat_completions", events) == _outcome(
        _reference_openai, chunks
    )


_gemini_piece = st.one_of(
    st.fixed_dictionaries({"text": _text}),
    st.fixed_dictionaries({"text": _value}),
    st.fixed_dictionaries({"text": _text, "thought": st.just(True)}),
    st.fixed_dictionaries({"functionCall": st.just({"name": "f", "args": {}})}),
)
_gemini_chunk = st.fixed_dictionaries(
    {"candidates": st.lists(
        st.fixed_dictionaries(
            {"index": _index},
            optional={
                "content": st.fixed_dictionaries(
                    {"parts": st.lists(_gemini_piece, max_size=3)},
                    optional={"role": st.just("model")},
                ),
                "finishReason": st.one_of(st.none(), st.just("STOP")),
            },
        ),
        max_size=2,
    )},
    optional={"modelVersion": _value},
)  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(chunks=st.lists(_gemini_chunk, max_size=10))
@example(
    chunks=[
        {"candidates": [{"index": 0, "content": {"parts": [{"text": "a"}, {"text": "b"}]}}]},
        {"candidates": [{"index": 0, "content": {"parts": [{"text": 1}]}}]},
    ]
)
@example(
    chunks=[
        {"candidates": [{"index": 0, "content": {"parts": [{"text": "a"}]}}]},
        {"candidates": [{"index": 0, "content": {"parts": [{"text": "b"}]}}]},
        {"candidates": [{"index": 0, "content": {"parts": [{"text": "c"}]}}]},
    ]
)
def test_gemini_streams_assemble_as_piece_by_piece(chunks: list[dict[str, Any]]) -> None:
    events = [{"data": chunk} for chunk in chunks]
    assert _outcome(assemble_stream, "gemini.stream_generate_content", events) == _outcome(
        _reference_gemini, chunks
    )


@settings(max_examples=600, deadline=None)
@given(events=st.lists(_anthropic_event, max_size=12))
@example(
    events=[
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "{"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": None},
        },
    ]
)
@example(
    events=[
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "a"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "b"}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "c"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "d"}},
    ]
)
def test_anthropic_streams_assemble_as_piece_by_piece(events: list[dict[str, Any]]) -> None:
    wrapped = [{"data": event} for event in events]
    assert _outcome(assemble_stream, "anthropic.messages", wrapped) == _outcome(
        _reference_anthropic, events
    )


def test_a_long_answer_is_joined_whole() -> None:
    pieces = [f"t{i} " for i in range(20_000)]
    events = [{"data": {"choices": [{"index": 0, "delta": {"content": p}}]}} for p in pieces]
    answer = assemble_stream("openai.chat_completions", events)
    assert answer["choices"][0]["message"]["content"] == "".join(pieces)
