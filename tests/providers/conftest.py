"""Fixtures for the provider adapters: a fake server, clean settings, a clean environment."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scenarist.model_defaults import reset_settings
from scenarist.testing import FakeLLMServer, ScriptedLLM

PROVIDER_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "SCENARIST_OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "SCENARIST_ANTHROPIC_BASE_URL",
    "SCENARIST_DEFAULT_MODEL",
    "SCENARIST_DEFAULT_JUDGE",
    "SCENARIST_EMBEDDING_MODEL",
    "GISKARD_CHECKS_DEFAULT_MODEL",
    "GISKARD_CHECKS_DEFAULT_JUDGE",
    "GISKARD_CHECKS_DEFAULT_EMBEDDING_MODEL",
)


@pytest.fixture(autouse=True)
def clean_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
    reset_settings()
    yield
    reset_settings()


@pytest.fixture
def script() -> ScriptedLLM:
    return ScriptedLLM()


@pytest.fixture
def server(script: ScriptedLLM) -> Iterator[FakeLLMServer]:
    with FakeLLMServer(script) as fake:
        yield fake
