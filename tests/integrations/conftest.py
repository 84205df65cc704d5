"""Fixtures for the LLM-call capture: a fake provider on 127.0.0.1 and an active run."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from scenarist.integrations import capture_llm_calls
from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM
from scenarist.trace import Span
from scenarist.tracing import RunContext

OPENAI_KEY = "sk-test-OPENAI-never-recorded"
ANTHROPIC_KEY = "sk-ant-test-ANTHROPIC-never-recorded"


@pytest.fixture
def script() -> ScriptedLLM:
    return ScriptedLLM(default=Reply("The answer is 42.", tokens_in=12, tokens_out=5))


@pytest.fixture
def server(script: ScriptedLLM) -> Iterator[FakeLLMServer]:
    with FakeLLMServer(script) as fake:
        yield fake


@contextmanager
def active_run(question: str = "q") -> Iterator[RunContext]:
    """What the run machinery does around an agent: a recorder plus the capture."""
    ctx = RunContext(input=question)
    with ctx.recorder, capture_llm_calls():
        yield ctx


def llm_spans(ctx: RunContext) -> list[Span]:
    return [s for s in ctx.steps if s.kind == "llm"]


def assert_no_secrets(ctx: RunContext) -> None:
    dumped = "".join(s.model_dump_json() for s in ctx.steps)
    assert OPENAI_KEY not in dumped
    assert ANTHROPIC_KEY not in dumped
    assert "authorization" not in dumped.lower()
