"""Fixtures for input generators: a scripted model behind a real OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scenarist.providers import OpenAIProvider
from scenarist.testing import FakeLLMServer, ScriptedLLM


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(ScriptedLLM()) as fake:
        yield fake


@pytest.fixture
def model(server: FakeLLMServer) -> OpenAIProvider:
    return OpenAIProvider(
        "gpt-4o-mini",
        base_url=server.openai_url,
        api_key="sk-test",
        backoff_s=0.01,
        json_retries=0,
    )
