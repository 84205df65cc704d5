"""Steps: spans opened by agent code, with ``with``, ``async with`` or a decorator.

``step(...)`` works three ways and always finds the current run through a context
variable; outside a run it records nothing and costs next to nothing::

    with scenarist.step("classify", input=question, kind="llm") as handle:
        handle.set_meta("model", "gpt-4o-mini")

    async with scenarist.step("search", kind="tool"):
        ...

    @scenarist.step(kind="tool")
    async def search(query: str) -> list[str]: ...

A step that raises is closed with status ``error`` (and the message); a cancelled one
with ``cancelled``; the exception always propagates.
"""

from __future__ import annotations

import functools
import inspect
import sys
import typing
from collections.abc import Callable
from contextvars import Token
from typing import Any, ParamSpec, TypeVar, overload

from scenarist.model.trace import Span
from scenarist.tracing.recorder import OUTPUT_TYPE_KEY, Decision, RunRecorder
from scenarist.tracing.recorder import _recorder as _current_run
from scenarist.tracing.recorder import _span as _current_span

__all__ = ["StepHandle", "decode_output", "open_step", "step"]

_current_recorder = _current_run.get

P = ParamSpec("P")
R = TypeVar("R")

_TYPED = {"tokens_in": int, "tokens_out": int, "cost_usd": float, "model": str, "type": str}


class StepHandle:
    """What a step's code can say about the step: ``set_meta``, and its ``output``."""

    __slots__ = ("span",)

    def __init__(self, step: Span | None) -> None:
        """``StepHandle(step)``, as Veval builds it: a handle on the span ``step``
        (``None``: a handle that records nothing, outside any run)."""
        self.span = step

    @property
    def output(self) -> Any:
        return self.span.output if self.span is not None else None

    @output.setter
    def output(self, value: Any) -> None:
        """The step's output, for ``with step(...)`` blocks (decorated functions and
        ``track_step`` record their return value instead)."""
        if self.span is not None:
            self.span.output = value

    def set_meta(self, key: str, value: Any) -> None:
        """Record ``tokens_in``, ``tokens_out``, ``cost_usd``, ``model`` or ``type`` (the
        span kind) as typed fields; any other key goes to the span's metadata."""
        if not isinstance(key, str) or not key:
            raise TypeError(f"set_meta key must be a non-empty string, got {key!r}")
        expected = _TYPED.get(key)
        if expected is not None:
            ok = isinstance(value, expected) and not isinstance(value, bool)
            if expected is float:
                ok = isinstance(value, int | float) and not isinstance(value, bool)
            if not ok and value is not None:
                raise TypeError(
                    f"set_meta({key!r}, {value!r}): {key} must be {expected.__name__}, "
                    f"got {type(value).__name__}"
                )
        if self.span is None:
            return
        if key == "type":
            self.span.kind = value
        elif expected is not None:
            setattr(
                self.span, key, float(value) if key == "cost_usd" and value is not None else value
            )
        else:
            self.span.metadata[key] = value


def open_step(
    recorder: RunRecorder, name: str, kind: str, input: Any, *, can_skip: bool
) -> tuple[Span, Decision | None]:
    """Open a span for a tracked call; with a recording loaded, bind it (see
    :mod:`scenarist.replay.step_replay`). A returned decision with ``serve`` means: do not run
    the step's code, close the span with the recorded output."""
    span = recorder.open(name, kind, input)
    replayer = recorder.replayer
    if replayer is None:
        return span, None
    try:
        decision = replayer.bind(name, kind, input, can_skip=can_skip, span=span)
    except BaseException:
        recorder.discard(span)  # refused before its code ran: no step, as in Veval
        raise
    if decision.serve and decision.recorded is not None:
        replayer.serve(span, decision.recorded, recorder.new_span_id)
    return span, decision


def decode_output(fn: Callable[..., Any], value: Any, recorded: Span | None = None) -> Any:
    """A served output converted back to ``fn``'s declared return type, where it has one;
    else to the pydantic model the ``recorded`` step returned (an SDK's message object a
    step handed back comes back as that object, not as the JSON it was stored as)."""
    try:
        hint = typing.get_type_hints(fn).get("return")
    except Exception:
        hint = None
    if hint is None or hint is Any:
        hint = _recorded_model(recorded, value)
        if hint is None:
            return value
    from pydantic import TypeAdapter

    try:
        return TypeAdapter(hint).validate_python(value)
    except Exception:
        return value


def _recorded_model(recorded: Span | None, value: Any) -> type[Any] | None:
    """The model class named by the recording, if its module is loaded already: a stored
    trace never makes us import code."""
    if recorded is None or not isinstance(value, dict):
        return None
    name = recorded.metadata.get(OUTPUT_TYPE_KEY)
    if not isinstance(name, str):
        return None
    module_name, _, qualname = name.partition(":")
    found: Any = sys.modules.get(module_name)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    from pydantic import BaseModel

    return found if isinstance(found, type) and issubclass(found, BaseModel) else None


