"""``RunContext``: what an agent callback receives during a traced run (Veval's context).

``client.run_async("support-agent", agent, input=question)`` calls ``agent(ctx)``. The
context exposes the run's ``input``, ``trace_id``, whether it ``is_replay``, the steps
tracked so far (``steps``; ``spans`` adds the captured LLM calls), ``set_metadata``, and
Veval's ``track_step`` / ``track_step_async``. Its ``step(...)`` is
:func:`scenarist.tracing.step`, bound to this run.

It is built as Veval builds its context, ``RunContext(trace_id, input)``: the first
positional is the trace id (``RunContext("tr_1")`` never sets the input); a missing trace
id is a fresh one. Veval's members are here too: ``trace_meta`` (the run's metadata),
``judgments`` / ``record_judgment``, ``load_mock_outputs`` (serve the tracked steps from
a recorded trace) and ``replay_fidelity``.
"""

from __future__ import annotations

import inspect
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal

from scenarist.model._construct import construct, field_values
from scenarist.model.record import TraceRecord, run_total
from scenarist.model.trace import Span, SpanError, Trace
from scenarist.model.usage import step_spans
from scenarist.tracing.recorder import RunRecorder, StepSource
from scenarist.tracing.recorder import _span as _current_span
from scenarist.tracing.tracked_step import StepHandle, _Step, decode_output, open_step

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
            f"{method} expects a function (sync or async) as step, got {type(fn).__name__}"
        )


def _step_fn(step: Any, fn: Any, method: str) -> Any:
    """The step function, given as ``step`` (Veval's keyword) or ``fn`` (the older one)."""
    if (step is None) == (fn is None):
        raise TypeError(
            f"{method}(name, input, step) takes the step function once, as step= (or the older fn=)"
        )
    return step if step is not None else fn


