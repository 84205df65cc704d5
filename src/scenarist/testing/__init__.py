"""Offline fakes for testing agents and scenarist itself; no network, no SDK imports.

``FakeLLMServer`` with ``ScriptedLLM``: a real HTTP server on 127.0.0.1 speaking the
OpenAI and Anthropic formats, so the official SDKs (and the LLM-call capture) see a real
provider. ``TestClient``: a client that keeps everything in memory and blocks live LLM
calls (loaded on first use). ``BagOfWordsEmbedder``: deterministic embeddings for
similarity checks. ``ManualClock``: time that moves only when told (rate-limit tests).
"""

from typing import TYPE_CHECKING

from scenarist._lazy import lazy_attributes
from scenarist.testing.clock import ManualClock
from scenarist.testing.fake_embeddings import BagOfWordsEmbedder
from scenarist.testing.fake_providers import (
    FakeLLMServer,
    FakeRequest,
    Reply,
    ScriptedLLM,
    ToolCall,
)

if TYPE_CHECKING:
    from scenarist.testing.client import LiveCallBlockedError, TestClient

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {"LiveCallBlockedError": "scenarist.testing.client", "TestClient": "scenarist.testing.client"},
)

__all__ = [
    "BagOfWordsEmbedder",
    "FakeLLMServer",
    "FakeRequest",
    "LiveCallBlockedError",
    "ManualClock",
    "Reply",
    "ScriptedLLM",
    "TestClient",
    "ToolCall",
]
