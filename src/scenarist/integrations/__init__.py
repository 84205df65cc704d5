"""Integrations with the libraries agents are built on; imported when a run starts.

``capture_llm_calls`` records every OpenAI- or Anthropic-format LLM call made over
``httpx2`` / ``httpx`` during a run as an ``llm`` span (see ``http_capture``).
"""

from scenarist.integrations.http_capture import capture_active, capture_llm_calls

__all__ = ["capture_active", "capture_llm_calls"]
