"""``FnCheck`` and ``from_fn``: any Python function as a check.

The function receives the trace and returns ``True``/``False`` (or a full
:class:`CheckResult`), synchronously or not. It is the escape hatch for anything the
built-in checks do not express.

A function cannot be written to JSON, so a dump in JSON mode raises
:class:`~scenarist.errors.SerializationError` instead of writing ``"<function ...>"`` that
would load back as a broken check. :meth:`FnCheck.to_spec`, used to describe a check in
reports, leaves the function out instead.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import (
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    WithJsonSchema,
    model_serializer,
)

from scenarist.checks._values import optional
from scenarist.checks.base import SPEC_CONTEXT, Check, fresh_verdicts, omits_callables
from scenarist.errors import SerializationError
from scenarist.model._construct import replace
from scenarist.model.results import CheckResult
from scenarist.model.trace import Trace

__all__ = ["SPEC_CONTEXT", "FnCheck", "from_fn", "omits_callables", "reject_callables"]

if TYPE_CHECKING:
    CheckFunction = Callable[[Trace[Any, Any]], Any]
else:
    # Not ``Trace[Any, Any]`` at run time: parametrizing the generic model builds the
    # schemas of Trace, Interaction and Span (1.5 MiB) on the first FnCheck.
    CheckFunction = Callable[[Trace], Any]


def _unserialisable(check: FnCheck) -> SerializationError:
    fn_name = getattr(check.fn, "__name__", None) or repr(check.fn)
    label = f" {check.name!r}" if check.name else ""
    return SerializationError(
        f"FnCheck{label} wraps the Python callable {fn_name!r}, which cannot be written "
        "to JSON; dump it with mode='python', describe it with to_spec(), or replace it "
        "with a built-in check (or a registered Check subclass) to make it serialisable."
    )


def reject_callables(checks: list[Check]) -> None:
    """Raise :class:`SerializationError` if any of ``checks`` (recursively) is an ``FnCheck``.

    Containers call it before a JSON dump so the error is ours, not pydantic's wrapper.
    """
    for check in checks:
        if isinstance(check, FnCheck):
            raise _unserialisable(check)
        inner = [*(getattr(check, "checks", None) or []), getattr(check, "check", None)]
        reject_callables([c for c in inner if isinstance(c, Check)])


@Check.register("fn")
class FnCheck(Check):
    """A check backed by a function of the trace.

    ``True`` → PASS with ``success_message``, ``False`` → FAIL with ``failure_message``
    (both carry ``details``); a returned :class:`CheckResult` is used as is; anything
    else is a ``TypeError``, because a function returning ``None`` by mistake must not
    count as a verdict.
    """

    fn: Annotated[
        CheckFunction,
        WithJsonSchema({"description": "A Python callable; it cannot be written to JSON."}),
    ] = Field(exclude=True)
    success_message: str | None = optional()
    failure_message: str | None = optional()
    details: dict[str, Any] = Field(default_factory=dict)

    # For checks._spec: in a spec this serializer dumps as the base class's (the function
    # is left out), so the spec can be read from the fields.
    _spec_dumps_as_base: ClassVar[bool] = True

    # Replaces the base class's serializer of the same name: this one needs ``info`` to
    # tell a Python dump (keeps the function) from a JSON one (refuses it).
    @model_serializer(mode="wrap")
    def _dump_with_kind(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> Any:
        data: dict[str, Any] = handler(self)
        if not info.mode_is_json():
            return {"kind": self.kind, "fn": self.fn, **data}
        if not omits_callables(info.context):
            raise _unserialisable(self)
        return {"kind": self.kind, **data}

    def model_dump(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """As :meth:`pydantic.BaseModel.model_dump`; JSON mode raises ``SerializationError``."""
        if kwargs.get("mode") == "json" and not omits_callables(kwargs.get("context")):
            raise _unserialisable(self)
        return super().model_dump(*args, **kwargs)

    def model_dump_json(self, *args: Any, **kwargs: Any) -> str:
        """Always raises :class:`SerializationError` unless dumping for a spec."""
        if not omits_callables(kwargs.get("context")):
            raise _unserialisable(self)
        return super().model_dump_json(*args, **kwargs)

    @fresh_verdicts
    def run(self, trace: Trace[Any, Any]) -> CheckResult | Awaitable[CheckResult]:
        """Call the function and turn its answer into a verdict.

        Sync on purpose: a sync function (the common case) gives the verdict with no
        coroutine in between; an async one gives an awaitable of it. Either way
        ``await check.run(trace)`` works, as in giskard-checks (a verdict awaits to itself).
        """
        outcome = self.fn(trace)
        if type(outcome) is not bool and inspect.isawaitable(outcome):
            return self._verdict_later(outcome)
        return self._verdict(outcome)

    async def _verdict_later(self, pending: Awaitable[Any]) -> CheckResult:
        return self._verdict(await pending)

    def _verdict(self, outcome: Any) -> CheckResult:
        if isinstance(outcome, CheckResult):
            # The function may keep and return this verdict again: hand out a copy that
            # the runner can stamp in place (see ``fresh_verdicts``).
            return replace(outcome, details=dict(outcome.details))
        if isinstance(outcome, bool):
            if outcome:
                return CheckResult.success(self.success_message, details=dict(self.details))
            return CheckResult.failure(self.failure_message, details=dict(self.details))
        raise TypeError(
            "from_fn callable must return bool or CheckResult (or awaitable thereof), "
            f"but got {type(outcome).__name__} (value: {outcome!r})"
        )


def from_fn(
    fn: CheckFunction,
    *,
    name: str | None = None,
    description: str | None = None,
    success_message: str | None = None,
    failure_message: str | None = None,
    details: dict[str, Any] | None = None,
) -> FnCheck:
    """Build an :class:`FnCheck` from ``fn(trace) -> bool | CheckResult`` (sync or async).

    >>> check = from_fn(lambda trace: len(trace.interactions) > 0, name="has_turns")
    >>> check.label
    'has_turns'
    """
    return FnCheck(
        fn=fn,
        name=name,
        description=description,
        success_message=success_message,
        failure_message=failure_message,
        details=details or {},
    )
