"""An agent traced by the real OpenTelemetry SDK and OpenInference's OpenAI instrumentation,
calling the official ``openai`` SDK against ``FakeLLMServer``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import openai
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from scenarist.testing import Reply, ScriptedLLM, ToolCall


def script() -> ScriptedLLM:
    return ScriptedLLM([Reply(tool_calls=[ToolCall("lookup", {"order": "A1"})]), "It shipped."])


@contextmanager
def instrumented(exporter: SpanExporter | None = None) -> Iterator[tuple[TracerProvider, Any]]:
    """A tracer provider exporting to ``exporter`` (default: in memory), OpenAI instrumented."""
    sink = exporter or InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(sink))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield provider, sink
    finally:
        instrumentor.uninstrument()
        provider.shutdown()


def support_agent(provider: TracerProvider, base_url: str, question: str) -> str:
    """One agent run: a root AGENT span, a tool call requested by the model, the answer."""
    tracer = provider.get_tracer("support")
    client = openai.OpenAI(base_url=base_url, api_key="test", max_retries=0)
    with client, tracer.start_as_current_span("support agent") as root:
        root.set_attribute("openinference.span.kind", "AGENT")
        root.set_attribute("input.value", question)
        messages: list[Any] = [{"role": "user", "content": question}]
        first = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
        call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
        messages.append(first.choices[0].message.model_dump(exclude_none=True))
        with tracer.start_as_current_span("lookup") as tool:
            tool.set_attribute("openinference.span.kind", "TOOL")
            tool.set_attribute("tool.name", "lookup")
            tool.set_attribute("input.value", call.function.arguments)  # type: ignore[union-attr]
            tool.set_attribute("output.value", '{"status": "shipped"}')
        messages.append({"role": "tool", "tool_call_id": call.id, "content": "shipped"})
        answer = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
        text = answer.choices[0].message.content or ""
        root.set_attribute("output.value", text)
        return text
