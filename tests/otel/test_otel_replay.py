"""Replaying an OTel-imported trace: calls served from the recorded content, strictly."""

from __future__ import annotations

import json
from typing import Any

import openai
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from tests.otel import otlp_data as d
from tests.otel.real_sdk import instrumented, script, support_agent

from scenarist.model.record import TraceRecord
from scenarist.otel import parse_otlp
from scenarist.replay.step_replay import ReplayOptions
from scenarist.store.memory import MemoryStore
from scenarist.testing import FakeLLMServer
from scenarist.veval.client import Client

MOCKED = ReplayOptions(mock_llm_responses=True)  # Veval's default replays live

DEAD = "http://127.0.0.1:9/v1"  # nothing listens: a live call could not succeed


def _recording() -> TraceRecord:
    with FakeLLMServer(script()) as server, instrumented() as (provider, sink):
        support_agent(provider, server.openai_url, "Where is order A1?")
        (record,) = parse_otlp(encode_spans(sink.get_finished_spans()).SerializeToString())
        return record


def _agent(question: str, *, stream: bool, extra_call: bool = False) -> Any:
    def agent(ctx: Any) -> str:
        client = openai.OpenAI(base_url=DEAD, api_key="test", max_retries=0)
        messages: list[Any] = [{"role": "user", "content": question}]
        first = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
        call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
        messages.append(first.choices[0].message.model_dump(exclude_none=True))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": "shipped"})
        if stream:
            chunks = client.chat.completions.create(
                model="gpt-4o-mini",
                messages=messages,
                stream=True,
                stream_options={"include_usage": True},
            )
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        else:
            answer = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
            text = answer.choices[0].message.content or ""
        if extra_call:
            client.chat.completions.create(model="gpt-4o-mini", messages=messages)
        return text

    return agent


def test_a_streaming_agent_replays_from_a_non_streamed_recording() -> None:
    result = Client(store=MemoryStore()).replay(
        _recording(), _agent("Where is order A1?", stream=True), MOCKED
    )
    assert result.passed, result.failures
    assert result.output == "It shipped."
    replayed = result.replayed_record
    assert replayed is not None
    calls = [s for s in replayed.spans if s.kind == "llm"]
    assert len(calls) == 2 and all(s.metadata.get("replayed") for s in calls)
    assert all(s.cost_usd == 0.0 for s in calls)  # nothing spent on a replay


def test_genai_semconv_finish_reasons_are_served_as_openai_says_them() -> None:
    question = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "A1?"}]}])
    call = {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"order": "A1"}}
    doc = d.document(
        d.span(
            1,
            "chat gpt-4o-mini",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.input.messages": question,
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [call], "finish_reason": "tool_call"}]
                ),
            },
        )
    )
    (record,) = parse_otlp(d.encoded(doc))
    finishes: list[str | None] = []

    def agent(ctx: Any) -> str:
        client = openai.OpenAI(base_url=DEAD, api_key="test", max_retries=0)
        answer = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "A1?"}]
        )
        finishes.append(answer.choices[0].finish_reason)
        return "asked"

    result = Client(store=MemoryStore()).replay(record, agent, MOCKED)
    assert result.passed, result.failures
    assert finishes == ["tool_calls"]  # semconv's "tool_call", in OpenAI's word


def test_an_extra_call_fails_and_is_not_made_live() -> None:
    result = Client(store=MemoryStore()).replay(
        _recording(), _agent("Where is order A1?", stream=False, extra_call=True), MOCKED
    )
    assert not result.passed
    assert any("more LLM calls than the 2 recorded" in f for f in result.failures)


def test_a_call_the_agent_no_longer_makes_is_reported() -> None:
    def lazy(ctx: Any) -> str:
        return "no model needed"

    result = Client(store=MemoryStore()).replay(_recording(), lazy, MOCKED)
    assert not result.passed
    assert any("never made 2 recorded LLM call(s)" in f for f in result.failures)


def test_a_call_no_trace_can_serve_is_refused_naming_why() -> None:
    def embeds(ctx: Any) -> str:
        client = openai.OpenAI(base_url=DEAD, api_key="test", max_retries=0)
        client.embeddings.create(model="text-embedding-3-small", input="x")
        return "x"

    result = Client(store=MemoryStore()).replay(_recording(), embeds, MOCKED)
    assert not result.passed
    assert any(
        "/v1/embeddings is neither an OpenAI chat-completions call nor an Anthropic messages" in f
        for f in result.failures
    ), result.failures


def _message(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def test_content_missing_on_one_call_errors_before_the_agent_runs() -> None:
    doc = d.document(
        d.span(
            1,
            "chat a",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": _message("user", "hi"),
                "gen_ai.output.messages": _message("assistant", "yo"),
            },
        ),
        d.span(2, "chat b", {"gen_ai.operation.name": "chat"}),
    )
    (record,) = parse_otlp(d.encoded(doc))
    ran: list[bool] = []
    result = Client(store=MemoryStore()).replay(record, lambda ctx: ran.append(True), MOCKED)
    assert not result.passed and ran == []
    (failure,) = result.failures
    assert "without the content of 1 of its 2 LLM call(s): 'chat b' (input, output)" in failure
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true" in failure
