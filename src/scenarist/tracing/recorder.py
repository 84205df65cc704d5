"""Recording spans: the active run and the open span live in context variables.

A :class:`RunRecorder` collects the span tree of one agent run. The run and the span
currently open are context variables, so:

* code deep inside an agent (``with scenarist.step(...)``, the LLM-call capture) finds
  the run without anyone passing it around;
* concurrent runs in one process (a parallel suite, ``max_concurrency`` items) never see
  each other's spans: each asyncio task and worker thread has its own context;
* a span opened while another is open becomes its child, however deep the call stack.

Spans are mutated only while open, by the code that opened them; once closed they are
plain data. Recording a span costs a few microseconds (see ``bench/``).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from contextvars import ContextVar, Token
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from pydantic import BaseModel

from scenarist.model._construct import constructor, field_values
from scenarist.model.trace import Span, SpanError

__all__ = [
    "OUTPUT_TYPE_KEY",
    "Decision",
    "RunRecorder",
    "Running",
    "StepSource",
    "current_recorder",
    "current_span",
]

OUTPUT_TYPE_KEY = "_output_type"
"""Span metadata key: the pydantic model a step returned (``module:QualName``), so a replay
served from stored JSON returns that model again (see ``tracked_step.decode_output``)."""

_recorder: ContextVar[RunRecorder | None] = ContextVar("scenarist_run", default=None)
_span: ContextVar[Span | None] = ContextVar("scenarist_span", default=None)
_perf_counter = time.perf_counter
_from_timestamp = datetime.fromtimestamp
_new_span = constructor(Span)
_PLAIN = frozenset({str, dict, list, tuple, int, float, bool, type(None)})


@dataclass
class Decision:
    """What to do with one tracked call: serve ``output`` or run the step live."""

    serve: bool
    output: Any = None
    recorded: Span | None = None


class StepSource(Protocol):
    """Where a replayed run's tracked steps come from: replay's ``Replayer`` plugs in here,
    as a response source does for LLM calls, so tracing never imports replay."""

    @property
    def fidelity(self) -> Any:
        """How the run's steps matched the recording so far (a ``ReplayFidelity``)."""
        ...

    def bind(
        self, name: str, kind: str, actual_input: Any, *, can_skip: bool, span: Span | None = None
    ) -> Decision:
        """Decide how the call ``name(actual_input)`` is served; record the binding."""
        ...

    def serve(self, span: Span, recorded: Span, new_span_id: Callable[[], str]) -> None:
        """Fill the open ``span`` of a served call from its ``recorded`` step."""
        ...


def current_recorder() -> RunRecorder | None:
    """The run being recorded in this context, or ``None`` outside any run."""
    return _recorder.get()


def current_span() -> Span | None:
    """The innermost open span in this context, or ``None``."""
    return _span.get()


