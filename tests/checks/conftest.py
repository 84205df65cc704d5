"""Fixtures for the check tests: traces built from outputs, and a runner for any check."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

import pytest

from scenarist.checks import Check
from scenarist.model.results import CheckResult
from scenarist.model.trace import Interaction, Trace

TraceFactory = Callable[..., Trace[Any, Any]]
CheckRunner = Callable[[Check, Trace[Any, Any]], CheckResult]


def _make_trace(
    *outputs: Any,
    inputs: Any = "in",
    metadata: dict[str, Any] | None = None,
    annotations: dict[str, Any] | None = None,
) -> Trace[Any, Any]:
    trace: Trace[Any, Any] = Trace(annotations=annotations or {})
    for output in outputs:
        trace = trace.with_interaction(
            Interaction(inputs=inputs, outputs=output, metadata=metadata or {})
        )
    return trace


def _run(check: Check, trace: Trace[Any, Any]) -> CheckResult:
    result = check.run(trace)
    if inspect.isawaitable(result):

        async def wait() -> CheckResult:
            return await result

        return asyncio.run(wait())
    return result


@pytest.fixture
def make_trace() -> TraceFactory:
    """``make_trace("a", "b")``: a trace with one interaction per output."""
    return _make_trace


@pytest.fixture
def run() -> CheckRunner:
    """``run(check, trace)``: the check's result, whether ``run`` is sync or async."""
    return _run
