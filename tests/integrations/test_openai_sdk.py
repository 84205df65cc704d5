"""The official openai SDK against the fake server: every call becomes an llm span."""

from __future__ import annotations

import openai
import pytest
from tests.integrations.conftest import OPENAI_KEY, active_run, assert_no_secrets, llm_spans

from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM, ToolCall
from scenarist.tracing import step
from scenarist.tracing.http._llm_payloads import parse_sse

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi?"}]


def client(server: FakeLLMServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.openai_url, api_key=OPENAI_KEY, max_retries=0)


def async_client(server: FakeLLMServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.openai_url, api_key=OPENAI_KEY, max_retries=0)


def test_openai_sync_call_becomes_an_llm_span(server: FakeLLMServer) -> None:
    with client(server) as llm, active_run() as ctx:
        answer = llm.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)  # type: ignore[arg-type]
    assert answer.choices[0].message.content == "The answer is 42."
    (span,) = llm_spans(ctx)
    assert (span.name, span.kind, span.status) == ("openai.chat.completions", "llm", "success")
    assert span.model == "gpt-4o-mini"
    assert (span.tokens_in, span.tokens_out) == (12, 5)
    assert span.cost_usd == pytest.approx(12 * 0.15e-6 + 5 * 0.6e-6)
    assert span.input == {"model": "gpt-4o-mini", "messages": MESSAGES}
    assert span.output["choices"][0]["message"]["content"] == "The answer is 42."
    assert span.metadata["provider"] == "openai"
    assert span.metadata["url"] == server.openai_url + "/chat/completions"
    assert span.metadata["http_status"] == 200
    assert span.duration_ms is not None and span.duration_ms > 0
    assert "ttft_ms" not in span.metadata
    assert_no_secrets(ctx)


def test_openai_stream_records_assembled_message_usage_and_ttft(server: FakeLLMServer) -> None:
    server.script.add(Reply("one two three", tokens_in=7, tokens_out=3, delay_s=0.05))
    with client(server) as llm, active_run() as ctx:
        stream = llm.chat.completions.create(
            model="gpt-4o-mini",
            messages=MESSAGES,  # type: ignore[arg-type]
            stream=True,
            stream_options={"include_usage": True},
        )
        pieces = [c.choices[0].delta.content for c in stream if c.choices]
        assert llm_spans(ctx)[0].status == "success"
    assert "".join(p or "" for p in pieces) == "one two three"
    (span,) = llm_spans(ctx)
    assert span.output["choices"][0]["message"] == {"role": "assistant", "content": "one two three"}
    assert span.output["choices"][0]["finish_reason"] == "stop"
    assert (span.tokens_in, span.tokens_out) == (7, 3)
    assert span.cost_usd is not None and span.cost_usd > 0
    assert span.metadata["stream"] is True
    assert 50 <= span.metadata["ttft_ms"] <= span.duration_ms
    assert span.metadata["stream_sse"].startswith('data: {"id": "chatcmpl-fake-')
    events = parse_sse(span.metadata["stream_sse"].encode())
    assert len(events) == 7  # role, three words, finish, usage, [DONE]
    assert events[-1] == {"data": "[DONE]"}
    assert "stream_closed_early" not in span.metadata
    assert_no_secrets(ctx)


def test_openai_stream_without_include_usage_has_no_tokens(server: FakeLLMServer) -> None:
    with client(server) as llm, active_run() as ctx:
        stream = llm.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, stream=True)  # type: ignore[arg-type]
        list(stream)
    (span,) = llm_spans(ctx)
    assert (span.tokens_in, span.tokens_out, span.cost_usd) == (None, None, None)
    assert span.model == "gpt-4o-mini"


def test_openai_stream_tool_calls_are_assembled(server: FakeLLMServer) -> None:
    server.script.add(Reply(tool_calls=[ToolCall("search", {"q": "refund policy"}, id="c1")]))
    with client(server) as llm, active_run() as ctx:
        list(llm.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, stream=True))  # type: ignore[arg-type]
    (span,) = llm_spans(ctx)
    choice = span.output["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"] == [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "search", "arguments": '{"q": "refund policy"}'},
        }
    ]


@pytest.mark.anyio
async def test_openai_async_call_and_async_stream(server: FakeLLMServer) -> None:
    async with async_client(server) as llm:
        with active_run() as ctx:
            await llm.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)  # type: ignore[arg-type]
            stream = await llm.chat.completions.create(
                model="gpt-4o-mini",
                messages=MESSAGES,  # type: ignore[arg-type]
                stream=True,
                stream_options={"include_usage": True},
            )
            text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert text == "The answer is 42."
    plain, streamed = llm_spans(ctx)
    assert plain.metadata.get("stream") is None and streamed.metadata["stream"] is True
    for span in (plain, streamed):
        assert (span.status, span.tokens_in, span.tokens_out) == ("success", 12, 5)
        assert span.output["choices"][0]["message"]["content"] == "The answer is 42."
    assert streamed.metadata["ttft_ms"] > 0
    assert_no_secrets(ctx)


def test_openai_spans_nest_under_the_enclosing_step(server: FakeLLMServer) -> None:
    with client(server) as llm, active_run() as ctx:
        with step("plan", kind="agent"):
            llm.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)  # type: ignore[arg-type]
            llm.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)  # type: ignore[arg-type]
        llm.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)  # type: ignore[arg-type]
    plan, last = ctx.recorder.roots
    assert plan.name == "plan"
    assert [c.name for c in plan.children] == ["openai.chat.completions"] * 2
    assert all(c.parent_id == plan.span_id for c in plan.children)
    assert last.kind == "llm" and last.parent_id is None


def test_openai_unknown_model_has_tokens_but_no_cost(server: FakeLLMServer) -> None:
    with client(server) as llm, active_run() as ctx:
        llm.chat.completions.create(model="house-model-7b", messages=MESSAGES)  # type: ignore[arg-type]
    (span,) = llm_spans(ctx)
    assert (span.model, span.tokens_in, span.cost_usd) == ("house-model-7b", 12, None)


def test_openai_server_error_is_an_error_span() -> None:
    script = ScriptedLLM([Reply(status=500, error="upstream exploded")])
    with (
        FakeLLMServer(script) as server,
        client(server) as llm,
        active_run() as ctx,
        pytest.raises(openai.InternalServerError),
    ):
        llm.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)  # type: ignore[arg-type]
    (span,) = llm_spans(ctx)
    assert span.status == "error"
    assert span.error is not None
    assert span.error.message == "HTTP 500: upstream exploded"
    assert span.error.type == "HTTPStatusError"
    assert span.metadata["http_status"] == 500
    assert span.output == {
        "error": {"message": "upstream exploded", "type": "api_error", "code": None, "param": None}
    }
    assert span.cost_usd is None


def test_openai_embeddings_are_llm_spans(server: FakeLLMServer) -> None:
    with client(server) as llm, active_run() as ctx:
        result = llm.embeddings.create(model="text-embedding-3-small", input=["a b c", "d"])
    assert len(result.data) == 2
    (span,) = llm_spans(ctx)
    assert span.name == "openai.embeddings"
    assert (span.tokens_in, span.tokens_out) == (4, None)  # the fake counts words
    assert span.cost_usd == pytest.approx(4 * 0.02e-6)


def test_openai_calls_outside_a_run_record_nothing(server: FakeLLMServer) -> None:
    with client(server) as llm:
        llm.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)  # type: ignore[arg-type]
    assert len(server.requests) == 1
