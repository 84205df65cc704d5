"""Traced execution: one agent call, recorded as a :class:`TraceRecord` and stored.

Everything the Veval half runs (a plain ``client.run``, a scenario item, a replay) goes
through :func:`execute_traced`. The item runner and the replay orchestration receive a
:class:`Harness` instead of the client itself, so they depend on three things (the store,
how to execute, the scope assertions run in) and a client subclass such as
:class:`~scenarist.testing.TestClient` changes behaviour by overriding its two hooks.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from scenarist.store.base import Store
from scenarist.tracing.context import RunContext
from scenarist.tracing.record import TraceRecord

__all__ = ["Agent", "Executed", "Harness", "check_agent", "execute_traced"]

Agent = Callable[[RunContext], Any]
"""An agent under test: a function of the run context, ``def`` or ``async def``."""

Executed = tuple[TraceRecord, BaseException | None]
"""A stored run and the exception the agent raised, if any."""


def check_agent(agent: Any, what: str = "agent") -> None:
    """Raise ``TypeError`` unless ``agent`` can be called with the run context."""
    if not callable(agent):
        raise TypeError(
            f"{what} must be a function taking the run context (def or async def), "
            f"got {type(agent).__name__}"
        )


async def execute_traced(store: Store, ctx: RunContext, agent: Agent) -> Executed:
    """Run ``agent(ctx)`` with tracing and LLM-call capture; store and return its record.

    An exception from the agent is returned, not raised: the run is stored either way.
    """
    from scenarist.integrations.http_capture import capture_llm_calls

    error: BaseException | None = None
    with ctx.recorder, capture_llm_calls():
        try:
            output = agent(ctx)
            if inspect.isawaitable(output):
                output = await output
            ctx.output = output
        except Exception as exc:
            error = exc
    record = TraceRecord.from_context(ctx, error=error)
    await store.save_trace(record)
    return record, error


@dataclass(frozen=True)
class Harness:
    """What running items and replays needs from a client."""

    store: Store
    execute: Callable[[RunContext, Agent], Awaitable[Executed]]
    assertion_scope: Callable[[], AbstractContextManager[None]]