class RunContext:
    """The context of one traced agent run (Veval's ``VevalExecutionContext``)."""

    def __init__(
        self,
        trace_id: str | None = None,
        input: Any = None,
        *,
        agent_name: str | None = None,
        is_replay: bool = False,
        replayer: StepSource | None = None,
    ) -> None:
        if trace_id is not None and not isinstance(trace_id, str):
            raise TypeError(
                f"RunContext(trace_id, input): the first argument is the trace id, got "
                f"{type(trace_id).__name__} {trace_id!r}; pass the run's input as input=..."
            )
        self.input = input
        self.trace_id = trace_id or new_trace_id()
        self.agent_name = agent_name
        self.is_replay = is_replay
        self.metadata: dict[str, Any] = {}
        self.output: Any = None
        self.error: BaseException | None = None
        """The exception the agent raised, once its run ended (``None`` while it runs)."""
        self.judgments: list[dict[str, Any]] = []
        self.recorder = RunRecorder(self.trace_id, replayer)

    def to_record(self, *, error: BaseException | None = None) -> TraceRecord:
        """The record of this run, which ended with ``error`` (or successfully), with its
        total, the steps' cost, as Veval's SDK sends a run's (``None`` when it is zero)."""
        record = self._record(error)
        # one walk of the tree
        field_values(record)["total_cost_usd"] = run_total(record.cost_usd)
        return record

    def _trace(self, error: BaseException | None) -> Trace[Any, Any]:
        """This run so far as checks read it: its record without the total, which no
        check reads (an assertion evaluated on the context builds one each time)."""
        return self._record(error).to_trace()

    def _record(self, error: BaseException | None) -> TraceRecord:
        recorder = self.recorder
        return construct(
            TraceRecord,
            {
                "trace_id": self.trace_id,
                "agent_name": self.agent_name,
                "input": self.input,
                "output": self.output,
                "status": "error" if error is not None else "success",
                "error": None
                if error is None
                else SpanError(
                    message=str(error) or type(error).__name__, type=type(error).__name__
                ),
                "started_at": recorder.started_at,
                "ended_at": datetime.now(UTC),
                "duration_ms": recorder.elapsed_ms(),
                "total_cost_usd": None,
                "is_replay": self.is_replay,
                "metadata": dict(self.metadata),
                "steps": list(recorder.roots),
            },
        )

    @property
    def trace_meta(self) -> dict[str, Any]:
        """Veval's name for :attr:`metadata` (the run's, not a step's)."""
        return self.metadata

    @property
    def replay_fidelity(self) -> Any:
        """How the tracked calls bound to the recording; ``None`` when not replaying."""
        replayer = self.recorder.replayer
        return replayer.fidelity if replayer is not None else None

    def record_judgment(self, criteria: str, score: float, passed: bool, reasoning: str) -> None:
        """Keep a judge's verdict on this run (``judgments``, in order)."""
        self.judgments.append(
            {"criteria": criteria, "score": score, "passed": passed, "reasoning": reasoning}
        )

    def load_mock_outputs(
        self,
        trace: TraceRecord | dict[str, Any],
        strict: bool = True,
        live_model_steps: bool = False,
        *,
        on_divergence: Literal["serve", "fail", "live"] = "serve",
    ) -> None:
        """Serve this run's tracked steps from ``trace`` (a record or Veval's JSON).

        As in Veval, a call whose input diverged from the recording is served the next
        unused recording of its step and reported as diverged in :attr:`replay_fidelity`,
        strict or not; ``on_divergence="fail"`` (ours) raises ``ReplayDivergenceError``
        with a diff instead (``"live"`` runs the step, its LLM calls still served from the
        recording). ``strict`` (the default) fails a call the recording lacks
        (``ReplayNoMockError``); ``strict=False`` is Veval's lenient mode, in which such a
        call runs live. ``live_model_steps`` runs the recorded ``llm`` steps for real and
        serves every other step. Call it before the agent runs.
        """
        from scenarist.model.record import TraceRecord
        from scenarist.replay.step_replay import Replayer, ReplayOptions

        record = trace if isinstance(trace, TraceRecord) else TraceRecord.from_dict(trace)
        if not record.steps:
            from scenarist.errors import EmptyRecordingError

            raise EmptyRecordingError.for_trace(record.trace_id)
        if self.recorder.roots:
            raise RuntimeError("load_mock_outputs must be called before the run records steps")
        options = ReplayOptions(
            mock_llm_responses=True,
            on_divergence=on_divergence,
            on_missing="fail" if strict else "live",
            live_model_steps=live_model_steps,
        )
        self.is_replay = True
        self.recorder = RunRecorder(self.trace_id, Replayer(record, options))

    @property
    def steps(self) -> list[Span]:
        """The tracked steps recorded so far, flattened in pre-order: what the agent
        declared (``track_step``, ``step``), as Veval lists them. The LLM calls the capture
        recorded inside them are in :attr:`spans`; ``max_steps`` counts the same steps
        (:mod:`scenarist.model.usage`)."""
        return step_spans(self.recorder.roots)

    @property
    def spans(self) -> list[Span]:
        """Every span recorded so far, captured LLM calls included, in pre-order."""
        return self.recorder.spans()

    def set_metadata(self, key: str, value: Any) -> None:
        """Attach ``key: value`` to the run (not to a step)."""
        if not isinstance(key, str) or not key:
            raise TypeError(f"set_metadata key must be a non-empty string, got {key!r}")
        self.metadata[key] = value

    def step(self, name: str, *, input: Any = None, kind: str = "custom") -> _Step:
        """A step of this run, used with ``with`` / ``async with`` (see ``scenarist.step``)."""
        return _Step(name, input, kind)

    def track_step(
        self,
        name: str,
        input: Any,
        step: Callable[..., Any] | None = None,
        *,
        fn: Callable[..., Any] | None = None,
        close_cancelled: bool = False,
    ) -> Any:
        """Run ``step`` as the step ``name`` and return its result (sync ``step``; an async
        one is run to completion on a helper event loop). ``fn=`` is the older keyword.

        A step that raises is closed with status ``error``. One interrupted by something
        that is not an ``Exception`` (cancellation, ``KeyboardInterrupt``) stays
        ``running``, as in Veval, so an agent that times a step out and carries on still
        passes ``no_errors``; ``close_cancelled=True`` closes it as an error
        (``cancelled``), as ``step(...)`` always does."""
        fn = _step_fn(step, fn, "track_step")
        span, served = self._open(name, input, fn, "track_step")
        if span is None:
            return served
        recorder = self.recorder
        token = _current_span.set(span)
        try:
            result = fn(StepHandle(span)) if _wants_handle(fn) else fn()
            if result is not None and inspect.isawaitable(result):
                from scenarist._sync import run_sync

                awaitable = result

                async def finish() -> Any:
                    return await awaitable

                result = run_sync(finish)
        except Exception as error:
            _current_span.reset(token)
            recorder.close(span, error=error)
            raise
        except BaseException as error:
            _current_span.reset(token)
            if close_cancelled:
                recorder.close(span, error=error)
            raise
        _current_span.reset(token)
        recorder.close(span, output=result)
        return result

    async def track_step_async(
        self,
        name: str,
        input: Any,
        step: Callable[..., Any] | None = None,
        *,
        fn: Callable[..., Any] | None = None,
        close_cancelled: bool = False,
    ) -> Any:
        """Run ``step`` (sync or async) as the step ``name`` and return its result. A
        cancelled step stays ``running`` unless ``close_cancelled`` (see :meth:`track_step`)."""
        fn = _step_fn(step, fn, "track_step_async")
        span, served = self._open(name, input, fn, "track_step_async")
        if span is None:
            return served
        recorder = self.recorder
        token = _current_span.set(span)
        try:
            result = fn(StepHandle(span)) if _wants_handle(fn) else fn()
            if inspect.isawaitable(result):
                result = await result
        except Exception as error:
            _current_span.reset(token)
            recorder.close(span, error=error)
            raise
        except BaseException as error:
            _current_span.reset(token)
            if close_cancelled:
                recorder.close(span, error=error)
            raise
        _current_span.reset(token)
        recorder.close(span, output=result)
        return result

    def _open(self, name: str, input: Any, fn: Any, method: str) -> tuple[Span | None, Any]:
        """Open the span of a tracked call: ``(span, None)`` to run it, or ``(None, output)``
        when a replay serves the recorded output instead."""
        _check_callable(fn, method)
        if self.recorder.replayer is None:
            return self.recorder.open(name, "custom", input), None
        span, decision = open_step(self.recorder, name, "custom", input, can_skip=True)
        if decision is not None and decision.serve:
            self.recorder.close(span, output=decision.output)
            return None, decode_output(fn, decision.output, decision.recorded)
        return span, None
