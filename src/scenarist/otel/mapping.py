"""The attribute tables: which OpenTelemetry names fill which field of our spans.

Written as data so that ``docs/otel.md`` can list them and a new convention is a table
row, not code. Three families are read:

* **GenAI semantic conventions** (``gen_ai.*``): the current names (semconv 1.37+:
  ``gen_ai.provider.name``, ``gen_ai.usage.input_tokens``, ``gen_ai.input.messages``...)
  and the previous ones (``gen_ai.system``, ``gen_ai.usage.prompt_tokens``, the message
  span events, OpenLLMetry's flattened ``gen_ai.prompt.N.*``);
* **OpenInference** (``openinference.span.kind``, ``llm.*``, ``input.value``...);
* **Logfire / pydantic-ai** (GenAI names plus ``agent_name``, ``tool_arguments``,
  ``tool_response``, ``final_result`` and the ``events`` attribute of its first versions).

Each tuple is tried in order; the first attribute present wins, so the current name is
listed before the previous one.
"""

from __future__ import annotations

__all__ = [
    "AGENT_NAME",
    "CONTENT_PREFIXES",
    "ERROR_TYPE",
    "FINISH_REASONS",
    "KIND_BY_ATTRIBUTE",
    "KIND_BY_PRESENCE",
    "MESSAGE_EVENTS",
    "MODEL",
    "PROVIDER",
    "REQUEST_MODEL",
    "REQUEST_PARAMETERS",
    "SPAN_INPUT",
    "SPAN_OUTPUT",
    "TOKENS_IN",
    "TOKENS_OUT",
    "TOOL_ARGUMENTS",
    "TOOL_CALL_ID",
    "TOOL_NAME",
    "TOOL_RESULT",
]

# -- the span's kind ---------------------------------------------------------------------

#: (attribute, {value: our kind}); the first attribute present decides.
KIND_BY_ATTRIBUTE: tuple[tuple[str, dict[str, str]], ...] = (
    (
        "gen_ai.operation.name",
        {
            "chat": "llm",
            "text_completion": "llm",
            "generate_content": "llm",
            "embeddings": "embedding",
            "execute_tool": "tool",
            "invoke_agent": "agent",
            "create_agent": "agent",
        },
    ),
    (
        "openinference.span.kind",
        {
            "LLM": "llm",
            "TOOL": "tool",
            "AGENT": "agent",
            "CHAIN": "chain",
            "RETRIEVER": "retrieval",
            "RERANKER": "retrieval",
            "EMBEDDING": "embedding",
            "GUARDRAIL": "custom",
            "EVALUATOR": "custom",
        },
    ),
    (
        "traceloop.span.kind",
        {"workflow": "agent", "agent": "agent", "task": "custom", "tool": "tool"},
    ),
    ("llm.request.type", {"chat": "llm", "completion": "llm", "embedding": "embedding"}),
)

#: Without a kind attribute: (attribute present, kind).
KIND_BY_PRESENCE: tuple[tuple[str, str], ...] = (
    ("gen_ai.tool.name", "tool"),
    ("gen_ai.agent.name", "agent"),
    ("agent_name", "agent"),  # pydantic-ai's agent run span
    ("gen_ai.request.model", "llm"),
    ("gen_ai.system", "llm"),
)

# -- llm spans ---------------------------------------------------------------------------

MODEL: tuple[str, ...] = (
    "gen_ai.response.model",
    "gen_ai.request.model",
    "llm.model_name",
    "llm.response.model",
    "llm.request.model",
)
REQUEST_MODEL: tuple[str, ...] = ("gen_ai.request.model", "llm.request.model", "llm.model_name")
PROVIDER: tuple[str, ...] = ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system")
TOKENS_IN: tuple[str, ...] = (
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.prompt_tokens",
    "llm.token_count.prompt",
    "llm.usage.prompt_tokens",
)
TOKENS_OUT: tuple[str, ...] = (
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
    "llm.usage.completion_tokens",
)
FINISH_REASONS: tuple[str, ...] = (
    "gen_ai.response.finish_reasons",
    "llm.finish_reason",
    "llm.response.finish_reason",
)
#: Request parameters kept in the llm span's input (semconv name → request field).
REQUEST_PARAMETERS: dict[str, str] = {
    "gen_ai.request.temperature": "temperature",
    "gen_ai.request.max_tokens": "max_tokens",
    "gen_ai.request.top_p": "top_p",
    "gen_ai.request.frequency_penalty": "frequency_penalty",
    "gen_ai.request.presence_penalty": "presence_penalty",
    "gen_ai.request.stop_sequences": "stop",
    "gen_ai.request.seed": "seed",
}

#: Span events carrying messages (the previous GenAI conventions), by event name → role.
MESSAGE_EVENTS: dict[str, str] = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}

# -- tool and agent spans ----------------------------------------------------------------

TOOL_NAME: tuple[str, ...] = ("gen_ai.tool.name", "tool.name", "tool_name")
TOOL_CALL_ID: tuple[str, ...] = ("gen_ai.tool.call.id", "tool_call.id", "tool_call_id")
TOOL_ARGUMENTS: tuple[str, ...] = (
    "gen_ai.tool.call.arguments",
    "tool_arguments",
    "input.value",
    "traceloop.entity.input",
)
TOOL_RESULT: tuple[str, ...] = (
    "gen_ai.tool.call.result",
    "tool_response",
    "output.value",
    "traceloop.entity.output",
)
AGENT_NAME: tuple[str, ...] = ("gen_ai.agent.name", "agent.name", "agent_name")
#: Input and output of other spans (agents, chains, custom).
SPAN_INPUT: tuple[str, ...] = ("input.value", "traceloop.entity.input", "gen_ai.input.messages")
SPAN_OUTPUT: tuple[str, ...] = (
    "output.value",
    "final_result",
    "traceloop.entity.output",
    "gen_ai.output.messages",
)
ERROR_TYPE: tuple[str, ...] = ("error.type", "exception.type")

#: Attributes holding content: read into input/output, not copied into metadata.
CONTENT_PREFIXES: tuple[str, ...] = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.prompt",
    "gen_ai.completion",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "llm.input_messages",
    "llm.output_messages",
    "input.value",
    "output.value",
    "tool_arguments",
    "tool_response",
    "final_result",
    "events",
    "all_messages_events",
    "pydantic_ai.all_messages",
    "traceloop.entity.input",
    "traceloop.entity.output",
    "scenarist.",
)
