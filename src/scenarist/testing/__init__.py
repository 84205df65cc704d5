"""Offline fakes for testing agents and scenarist itself; no network, no SDK imports.

``FakeLLMServer`` with ``ScriptedLLM``: a real HTTP server on 127.0.0.1 speaking the
OpenAI and Anthropic formats, so the official SDKs (and the LLM-call capture) see a real
provider.
"""

from scenarist.testing.fake_providers import (
    FakeLLMServer,
    FakeRequest,
    Reply,
    ScriptedLLM,
    ToolCall,
)

__all__ = ["FakeLLMServer", "FakeRequest", "Reply", "ScriptedLLM", "ToolCall"]
