"""The official anthropic SDK against the fake server: messages, streams, errors."""

from __future__ import annotations

import pytest
from tests.helpers.lazy_modules import lazy_module
from tests.integrations.conftest import ANTHROPIC_KEY, active_run, assert_no_secrets, llm_spans

from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM, ToolCall
from scenarist.tracing import step
from scenarist.tracing.http._llm_payloads import parse_sse

anthropic = lazy_module("anthropic")  # ~3 s of CPU: imported by the worker that runs these

MODEL = "claude-3-5-haiku-latest"
MESSAGES = [{"role": "user", "content": "Where is my parcel?"}]


def client(server: FakeLLMServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.anthropic_url, api_key=ANTHROPIC_KEY, max_retries=0)


def async_client(server: FakeLLMServer) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        base_url=server.anthropic_url, api_key=ANTHROPIC_KEY, max_retries=0
    )


def test_anthropic_sync_message_becomes_an_llm_span(server: FakeLLMServer) -> None:
    with client(server) as llm, active_run() as ctx:
        message = llm.messages.create(model=MODEL, max_tokens=64, messages=MESSAGES)  # type: ignore[arg-type]
    assert message.content[0].type == "text"
    (span,) = llm_spans(ctx)
    assert (span.name, span.kind, span.status) == ("anthropic.messages", "llm", "success")
    assert (span.model, span.tokens_in, span.tokens_out) == (MODEL, 12, 5)
    assert span.cost_usd == pytest.approx(12 * 0.8e-6 + 5 * 4e-6)
    assert span.input == {"model": MODEL, "max_tokens": 64, "messages": MESSAGES}
    assert span.output["content"] == [{"type": "text", "text": "The answer is 42."}]
    assert span.metadata["provider"] == "anthropic"
    assert span.metadata["url"] == server.anthropic_url + "/v1/messages"
    assert_no_secrets(ctx)


def test_anthropic_stream_usage_from_message_start_and_delta(server: FakeLLMServer) -> None:
    server.script.add(
        Reply("Checking.", tool_calls=[ToolCall("track", {"id": "P-1"}, id="tu_1")], delay_s=0.03)
    )
    with (
        client(server) as llm,
        active_run() as ctx,
        llm.messages.stream(model=MODEL, max_tokens=64, messages=MESSAGES) as stream,  # type: ignore[arg-type]
    ):
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "Checking."
    assert final.stop_reason == "tool_use"
    (span,) = llm_spans(ctx)
    assert span.status == "success"
    assert span.output["content"] == [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "tu_1", "name": "track", "input": {"id": "P-1"}},
    ]
    assert span.output["stop_reason"] == "tool_use"
    # input tokens come from message_start, output tokens from the final message_delta
    assert (span.tokens_in, span.tokens_out) == (
        final.usage.input_tokens,
        final.usage.output_tokens,
    )
    assert span.cost_usd is not None and span.cost_usd > 0
    assert 30 <= span.metadata["ttft_ms"] <= span.duration_ms
    kinds = [e.get("event") for e in parse_sse(span.metadata["stream_sse"].encode())]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert_no_secrets(ctx)


def test_anthropic_raw_stream_create(server: FakeLLMServer) -> None:
    with client(server) as llm, active_run() as ctx:
        events = list(
            llm.messages.create(model=MODEL, max_tokens=8, messages=MESSAGES, stream=True)
        )  # type: ignore[arg-type]
    assert events[-1].type == "message_stop"
    (span,) = llm_spans(ctx)
    assert span.output["content"][0]["text"] == "The answer is 42."
    assert (span.tokens_in, span.tokens_out) == (12, 5)


@pytest.mark.anyio
async def test_anthropic_async_message_and_stream(server: FakeLLMServer) -> None:
    async with async_client(server) as llm:
        with active_run() as ctx, step("agent"):
            await llm.messages.create(model=MODEL, max_tokens=64, messages=MESSAGES)  # type: ignore[arg-type]
            async with llm.messages.stream(model=MODEL, max_tokens=64, messages=MESSAGES) as s:  # type: ignore[arg-type]
                text = "".join([t async for t in s.text_stream])
    assert text == "The answer is 42."
    (agent,) = ctx.recorder.roots
    plain, streamed = agent.children
    for span in (plain, streamed):
        assert (span.name, span.status, span.tokens_in, span.tokens_out) == (
            "anthropic.messages",
            "success",
            12,
            5,
        )
        assert span.output["content"] == [{"type": "text", "text": "The answer is 42."}]
    assert streamed.metadata["ttft_ms"] > 0
    assert_no_secrets(ctx)


def test_anthropic_rate_limit_is_an_error_span() -> None:
    script = ScriptedLLM([Reply(status=429, error="slow down")])
    with (
        FakeLLMServer(script) as server,
        client(server) as llm,
        active_run() as ctx,
        pytest.raises(anthropic.RateLimitError),
    ):
        llm.messages.create(model=MODEL, max_tokens=8, messages=MESSAGES)  # type: ignore[arg-type]
    (span,) = llm_spans(ctx)
    assert span.status == "error"
    assert span.error is not None and span.error.message == "HTTP 429: slow down"
    assert span.metadata["http_status"] == 429
