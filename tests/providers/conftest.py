"""Fixtures for the provider adapters: a fake server (settings and provider keys are cleared
for every test by the root conftest)."""

from __future__ import annotations

import asyncio
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


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits between retries, recorded instead of slept (no test times a busy
    machine): each is what the retry policy asked for, in seconds."""
    from scenarist.providers import _retry

    asked: list[float] = []

    async def record(seconds: float) -> None:
        asked.append(seconds)
        await asyncio.sleep(0)

    monkeypatch.setattr(_retry, "sleep", record)
    return asked
