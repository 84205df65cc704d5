"""Reading LLM payloads: endpoints, SSE framing, stream assembly, usage."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scenarist.redaction import redact_url
from scenarist.tracing.http._llm_payloads import (
    Endpoint,
    SSEParser,
    Usage,
    assemble_stream,
    classify,
    error_message,
    is_token_event,
    parse_event,
    parse_sse,
    usage_of,
)


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("POST", "/v1/chat/completions", Endpoint("openai", "openai.chat.completions")),
        (
            "POST",
            "/openai/deployments/d/chat/completions",
            Endpoint("openai", "openai.chat.completions"),
        ),
        ("POST", "/v1/completions", Endpoint("openai", "openai.completions")),
        ("POST", "/v1/responses", Endpoint("openai", "openai.responses")),
        ("POST", "/v1/embeddings/", Endpoint("openai", "openai.embeddings")),
        ("POST", "/v1/messages", Endpoint("anthropic", "anthropic.messages")),
        ("GET", "/v1/chat/completions", None),
        ("POST", "/v1/messages/count_tokens", None),
        ("POST", "/v1/threads/t_1/messages", None),
        ("POST", "/v1/files", None),
    ],
)
def test_classify_recognises_llm_endpoints(
    method: str, path: str, expected: Endpoint | None
) -> None:
    assert classify(method, path) == expected


def test_redact_url_drops_user_info_and_secret_query_values() -> None:
    url = "https://user:pw@example.com/v1/chat/completions?api-version=2&key=abc&sig=x"
    assert redact_url(url) == (
        "https://example.com/v1/chat/completions?api-version=2&key=%5Bredacted%5D&sig=%5Bredacted%5D"
    )


def sse(*events: tuple[str | None, Any]) -> bytes:
    return b"".join(
        (f"event: {name}\n" if name else "").encode() + f"data: {json.dumps(data)}\r\n\r\n".encode()
        for name, data in events
    )


def test_sse_parser_handles_events_split_anywhere() -> None:
    raw = sse(("message_start", {"type": "message_start"}), (None, {"a": 1}))
    raw += b": ping\n\ndata: [DONE]"
    expected = [
        {"event": "message_start", "data": {"type": "message_start"}},
        {"data": {"a": 1}},
        {"data": "[DONE]"},
    ]
    for size in (1, 3, 7, len(raw)):
        parser = SSEParser()
        blocks = [b for i in range(0, len(raw), size) for b in parser.feed(raw[i : i + size])]
        blocks += parser.flush()
        assert [e for e in map(parse_event, blocks) if e is not None] == expected
    assert parse_sse(raw) == expected


def test_sse_multiline_data_and_non_json_data() -> None:
    assert parse_sse(b"data: line one\ndata: line two\n\n") == [{"data": "line one\nline two"}]
    assert parse_sse(b"event: x\ndata:{}\n\n") == [{"event": "x", "data": {}}]


def test_responses_stream_uses_the_completed_response() -> None:
    usage = {"input_tokens": 9, "output_tokens": 2, "input_tokens_details": {"cached_tokens": 4}}
    response = {"id": "resp_1", "model": "gpt-4o-mini", "usage": usage}
    events = [
        {
            "event": "response.output_text.delta",
            "data": {"type": "response.output_text.delta", "delta": "Hi"},
        },
        {
            "event": "response.completed",
            "data": {"type": "response.completed", "response": response},
        },
    ]
    assert is_token_event(events[0]) and not is_token_event(events[1])
    assert assemble_stream("openai.responses", events) == response
    assert usage_of(response) == Usage(9, 2, cache_read=4)


def test_legacy_completions_stream_concatenates_text() -> None:
    chunks = [{"data": {"model": "m", "choices": [{"index": 0, "text": t}]}} for t in ("a", "b")]
    chunks.append({"data": {"choices": [{"index": 0, "text": "", "finish_reason": "stop"}]}})
    out = assemble_stream("openai.completions", chunks)
    assert out["choices"] == [{"index": 0, "text": "ab", "finish_reason": "stop"}]
    assert out["object"] == "text_completion"


def test_anthropic_stream_with_thinking_and_bad_json_keeps_what_it_can() -> None:
    def delta(index: int, **fields: str) -> dict[str, Any]:
        return {"type": "content_block_delta", "index": index, "delta": fields}

    def start(index: int, **block: Any) -> dict[str, Any]:
        return {"type": "content_block_start", "index": index, "content_block": block}

    events = [
        {"type": "message_start", "message": {"model": "claude", "usage": {"input_tokens": 5}}},
        start(0, type="thinking", thinking=""),
        delta(0, type="thinking_delta", thinking="hm"),
        start(1, type="tool_use", input={}),
        delta(1, type="input_json_delta", partial_json="{bad"),
        {
            "type": "message_delta",
            "delta": {"stop_reason": "max_tokens"},
            "usage": {"output_tokens": 7, "input_tokens": None},
        },
    ]
    out = assemble_stream("anthropic.messages", [{"data": e} for e in events])
    assert out["content"] == [
        {"type": "thinking", "thinking": "hm"},
        {"type": "tool_use", "input": "{bad"},
    ]
    assert out["stop_reason"] == "max_tokens"
    assert usage_of(out) == Usage(5, 7)


def test_usage_of_anthropic_counts_cache_reads_and_writes_as_input() -> None:
    usage = {"input_tokens": 10, "output_tokens": 3}
    usage |= {"cache_read_input_tokens": 100, "cache_creation_input_tokens": 20}
    assert usage_of({"usage": usage}) == Usage(130, 3, cache_read=100, cache_write=20)


def test_usage_of_openai_chat_with_cached_prompt_tokens() -> None:
    usage = {
        "prompt_tokens": 50,
        "completion_tokens": 4,
        "prompt_tokens_details": {"cached_tokens": 32},
    }
    assert usage_of({"usage": usage}) == Usage(50, 4, cache_read=32)


@pytest.mark.parametrize("response", [None, "text", {}, {"usage": None}, {"usage": {"x": True}}])
def test_usage_of_odd_payloads_is_empty(response: Any) -> None:
    assert usage_of(response) == Usage()


def test_error_message_uses_the_provider_message() -> None:
    assert error_message(429, {"error": {"message": "slow"}}) == "HTTP 429: slow"
    assert error_message(502, "Bad gateway") == "HTTP 502: Bad gateway"
    assert error_message(500, None) == "HTTP 500"
