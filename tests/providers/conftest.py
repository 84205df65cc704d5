"""Fixtures for the provider adapters: a fake server (settings and provider keys are cleared
for every test by the root conftest)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scenarist.testing import FakeLLMServer, ScriptedLLM


@pytest.fixture
def script() -> ScriptedLLM:
    return ScriptedLLM()


@pytest.fixture
def server(script: ScriptedLLM) -> Iterator[FakeLLMServer]:
    with FakeLLMServer(script) as fake:
        yield fake
