"""Item assertions: built-in checks and Veval's ``ITraceAssertion``, evaluated on a run.

A Veval-style item (and a replay) asserts with either a :class:`~scenarist.checks.base.Check`
(``TraceAssert.max_cost(0.05)``, ``Equals(...)``: run on the run's trace like any check)
or an :class:`ITraceAssertion` (Veval's interface: code called with the run context).
Each becomes a failure message or nothing; whatever an assertion does (raise, return a
non-string), it fails its own item and never takes the run down.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from scenarist.checks.base import Check
from scenarist.engine._user_code import stray_exit
from scenarist.model.items import ITraceAssertion

if TYPE_CHECKING:
    from scenarist.model.record import TraceRecord
    from scenarist.model.trace import Trace
    from scenarist.tracing.context import RunContext

__all__ = ["Assertion", "ITraceAssertion", "check_assertions", "failures_of"]


Assertion = Check | ITraceAssertion
"""What an item or a replay asserts with."""


def check_assertions(assertions: Sequence[Any], where: str) -> list[Assertion]:
    """``assertions`` as a list, or ``TypeError`` naming ``where`` and the fix."""
    if isinstance(assertions, str | bytes) or not isinstance(assertions, Sequence):
        raise TypeError(f"{where} must be a list of checks, got {type(assertions).__name__}")
    for assertion in assertions:
        if not isinstance(assertion, Check | ITraceAssertion):
            raise TypeError(
                f"{where} must hold checks such as TraceAssert.no_errors() or Equals(...), "
                f"or ITraceAssertion objects; got {type(assertion).__name__} (wrap a "
                "function of the trace with TraceAssert.custom(fn))"
            )
    return list(assertions)


async def _evaluate(assertion: Assertion, ctx: RunContext, trace: Trace[Any, Any]) -> str | None:
    """The failure message of one assertion, or ``None`` when it passed."""
    if isinstance(assertion, Check):
        from scenarist.engine.runner import run_check

        verdict = await run_check(assertion, trace, return_exception=True)
        return assertion.item_failure(verdict, ctx)
    try:
        message = await assertion.evaluate_async(ctx)
    except BaseException as exc:  # a stray exit or cancellation is this assertion's error
        error = exc if isinstance(exc, Exception) else stray_exit(exc, type(assertion).__name__)
        if error is None:
            raise
        return f"[ERROR] {type(assertion).__name__} raised {type(error).__name__}: {error}"
    if message is None or message == "":
        return None
    if not isinstance(message, str):
        return (
            f"[ERROR] {type(assertion).__name__}.evaluate_async must return a failure "
            f"message (str) or None, got {type(message).__name__}: {message!r}"
        )
    return message


async def failures_of(
    ctx: RunContext, record: TraceRecord, assertions: Sequence[Assertion]
) -> list[str]:
    """The failure messages of ``assertions`` on one run, in assertion order."""
    trace = record.to_trace()
    messages = [await _evaluate(assertion, ctx, trace) for assertion in assertions]
    return [m for m in messages if m is not None]
