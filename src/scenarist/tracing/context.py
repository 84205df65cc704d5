"""``RunContext``: what an agent callback receives during a traced run (Veval's context).

``client.run_async("support-agent", agent, input=question)`` calls ``agent(ctx)``. The
context exposes the run's ``input``, ``trace_id``, whether it ``is_replay``, the spans
recorded so far (``steps``), ``set_metadata``, and Veval's ``track_step`` /
``track_step_async``. Its ``step(...)`` is :func:`scenarist.tracing.step`, bound to this
run.
"""

from __future__ import annotations

import inspect
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scenarist.trace import Span
from scenarist.tracing.recorder import RunRecorder

if TYPE_CHECKING:
    from scenarist.replay.step_replay import Replayer
from scenarist.tracing.tracked_step import StepHandle, _Step, open_step

__all__ = ["RunContext", "new_trace_id"]


def new_trace_id() -> str:
    """A fresh trace id: ``tr_`` followed by 32 hex digits."""
    return "tr_" + secrets.token_hex(16)


def _wants_handle(fn: Callable[..., Any]) -> bool:
    """Veval's rule: ``fn`` gets the ``StepHandle`` iff it declares a required positional."""
    code = getattr(fn, "__code__", None)
    if code is not None and inspect.isfunction(fn):  # the common case, without inspect
        return bool(code.co_argcount - len(fn.__defaults__ or ()) > 0)
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
        for p in params
    )


def _check_callable(fn: Any, method: str) -> None:
    if not callable(fn):
        raise TypeError(
            f"{method} expects a function (sync or async) as fn, got {type(fn).__name__}"
        )


class RunContext:
    """The context of one traced agent run (Veval's ``VevalExecutionContext``)."""

    def __init__(
        self,
        input: Any = None,
        *,
        trace_id: str | None = None,
        agent_name: str | None = None,
        is_replay: bool = False,
        replayer: Replayer | None = None,
    ) -> None:
        self.input = input
        self.trace_id = trace_id or new_trace_id()
        self.agent_name = agent_name
        self.is_replay = is_replay
        self.metadata: dict[str, Any] = {}
        self.output: Any = None
        self.recorder = RunRecorder(self.trace_id, replayer)

    @property
    def steps(self) -> list[Span]:
        """The spans recorded so far, flattened in pre-order."""
        return self.recorder.spans()

    def set_metadata(self, key: str, value: Any) -> None:
        """Attach ``key: value`` to the run (not to a step)."""
        if not isinstance(key, str) or not key:
            raise TypeError(f"set_metadata key must be a non-empty string, got {key!r}")
        self.metadata[key] = value

    def step(self, name: str, *, input: Any = None, kind: str = "custom") -> _Step:
        """A step of this run, used with ``with`` / ``async with`` (see ``scenarist.step``)."""
        return _Step(name, input, kind)

    def track_step(self, name: str, input: Any, fn: Callable[..., Any]) -> Any:
        """Run ``fn`` as the step ``name`` and return its result (sync ``fn``; an async
        ``fn`` is run to completion on a helper event loop)."""
        span, served = self._open(name, input, fn, "track_step")
        if span is None:
            return served
        with self.recorder.running(span) as outcome:
            result = fn(StepHandle(span)) if _wants_handle(fn) else fn()
            if inspect.isawaitable(result):
                from scenarist._sync import run_sync

                awaitable = result

                async def finish() -> Any:
                    return await awaitable

                result = run_sync(finish)
            outcome.value = result
        return outcome.value

    async def track_step_async(self, name: str, input: Any, fn: Callable[..., Any]) -> Any:
        """Run ``fn`` (sync or async) as the step ``name`` and return its result."""
        span, served = self._open(name, input, fn, "track_step_async")
        if span is None:
            return served
        with self.recorder.running(span) as outcome:
            result = fn(StepHandle(span)) if _wants_handle(fn) else fn()
            outcome.value = await result if inspect.isawaitable(result) else result
        return outcome.value

    def _open(self, name: str, input: Any, fn: Any, method: str) -> tuple[Span | None, Any]:
        """Open the span of a tracked call: ``(span, None)`` to run it, or ``(None, output)``
        when a replay serves the recorded output instead."""
        _check_callable(fn, method)
        span, decision = open_step(self.recorder, name, "custom", input, can_skip=True)
        if decision is not None and decision.serve:
            self.recorder.close(span, output=decision.output)
            return None, decision.output
        return span, None
