"""Traced execution: one agent call, recorded as a :class:`TraceRecord` and stored.

Everything the Veval half runs (a plain ``client.run``, a scenario item, a replay) goes
through :func:`execute_traced`. The item runner and the replay orchestration receive a
:class:`Harness` instead of the client itself, so they depend on three things (the store,
how to execute, the scope assertions run in) and a client subclass such as
:class:`~scenarist.testing.TestClient` changes behaviour by overriding its two hooks.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from scenarist.engine._user_code import stray_exit
from scenarist.model.record import TraceRecord
from scenarist.store.base import Store
from scenarist.tracing.context import RunContext

__all__ = ["Agent", "Executed", "Harness", "TraceWrites", "check_agent", "execute_traced"]

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


async def execute_traced(
    store: Store, ctx: RunContext, agent: Agent, *, save: bool = True
) -> Executed:
    """Run ``agent(ctx)`` with tracing and LLM-call capture; store (unless not ``save``,
    as for ``client.replay_async``, which stores nothing, as in Veval) and return its record.

    An exception from the agent is returned, not raised: the run is stored either way. So
    are ``SystemExit`` and a cancellation the agent raised itself (nothing cancelled the
    item), as :class:`~scenarist.errors.AbortedCallError`; a cancellation of the run
    propagates.
    """
    from scenarist.tracing.http.capture import capture_llm_calls

    error: BaseException | None = None
    writes = _trace_writes.get()
    token = _trace_writes.set(None)  # runs the agent makes itself are stored before they return
    try:
        with ctx.recorder, capture_llm_calls():
            try:
                output = agent(ctx)
                if inspect.isawaitable(output):
                    output = await output
                ctx.output = output
            except BaseException as exc:  # a stray exit or cancellation is the item's error
                aborted = exc if isinstance(exc, Exception) else stray_exit(exc, "the agent")
                if aborted is None:
                    raise
                error = aborted
    finally:
        _trace_writes.reset(token)
    ctx.error = error
    record = ctx.to_record(error=error)
    if os.environ.get("SCENARIST_OTLP_ENDPOINT"):  # live OTLP export (scenarist.otel)
        from scenarist.otel.live_export import export_record

        export_record(record)
    if save and writes is None:
        await store.save_trace(record)
    elif save and writes is not None:
        writes.start(record.trace_id, store.save_trace(record))
    return record, error


class TraceWrites:
    """Trace writes that go on while the next item runs (see :meth:`deferred`).

    An item's agent is done when its trace is built; storing it need not hold the item's
    worker. Inside :meth:`deferred`, :func:`execute_traced` starts the write and returns;
    :meth:`failures` waits for every write and says which failed, so the caller can
    fail those items. Nothing is dropped: the block does not end before every write has.
    """

    def __init__(self) -> None:
        self._tasks: dict[str, asyncio.Future[None]] = {}

    def start(self, trace_id: str, write: Awaitable[None]) -> None:
        self._tasks[trace_id] = asyncio.ensure_future(write)

    async def failures(self) -> dict[str, BaseException]:
        """Wait for every write; the exception of each that failed, by trace id."""
        if not self._tasks:
            return {}
        outcomes = await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        return {
            trace_id: outcome
            for trace_id, outcome in zip(self._tasks, outcomes, strict=True)
            if isinstance(outcome, BaseException)
        }

    @classmethod
    @contextmanager
    def deferred(cls) -> Iterator[TraceWrites]:
        """Within the block (and the tasks it starts), trace writes are deferred."""
        writes = cls()
        token = _trace_writes.set(writes)
        try:
            yield writes
        finally:
            _trace_writes.reset(token)


_trace_writes: ContextVar[TraceWrites | None] = ContextVar("scenarist_trace_writes", default=None)


@dataclass(frozen=True)
class Harness:
    """What running items and replays needs from a client."""

    store: Store
    execute: Callable[[RunContext, Agent], Awaitable[Executed]]
    assertion_scope: Callable[[], AbstractContextManager[None]]
