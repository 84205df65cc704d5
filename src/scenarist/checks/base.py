"""The ``Check`` base class: a small typed config plus one ``run(trace)`` method."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Final, Self, TypeVar

from pydantic import BaseModel, SerializeAsAny

from scenarist.model._registry import KindRegistered
from scenarist.model.items import ITraceAssertion
from scenarist.model.record import TraceRecord
from scenarist.model.results import CheckResult
from scenarist.model.trace import Span, Trace
from scenarist.tracing.context import RunContext

__all__ = [
    "SPEC_CONTEXT",
    "SPEC_SLOT",
    "AnyCheck",
    "Check",
    "forget_spec",
    "fresh_verdicts",
    "has_fresh_verdicts",
    "omits_callables",
]

SPEC_CONTEXT: Final = {"scenarist_omit_callables": True}
"""Serialisation context under which a check dumps without its functions (``to_spec``)."""


def omits_callables(context: Any) -> bool:
    """Whether a serialisation ``context`` asks to leave functions out (see ``SPEC_CONTEXT``)."""
    return isinstance(context, dict) and bool(context.get("scenarist_omit_callables"))


class RefusesPredicatesInJson(BaseModel):
    """For a check whose fields may hold Python predicates (``ToolArgs``,
    ``ToolTrajectory``): a JSON dump calls :meth:`_reject_predicates` first (it raises,
    naming them, when there are any) unless the context asks to leave functions out.
    Put it before the check's base class."""

    def _reject_predicates(self) -> None:
        raise NotImplementedError

    def model_dump(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """As :meth:`pydantic.BaseModel.model_dump`; JSON mode with predicates raises."""
        if kwargs.get("mode") == "json" and not omits_callables(kwargs.get("context")):
            self._reject_predicates()
        return super().model_dump(*args, **kwargs)

    def model_dump_json(self, *args: Any, **kwargs: Any) -> str:
        """As :meth:`pydantic.BaseModel.model_dump_json`; raises when there are predicates."""
        if not omits_callables(kwargs.get("context")):
            self._reject_predicates()
        return super().model_dump_json(*args, **kwargs)


_Run = TypeVar("_Run", bound=Callable[..., Any])
_FRESH = "__scenarist_fresh_verdicts__"


def fresh_verdicts(run: _Run) -> _Run:
    """Mark a sync ``run`` whose every verdict is a new ``CheckResult`` with a new
    ``details`` dict, held by nothing else.

    The runner then stamps the check's identity and timing into that verdict in place
    instead of copying it into a second one (half the result objects of a run). Only for
    built-in checks that build their verdicts themselves: a subclass that overrides
    ``run`` loses the mark, so a verdict it caches or shares is never changed.
    """
    setattr(run, _FRESH, True)
    return run


def has_fresh_verdicts(check_type: type[Check]) -> bool:
    """Whether ``check_type.run`` was marked with :func:`fresh_verdicts`."""
    return getattr(check_type.run, _FRESH, False) is True


class Check(KindRegistered):
    """Base of every check.

    Subclass it, declare the parameters as fields, implement ``run(self, trace)`` (sync or
    ``async``) returning a :class:`CheckResult`, and register it::

        @Check.register("max_words")
        class MaxWords(Check):
            limit: int

            def run(self, trace: Trace) -> CheckResult:
                words = len(str(trace.last.outputs).split())
                if words <= self.limit:
                    return CheckResult.success(f"{words} words")
                return CheckResult.failure(f"{words} words, expected at most {self.limit}")

    A failed expectation is a ``CheckResult.failure``; a value that cannot be evaluated
    (missing key, wrong type) is a ``CheckResult.error``. Raise only for bugs.
    """

    _family = "check"
    # Where checks._spec.check_spec keeps the spec between verdicts: a slot, so it is
    # neither a field (dumps, equality) nor copied (model_copy, deepcopy and pickle start
    # without it).
    __slots__ = ("_scenarist_spec",)

    name: str | None = None
    description: str | None = None

    def run(self, trace: Trace[Any, Any]) -> CheckResult | Awaitable[CheckResult]:
        """Evaluate the check against ``trace``."""
        raise NotImplementedError(f"{type(self).__name__} must implement run(trace)")

    @property
    def label(self) -> str:
        """How reports name this check: its ``name``, else its kind."""
        return self.name or self.kind or type(self).__name__

    def to_spec(self) -> dict[str, Any]:
        """The check as JSON-ready data (with its ``kind``), as giskard-checks writes it:
        without name and description, ``None`` values left out at every level, functions
        left out, any other value JSON cannot hold as its ``str``."""
        data: dict[str, Any] = self.model_dump(
            mode="json",
            exclude={"name", "description"},
            exclude_none=True,
            fallback=str,
            context=SPEC_CONTEXT,
        )
        return data

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        SPEC_SLOT.__set__(self, None)  # none yet (an unset slot costs an exception to read)

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        forget_spec(self)

    def __delattr__(self, name: str) -> None:
        super().__delattr__(name)
        forget_spec(self)

    def copy_with(self, **changes: Any) -> Self:
        """A validated copy with some fields changed."""
        return self.model_validate({**self.model_dump(), **changes, "kind": self.kind})

    # -- Veval's ITraceAssertion -----------------------------------------------------------

    async def evaluate_async(self, ctx: RunContext | TraceRecord | Trace[Any, Any]) -> str | None:
        """Veval's assertion method: ``None`` when the check passes on the run, else its
        failure message (``"MaxCost: expected at most 0.1, got 0.2"``).

        ``ctx`` is the run context an item assertion is given (a ``TraceRecord`` or a
        ``Trace`` also do). A verdict of ERROR or SKIP reads ``[ERROR] message`` /
        ``[SKIP] message`` (never a pass); an exception the check raises is such an ERROR.
        """
        trace = _trace_of(ctx, self.label)
        try:
            verdict = self.run(trace)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except Exception as exc:
            verdict = CheckResult.error(f"Check '{self.label}' failed with error: {exc}")
        if not isinstance(verdict, CheckResult):
            verdict = CheckResult.error(
                f"Check '{self.label}' returned {type(verdict).__name__}, not a CheckResult"
            )
        return self.item_failure(verdict, ctx)

    def item_failure(self, verdict: CheckResult, ctx: Any = None) -> str | None:
        """How ``verdict`` reads as an item failure: ``None`` for a pass, the message for
        a failure, ``[ERROR] ...`` / ``[SKIP] ...`` otherwise (see :meth:`evaluate_async`).
        ``ctx`` is the item's run context (a judge keeps its verdict there)."""
        if verdict.status == "pass":
            return None
        prefix = "" if verdict.status == "fail" else f"[{verdict.status.upper()}] "
        return prefix + (verdict.message or f"{self.label} did not pass")


def _trace_of(ctx: Any, label: str) -> Trace[Any, Any]:
    """The trace an assertion reads from Veval's ``ctx`` (or a record, or a trace)."""
    if isinstance(ctx, RunContext):
        return ctx._trace(ctx.error)
    if isinstance(ctx, TraceRecord):
        return ctx.to_trace()
    if isinstance(ctx, Trace):
        return ctx
    steps = getattr(ctx, "steps", None)
    if isinstance(steps, list) and all(isinstance(s, Span) for s in steps):
        # Veval's assertions read ctx.steps alone: any object with steps will do
        output = getattr(ctx, "output", None)
        return TraceRecord.model_construct(steps=steps, output=output).to_trace()
    raise TypeError(
        f"{label}.evaluate_async(ctx) expects the run's context (a RunContext, as "
        f"run_scenario_async gives item assertions), a TraceRecord, a Trace, or an object "
        f"whose steps are spans; got {type(ctx).__name__}"
    )


# A check is a Veval assertion too: isinstance(TraceAssert.no_errors(), ITraceAssertion).
ITraceAssertion.register(Check)


AnyCheck = SerializeAsAny[Check]

#: The descriptor of ``Check``'s slot where ``checks._spec.check_spec`` keeps a spec.
SPEC_SLOT: Any = Check._scenarist_spec  # type: ignore[attr-defined]


def forget_spec(check: Check) -> None:
    """Drop the spec ``check_spec`` keeps for ``check`` (a field of it changed)."""
    SPEC_SLOT.__set__(check, None)