class _Step:
    """One use of :func:`step`: a (sync or async) context manager, or a decorator."""

    __slots__ = ("_recorder", "_span", "_token", "input", "kind", "name")

    def __init__(self, name: str | None, input: Any, kind: str) -> None:
        self.name = name
        self.input = input
        self.kind = kind
        self._recorder: RunRecorder | None = None
        self._span: Span | None = None
        self._token: Token[Span | None] | None = None

    def __enter__(self) -> StepHandle:
        recorder = self._recorder = _current_recorder()
        if recorder is None:
            return StepHandle(None)
        if self.name is None:
            raise TypeError("step() used as a context manager needs a name: step('classify')")
        if recorder.replayer is None:
            span = recorder.open(self.name, self.kind, self.input)
        else:
            span, _ = open_step(recorder, self.name, self.kind, self.input, can_skip=False)
        self._span = span
        self._token = _current_span.set(span)
        return StepHandle(span)

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: Any
    ) -> None:
        recorder, span = self._recorder, self._span
        if recorder is None or span is None:
            return
        if self._token is not None:
            _current_span.reset(self._token)
        recorder.close(span, output=span.output, error=error)

    async def __aenter__(self) -> StepHandle:
        return self.__enter__()

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: Any
    ) -> None:
        self.__exit__(kind, error, tb)

    def __call__(self, fn: Callable[P, R]) -> Callable[P, R]:
        name: str = self.name or str(getattr(fn, "__name__", "step"))
        kind = self.kind
        arguments = _arguments_of(fn)

        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def traced_async(*args: P.args, **kwargs: P.kwargs) -> Any:
                recorder = _current_recorder()
                if recorder is None:
                    return await fn(*args, **kwargs)
                return await _run_async(
                    recorder, name, kind, arguments(args, kwargs), fn, args, kwargs
                )

            return traced_async  # type: ignore[return-value]

        @functools.wraps(fn)
        def traced(*args: P.args, **kwargs: P.kwargs) -> R:
            recorder = _current_recorder()
            if recorder is None:
                return fn(*args, **kwargs)
            if recorder.replayer is None:
                span = recorder.open(name, kind, arguments(args, kwargs))
            else:
                span, decision = open_step(
                    recorder, name, kind, arguments(args, kwargs), can_skip=True
                )
                if decision is not None and decision.serve:
                    recorder.close(span, output=decision.output)
                    return decode_output(  # type: ignore[no-any-return]
                        fn, decision.output, decision.recorded
                    )
            token = _current_span.set(span)
            try:
                value = fn(*args, **kwargs)
            except BaseException as error:
                _current_span.reset(token)
                recorder.close(span, error=error)
                raise
            _current_span.reset(token)
            recorder.close(span, output=value)
            return value

        return traced


def _arguments_of(fn: Callable[..., Any]) -> Callable[[tuple[Any, ...], dict[str, Any]], Any]:
    """How a decorated step records its call's arguments: ``{parameter: value}`` as
    ``Signature.bind`` gives them, or ``{"args": [...], "kwargs": {...}}`` when they do not
    bind. Binding costs more than the rest of a span, so the usual call (positional
    arguments only, to a function without ``*args``, keyword-only or ``**kwargs``
    parameters) zips the names instead, which gives the same mapping."""
    signature = inspect.signature(fn)
    params = list(signature.parameters.values())
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    simple = all(p.kind in positional for p in params)
    names = tuple(p.name for p in params)
    required = sum(1 for p in params if p.default is p.empty)

    def arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        if simple and not kwargs and required <= len(args) <= len(names):
            return dict(zip(names, args, strict=False))
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return {"args": list(args), "kwargs": kwargs}
        return dict(bound.arguments)

    return arguments


async def _run_async(
    recorder: RunRecorder,
    name: str,
    kind: str,
    input: Any,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    span, decision = open_step(recorder, name, kind, input, can_skip=True)
    if decision is not None and decision.serve:
        recorder.close(span, output=decision.output)
        return decode_output(fn, decision.output, decision.recorded)
    with recorder.running(span) as outcome:
        outcome.value = await fn(*args, **kwargs)
    return outcome.value


@overload
def step(name: Callable[P, R], *, input: Any = None, kind: str = "custom") -> Callable[P, R]: ...
@overload
def step(name: str | None = None, *, input: Any = None, kind: str = "custom") -> _Step: ...
def step(
    name: str | Callable[P, R] | None = None, *, input: Any = None, kind: str = "custom"
) -> _Step | Callable[P, R]:
    """A traced step of the current run: ``with``/``async with`` it, or decorate a function.

    As a decorator (``@step`` or ``@step(kind="tool")``) the step is named after the
    function unless ``name`` is given, and records the call's arguments as input and the
    return value as output.
    """
    if callable(name):
        return _Step(None, input, kind)(name)
    if name is not None and not isinstance(name, str):
        raise TypeError(f"step name must be a string, got {name!r}")
    if not isinstance(kind, str) or not kind:
        raise TypeError(f"step kind must be a non-empty string like 'tool', got {kind!r}")
    return _Step(name, input, kind)
