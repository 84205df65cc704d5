"""The ``Check`` base class: a small typed config plus one ``run(trace)`` method."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final, Self, TypeVar

from pydantic import SerializeAsAny

from scenarist.model._registry import KindRegistered
from scenarist.model.results import CheckResult
from scenarist.model.trace import Trace

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


AnyCheck = SerializeAsAny[Check]

#: The descriptor of ``Check``'s slot where ``checks._spec.check_spec`` keeps a spec.
SPEC_SLOT: Any = Check._scenarist_spec  # type: ignore[attr-defined]


def forget_spec(check: Check) -> None:
    """Drop the spec ``check_spec`` keeps for ``check`` (a field of it changed)."""
    SPEC_SLOT.__set__(check, None)
