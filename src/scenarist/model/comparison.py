"""Comparing two suite runs: what a change fixed, broke, or left failing.

Scenarios are matched by name. A scenario that passed before and does not now is
**broken**; one that did not pass and does now is **fixed**; one that did not pass in
either is **still failing**; **new** and **removed** scenarios exist in one run only;
**flaky changes** list scenarios whose flakiness (with ``repeat``) changed. A SKIP on
either side is not a verdict and is listed apart (``skipped``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

from scenarist.model.results import report
from scenarist.model.status import pass_rate_of as _pass_rate_of

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

    from scenarist.model.results import ScenarioResult, SuiteResult

__all__ = [
    "Outcome",
    "RunComparison",
    "ScenarioChange",
    "ScenarioOutcome",
    "compare_outcomes",
    "compare_runs",
    "pass_rate_of",
]


class ScenarioChange(BaseModel):
    """One scenario across the two runs."""

    scenario_name: str
    before: str | None
    after: str | None


class RunComparison(BaseModel):
    """The difference between a baseline run and the current one."""

    fixed: list[ScenarioChange] = Field(default_factory=list)
    broken: list[ScenarioChange] = Field(default_factory=list)
    still_failing: list[ScenarioChange] = Field(default_factory=list)
    new: list[ScenarioChange] = Field(default_factory=list)
    removed: list[ScenarioChange] = Field(default_factory=list)
    skipped: list[ScenarioChange] = Field(default_factory=list)
    flaky_changes: list[ScenarioChange] = Field(default_factory=list)
    unchanged_passing: int = 0
    baseline_pass_rate: float | None = None
    pass_rate: float | None = None

    @property
    def has_regressions(self) -> bool:
        return bool(self.broken)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from report("render")(self)

    def print_report(self, console: Console | None = None) -> None:
        report("print_report")(self, console)


class Outcome(Protocol):
    """What the classification needs of one scenario's result: a ``ScenarioResult``, or
    a stored row (the server compares runs from its database)."""

    @property
    def scenario_name(self) -> str: ...
    @property
    def status_text(self) -> str: ...
    @property
    def is_flaky(self) -> bool: ...


class ScenarioOutcome(BaseModel):
    """A scenario's verdict without its steps (as the server stores it)."""

    scenario_name: str
    status_text: str
    is_flaky: bool = False


class _ResultOutcome:
    __slots__ = ("_result",)

    def __init__(self, result: ScenarioResult) -> None:
        self._result = result

    @property
    def scenario_name(self) -> str:
        return self._result.scenario_name

    @property
    def status_text(self) -> str:
        return self._result.status.value

    @property
    def is_flaky(self) -> bool:
        return self._result.flaky


def pass_rate_of(outcomes: Sequence[Outcome]) -> float | None:
    """Passed / non-skipped (an error counts), as ``SuiteResult.pass_rate``."""
    return _pass_rate_of(o.status_text for o in outcomes)


def compare_outcomes(
    baseline: Sequence[Outcome],
    current: Sequence[Outcome],
    *,
    baseline_pass_rate: float | None = None,
    pass_rate: float | None = None,
) -> RunComparison:
    """Classify two runs' scenario outcomes (see the module docstring); the pass rates
    default to :func:`pass_rate_of` each side."""
    before = {o.scenario_name: o for o in baseline}
    after = {o.scenario_name: o for o in current}
    buckets: dict[str, list[ScenarioChange]] = {
        name: [] for name in ("fixed", "broken", "still_failing", "new", "removed", "skipped")
    }
    flaky: list[ScenarioChange] = []
    unchanged = 0
    for name in [*before, *(n for n in after if n not in before)]:
        old, new = before.get(name), after.get(name)
        change = ScenarioChange(
            scenario_name=name,
            before=old.status_text if old else None,
            after=new.status_text if new else None,
        )
        if old is None:
            buckets["new"].append(change)
        elif new is None:
            buckets["removed"].append(change)
        elif "skip" in (change.before, change.after):
            buckets["skipped"].append(change)
        elif change.before == "pass" and change.after == "pass":
            unchanged += 1
        elif change.after == "pass":
            buckets["fixed"].append(change)
        elif change.before == "pass":
            buckets["broken"].append(change)
        else:
            buckets["still_failing"].append(change)
        if old is not None and new is not None and old.is_flaky != new.is_flaky:
            flaky.append(change)
    fields: dict[str, Any] = dict(buckets)
    return RunComparison(
        **fields,
        flaky_changes=flaky,
        unchanged_passing=unchanged,
        baseline_pass_rate=(
            baseline_pass_rate if baseline_pass_rate is not None else pass_rate_of(baseline)
        ),
        pass_rate=pass_rate if pass_rate is not None else pass_rate_of(current),
    )


def compare_runs(baseline: SuiteResult, current: SuiteResult) -> RunComparison:
    """Classify every scenario of ``baseline`` and ``current`` (see the module docstring)."""
    return compare_outcomes(
        [_ResultOutcome(r) for r in baseline.results],
        [_ResultOutcome(r) for r in current.results],
        baseline_pass_rate=baseline.pass_rate,
        pass_rate=current.pass_rate,
    )
