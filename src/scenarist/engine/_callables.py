"""Calling user code: binding parameters once, and treating ``def`` and ``async def`` alike.

User callables appear as interaction inputs, interaction outputs and targets. Which
arguments they receive is decided once, when the scenario is built (:func:`bind`), so a
callable that cannot work fails at construction with a ``TypeError`` rather than in the
middle of a run. The rules:

* parameters named ``trace``, ``inputs`` (and ``input_type`` where offered) are passed by
  name, in any order;
* otherwise arguments are passed by position, as giskard-checks documents: an outputs
  callable (or target) with one parameter receives ``inputs``, with two ``(trace, inputs)``;
  an inputs callable with one parameter receives ``trace``; zero parameters are allowed.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Binding", "bind", "is_async_callable"]

Role = Literal["inputs", "outputs"]

_POSITIONAL = {
    "inputs": (("trace",),),
    "outputs": (("inputs",), ("trace", "inputs")),
}
_NAMES = {"inputs": frozenset({"trace", "input_type"}), "outputs": frozenset({"trace", "inputs"})}


def is_async_callable(fn: Any) -> bool:
    """Whether calling ``fn`` returns a coroutine (functions, methods, callable objects)."""
    # Only real partials are unwrapped: a Mock has every attribute, ``func`` included, so
    # following any ``.func`` never ends on one.
    while isinstance(fn, functools.partial):
        fn = fn.func
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - callable objects
    )


@dataclass(frozen=True, slots=True)
class Binding:
    """How to call a user callable: which named values go to which parameters."""

    fn: Callable[..., Any]
    positional: tuple[str, ...]
    keywords: tuple[str, ...]
    is_async: bool
    invoke: Callable[[Any, Any], Any] = field(init=False, repr=False, compare=False)
    """``invoke(trace, inputs)``: the call of an outputs callable (or a target), made
    for its shape once, at bind time: a run's hot path builds no argument dict."""
    wants_trace: bool = field(init=False, repr=False, compare=False)
    """Whether the function receives the trace (so it must be built before the call)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "invoke", _invoker(self))
        wants = "trace" in self.positional or "trace" in self.keywords
        object.__setattr__(self, "wants_trace", wants)

    def call(self, **values: Any) -> Any:
        """Call the function with the bound values (the result may be awaitable)."""
        return self.fn(
            *[values[name] for name in self.positional],
            **{name: values[name] for name in self.keywords},
        )


def _invoker(binding: Binding) -> Callable[[Any, Any], Any]:
    fn = binding.fn
    match binding.positional, binding.keywords:
        case ("inputs",), ():
            return lambda _trace, inputs: fn(inputs)
        case ("trace", "inputs"), ():
            return lambda trace, inputs: fn(trace, inputs)
        case (), ("inputs",):
            return lambda _trace, inputs: fn(inputs=inputs)
        case (), ("trace", "inputs") | ("inputs", "trace"):
            return lambda trace, inputs: fn(trace=trace, inputs=inputs)
        case (), ():
            return lambda _trace, _inputs: fn()
    return lambda trace, inputs: binding.call(trace=trace, inputs=inputs, input_type=None)


def _describe(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def bind(
    fn: Callable[..., Any], role: Role, *, extra_names: frozenset[str] = frozenset()
) -> Binding:
    """Decide how ``fn`` will be called in ``role``; raise ``TypeError`` if it cannot be."""
    if not callable(fn):
        raise TypeError(f"expected a callable for {role}, got {type(fn).__name__}")
    names = _NAMES[role] | extra_names
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # some builtins and C callables: assume one argument
        return Binding(fn, _POSITIONAL[role][0], (), is_async_callable(fn))
    all_params = list(signature.parameters.values())
    var_positional = any(p.kind is p.VAR_POSITIONAL for p in all_params)
    params = [p for p in all_params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    required = [p for p in params if p.default is p.empty]
    is_async = is_async_callable(fn)

    if params and all(p.name in names for p in required) and any(p.name in names for p in params):
        positional = tuple(
            p.name for p in params if p.name in names and p.kind is p.POSITIONAL_ONLY
        )
        keywords = tuple(p.name for p in params if p.name in names and p.name not in positional)
        return Binding(fn, positional, keywords, is_async)

    positional_params = [
        p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    n_required = sum(1 for p in required if p in positional_params)
    if len(required) == n_required:  # no required keyword-only parameter we cannot fill
        for shape in _POSITIONAL[role]:
            if n_required <= len(shape) <= len(positional_params) or (
                var_positional and len(shape) >= n_required
            ):
                return Binding(fn, shape, (), is_async)
        if not required:
            return Binding(fn, (), (), is_async)
    expected = "(trace)" if role == "inputs" else "(inputs) or (trace, inputs)"
    raise TypeError(
        f"cannot call {_describe(fn)}{signature} as {role}: it needs parameters "
        f"{', '.join(p.name for p in required)}; write it as {expected}, "
        f"or name its parameters {' and '.join(sorted(names))}"
    )