class RunRecorder:
    """The span tree of one run, built as spans open and close."""

    __slots__ = (
        "_ids",
        "_perf0",
        "_token",
        "_wall0",
        "replayer",
        "roots",
        "started_at",
        "trace_id",
    )

    def __init__(
        self,
        trace_id: str,
        replayer: StepSource | None = None,
        *,
        started: tuple[datetime, float] | None = None,
    ) -> None:
        """``started``: the run's start as ``(datetime.now(UTC), time.perf_counter())``
        when the caller has just read both clocks (an interaction does)."""
        self.trace_id = trace_id
        self.replayer = replayer
        self.roots: list[Span] = []
        if started is None:
            self.started_at, self._perf0 = datetime.now(UTC), time.perf_counter()
        else:
            self.started_at, self._perf0 = started
        self._wall0 = self.started_at.timestamp()
        self._ids = itertools.count(1)
        self._token: Token[RunRecorder | None] | None = None

    # -- activation ----------------------------------------------------------------------

    def __enter__(self) -> RunRecorder:
        self._token = _recorder.set(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _recorder.reset(self._token)
            self._token = None

    def _now(self) -> tuple[datetime, float]:
        elapsed = _perf_counter() - self._perf0
        return _from_timestamp(self._wall0 + elapsed, UTC), elapsed * 1000

    def _clock(self) -> datetime:
        """Now, on the run's clock: its start plus the monotonic time elapsed since.
        (``fromtimestamp`` of a float costs a third of ``start + timedelta(seconds=...)``,
        and a span reads the clock twice.)"""
        return _from_timestamp(self._wall0 + (_perf_counter() - self._perf0), UTC)

    # -- spans ---------------------------------------------------------------------------

    def open(self, name: str, kind: str = "custom", input: Any = None) -> Span:
        """Open a span under the current one (or as a root) and make it current."""
        parent = _span.get()
        span = _new_span(
            {
                "span_id": str(next(self._ids)),
                "parent_id": parent.span_id if parent is not None else None,
                "name": name,
                "kind": kind,
                "input": input,
                "output": None,
                "status": "running",
                "error": None,
                "started_at": self._clock(),
                "ended_at": None,
                "duration_ms": None,
                "model": None,
                "tokens_in": None,
                "tokens_out": None,
                "cost_usd": None,
                "metadata": {},
                "children": [],
            }
        )
        (parent.children if parent is not None else self.roots).append(span)
        return span

    def discard(self, span: Span) -> None:
        """Remove the open ``span`` from the tree: a call that never started (a replay
        refused it before its code ran), as Veval records no step for it."""
        parent = _span.get()  # what ``open`` made its parent: it is not current itself
        siblings = parent.children if parent is not None else self.roots
        for index, each in enumerate(siblings):
            if each is span:
                del siblings[index]
                return

    def new_span_id(self) -> str:
        """A span id not used yet in this run (for spans copied in, such as served ones)."""
        return str(next(self._ids))

    def close(self, span: Span, *, output: Any = None, error: BaseException | None = None) -> None:
        """Close ``span``: its end time and duration, and its output or its error."""
        ended_at = self._clock()
        values = field_values(span)
        values["ended_at"] = ended_at
        started = values["started_at"]
        values["duration_ms"] = (ended_at - started).total_seconds() * 1000
        if error is None:
            values["status"] = "success"
            values["output"] = output
            kind = type(output)
            # a model a step returned: a replay gives it back, not its JSON (``isinstance``
            # on a model class is an ABC check: plain values, most outputs, skip it)
            if kind not in _PLAIN and isinstance(output, BaseModel):
                values["metadata"][OUTPUT_TYPE_KEY] = f"{kind.__module__}:{kind.__qualname__}"
        else:
            values["status"] = "error"
            message = "cancelled" if _is_cancellation(error) else str(error) or type(error).__name__
            if "=" in message or "@" in message:  # a URL quoted in it may hold a key
                from scenarist.redaction import redact_text  # errors only: not on every span

                message = redact_text(message)
            values["error"] = SpanError(message=message, type=type(error).__name__)

    def running(self, span: Span) -> Running:
        """``with recorder.running(span) as outcome:``: ``span`` is current inside the block,
        then closed with ``outcome.value`` as output, or with the block's exception."""
        return Running(self, span)

    def enter(self, span: Span) -> Token[Span | None]:
        """Make ``span`` the parent of spans opened in this context until :meth:`leave`."""
        return _span.set(span)

    @staticmethod
    def leave(token: Token[Span | None]) -> None:
        _span.reset(token)

    def spans(self) -> list[Span]:
        """Every span recorded so far, in pre-order."""
        return [s for root in self.roots for s in root.walk()]

    def elapsed_ms(self) -> float:
        return self._now()[1]


class Running:
    """The block in which a span is open and current (see :meth:`RunRecorder.running`)."""

    __slots__ = ("_recorder", "_span", "_token", "value")

    def __init__(self, recorder: RunRecorder, span: Span) -> None:
        self._recorder = recorder
        self._span = span
        self.value: Any = None

    def __enter__(self) -> Running:
        self._token = _span.set(self._span)
        return self

    def __exit__(self, kind: object, error: BaseException | None, tb: object) -> None:
        _span.reset(self._token)
        if error is None:
            self._recorder.close(self._span, output=self.value)
        else:
            self._recorder.close(self._span, error=error)


def _is_cancellation(error: BaseException) -> bool:
    import asyncio

    return isinstance(error, asyncio.CancelledError) or type(error).__name__ == "Cancelled"
