"""An agent on the official ``anthropic`` SDK, traced by the real OpenTelemetry SDK and a
real Anthropic instrumentation (OpenInference's, and OpenLLMetry's, which writes the
current GenAI semconv), replayed from its OTel trace with no network."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from tests.helpers.lazy_modules import lazy_module
from tests.otel.real_sdk import script

from scenarist.model.record import TraceRecord
from scenarist.otel import parse_otlp
from scenarist.otel.replay import anthropic_rows
from scenarist.replay.step_replay import ReplayOptions
from scenarist.store.memory import MemoryStore
from scenarist.testing import FakeLLMServer
from scenarist.veval.client import Client

MOCKED = ReplayOptions(mock_llm_responses=True)  # Veval's default replays live

anthropic = lazy_module("anthropic")  # ~3 s of CPU: imported by the worker that runs these
# The two instrumentations, by module (each imports the SDK: loaded when a test needs it).
INSTRUMENTATIONS = [
    "openinference.instrumentation.anthropic",
    "opentelemetry.instrumentation.anthropic",
]

DEAD = "http://127.0.0.1:9"  # nothing listens: a live call could not succeed
MODEL = "claude-3-5-haiku-latest"
TOOLS = [{"name": "lookup", "description": "an order", "input_schema": {"type": "object"}}]


def support_agent(
    base_url: str, question: str, *, stream: bool = False, extra: bool = False
) -> Any:
    """Ask, run the tool the model asks for, answer; the SDK call inside the agent."""

    def agent(ctx: Any = None) -> str:
        with anthropic.Anthropic(base_url=base_url, api_key="test", max_retries=0) as client:
            return _conversation(client, question, stream=stream, extra=extra)

    return agent


def _conversation(client: anthropic.Anthropic, question: str, *, stream: bool, extra: bool) -> str:
    """Ask, run the tool the model asks for, answer."""
    messages: list[Any] = [{"role": "user", "content": question}]
    first = client.messages.create(
        model=MODEL, max_tokens=100, system="Be brief.", messages=messages, tools=TOOLS
    )
    assert first.stop_reason == "tool_use"
    use = next(b for b in first.content if b.type == "tool_use")
    messages.append(
        {
            "role": "assistant",
            "content": [b.model_dump(exclude_none=True) for b in first.content],
        }
    )
    result = {"type": "tool_result", "tool_use_id": use.id, "content": "shipped"}
    messages.append({"role": "user", "content": [result]})
    if stream:
        with client.messages.stream(
            model=MODEL, max_tokens=100, system="Be brief.", messages=messages
        ) as events:
            text = events.get_final_text()
    else:
        answer = client.messages.create(
            model=MODEL, max_tokens=100, system="Be brief.", messages=messages
        )
        text = "".join(b.text for b in answer.content if b.type == "text")
    if extra:
        client.messages.create(model=MODEL, max_tokens=100, messages=messages)
    return text


@pytest.fixture(scope="module", params=INSTRUMENTATIONS, ids=str)
def recording(request: pytest.FixtureRequest) -> TraceRecord:
    instrumentation = importlib.import_module(request.param)
    sink = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(sink))
    instrumentor = instrumentation.AnthropicInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with FakeLLMServer(script()) as server:
            tracer = provider.get_tracer("support")
            with tracer.start_as_current_span("support agent") as root:
                root.set_attribute("openinference.span.kind", "AGENT")
                assert support_agent(server.anthropic_url, "Where is order A1?")() == "It shipped."
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    (record,) = parse_otlp(encode_spans(sink.get_finished_spans()).SerializeToString())
    return record


def test_the_trace_holds_both_calls_with_their_content(recording: TraceRecord) -> None:
    calls = [s for s in recording.spans if s.kind == "llm"]
    assert [s.metadata["content"] for s in calls] == ["captured", "captured"]
    assert [s.metadata["finish_reason"] for s in calls] in (
        ["tool_use", "end_turn"],  # OpenInference: Anthropic's own words
        ["tool_call", "stop"],  # GenAI semconv's
    )


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_an_anthropic_agent_replays_from_its_otel_trace(
    recording: TraceRecord, stream: bool
) -> None:
    result = Client(store=MemoryStore()).replay(
        recording, support_agent(DEAD, "Where is order A1?", stream=stream), MOCKED
    )
    assert result.passed, result.failures
    assert result.output == "It shipped."
    assert result.replayed_record is not None
    served = [s for s in result.replayed_record.spans if s.kind == "llm"]
    assert len(served) == 2 and all(s.metadata.get("replayed") for s in served)


def test_a_changed_question_diverges_naming_both_sides(recording: TraceRecord) -> None:
    result = Client(store=MemoryStore()).replay(
        recording, support_agent(DEAD, "Where is order B2?"), MOCKED
    )
    assert not result.passed
    (miss,) = [f for f in result.failures if "diverged" in f]
    assert "Where is order A1?" in miss and "Where is order B2?" in miss
    assert "a live call is never made instead" in miss


def test_an_extra_call_fails_and_is_not_made_live(recording: TraceRecord) -> None:
    result = Client(store=MemoryStore()).replay(
        recording, support_agent(DEAD, "Where is order A1?", extra=True), MOCKED
    )
    assert not result.passed
    assert any("more LLM calls than the 2 recorded" in f for f in result.failures)


def test_request_blocks_compare_as_the_import_normalises_them() -> None:
    body = {
        "system": [{"type": "text", "text": "Be "}, {"type": "text", "text": "brief."}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me look."},
                    {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"order": 1}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "shipped"},
                    {"type": "text", "text": "thanks"},
                ],
            },
        ],
    }
    assert anthropic_rows(body) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [{"function": {"name": "lookup", "arguments": {"order": 1}}}],
        },
        {"role": "tool", "content": "shipped"},
        {"role": "user", "content": "thanks"},
    ]
