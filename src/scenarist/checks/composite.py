"""Composite checks: ``AllOf``, ``AnyOf`` and ``Not``.

They run their inner checks directly, in order, awaiting those whose ``run`` is
``async``. An exception raised by an inner check propagates, exactly as if that check
had been used on its own; the runner decides whether it becomes an ERROR result.

Inner checks keep their own class when dumped (``checks`` is a list of ``AnyCheck``), so
a composite round-trips through JSON like any other check.
"""

from __future__ import annotations

from typing import Any

from scenarist.checks._values import run_inner
from scenarist.checks.base import AnyCheck, Check
from scenarist.checks.fn import omits_callables, reject_callables
from scenarist.model._construct import replace
from scenarist.model.results import CheckResult
from scenarist.model.trace import Trace

__all__ = ["AllOf", "AnyOf", "Not"]


class _Composite(Check):
    """Dump handling shared by the composites: functions inside are reported clearly."""

    def _inner(self) -> list[Check]:
        raise NotImplementedError

    def model_dump(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """As :meth:`pydantic.BaseModel.model_dump`; an inner ``FnCheck`` cannot go to JSON."""
        if kwargs.get("mode") == "json" and not omits_callables(kwargs.get("context")):
            reject_callables(self._inner())
        return super().model_dump(*args, **kwargs)

    def model_dump_json(self, *args: Any, **kwargs: Any) -> str:
        """As :meth:`pydantic.BaseModel.model_dump_json`; an inner ``FnCheck`` cannot go to JSON."""
        if not omits_callables(kwargs.get("context")):
            reject_callables(self._inner())
        return super().model_dump_json(*args, **kwargs)


@Check.register("all_of")
class AllOf(_Composite):
    """Every inner check passes.

    Stops at the first FAIL or ERROR and returns that result unchanged. SKIPs are
    ignored; when every inner check skipped, the result is SKIP. Otherwise PASS, with the
    inner messages joined by ``"; "`` and their metrics gathered. ``AllOf([])`` PASSes
    with "All checks passed.", as in giskard-checks, and its verdict is flagged
    ``vacuous``: it asserted nothing, and reports say so (``docs/design/checks.md``).
    """

    checks: list[AnyCheck]

    def _inner(self) -> list[Check]:
        return list(self.checks)

    async def run(self, trace: Trace[Any, Any]) -> CheckResult:
        """Run the inner checks in order until one fails or errors."""
        if not self.checks:
            return replace(CheckResult.success("All checks passed."), vacuous=True)
        passed: list[CheckResult] = []
        skipped: list[str] = []
        for check in self.checks:
            result = await run_inner(check, trace)
            if result.failed or result.errored:
                return result
            if result.passed:
                passed.append(result)
            elif result.message:
                skipped.append(result.message)
        if not passed:
            details = f" Details: {'; '.join(skipped)}" if skipped else ""
            return CheckResult.skip("All checks were skipped." + details)
        messages = [r.message for r in passed if r.message]
        return CheckResult.success(
            "; ".join(messages) if messages else "All checks passed.",
            metrics=[m for r in passed for m in r.metrics],
        )


@Check.register("any_of")
class AnyOf(_Composite):
    """At least one inner check passes.

    Returns the first PASS unchanged, without running the checks after it. An ERROR does
    not stop the search: a later PASS still wins (giskard-checks 1.0.6 returned the
    ERROR; that hid passing alternatives). When nothing passed: the first ERROR if there
    was one, else SKIP if every check skipped, else FAIL listing the failures.
    No checks → FAIL.
    """

    checks: list[AnyCheck]

    def _inner(self) -> list[Check]:
        return list(self.checks)

    async def run(self, trace: Trace[Any, Any]) -> CheckResult:
        """Run the inner checks in order until one passes."""
        messages: list[str] = []
        first_error: CheckResult | None = None
        all_skipped = True
        for check in self.checks:
            result = await run_inner(check, trace)
            if result.passed:
                return result
            if result.errored:
                if first_error is None:
                    first_error = result
                continue
            if not result.skipped:
                all_skipped = False
            if result.message:
                messages.append(result.message)
        if first_error is not None:
            return first_error
        if all_skipped and self.checks:
            details = f" Details: {'; '.join(messages)}" if messages else ""
            return CheckResult.skip("No checks passed and all were skipped." + details)
        if not messages:
            return CheckResult.failure("All checks failed.")
        return CheckResult.failure("No checks passed. Failures: " + "; ".join(messages))


@Check.register("not")
class Not(_Composite):
    """The inner check fails.

    PASS becomes FAIL and FAIL becomes PASS, keeping the inner details and metrics.
    ERROR and SKIP come back unchanged: a key that does not resolve must never be
    laundered into a pass.
    """

    check: AnyCheck

    def _inner(self) -> list[Check]:
        return [self.check]

    async def run(self, trace: Trace[Any, Any]) -> CheckResult:
        """Run the inner check and invert a PASS or FAIL."""
        result = await run_inner(self.check, trace)
        inner = f": {result.message}" if result.message else "."
        if result.passed:
            return CheckResult.failure(
                f"Expected check to fail, but it passed{inner}",
                details=dict(result.details),
                metrics=result.metrics,
            )
        if result.failed:
            return CheckResult.success(
                f"Check correctly failed (inverted){inner}",
                details=dict(result.details),
                metrics=result.metrics,
            )
        return result
