"""Integrations with the libraries agents are built on; imported when a run starts.

``capture_llm_calls`` records every LLM call (OpenAI, Azure OpenAI, Anthropic, Gemini,
Ollama formats) made over ``httpx2`` / ``httpx`` / ``urllib3`` (``requests``) during a run
as an ``llm`` span (see ``capture``);
``serve_llm_calls`` routes them through a response source (replay's cassettes).
"""

from scenarist.tracing.http.capture import (
    ResponseSource,
    capture_active,
    capture_llm_calls,
    serve_llm_calls,
)

__all__ = ["ResponseSource", "capture_active", "capture_llm_calls", "serve_llm_calls"]
