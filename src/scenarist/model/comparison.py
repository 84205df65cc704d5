"""Comparing two suite runs: what a change fixed, broke, or left failing.

Scenarios are matched by name. A scenario that passed before and does not now is
**broken**; one that did not pass and does now is **fixed**; one that did not pass in
either is **still failing**; **new** and **removed** scenarios exist in one run only;
**flaky changes** list scenarios whose flakiness (with ``repeat``) changed. A SKIP on
either side is not a verdict and is listed apart (``skipped``).

Those buckets compare the statuses shown. Whether a scenario **regressed** is a test:
for every scenario in both runs whose pass rate went down, the one-sided Fisher exact
test on its pass counts (baseline ``passed/runs`` against current ``passed/runs``, every
repeat counted; a run without repeats counts 1 or 0 of 1) gives a p-value
(:func:`scenarist.model.stats.fisher_less`); at or below ``alpha`` (0.05 by default) the
scenario is ``regressed``, above it ``changed_not_significant``. One run each side can
never be significant (a pass then a fail gives p = 0.5): regressions need repeats. See
``docs/design/statistics.md`` for the choice of Fisher over McNemar.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

from scenarist.model.results import report
from scenarist.model.stats import ALPHA, fisher_less
from scenarist.model.status import pass_rate_of as _pass_rate_of

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

    from scenarist.model.results import ScenarioResult, SuiteResult

__all__ = [
    "Outcome",
    "RateChange",
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


class RateChange(BaseModel):
    """A scenario whose pass rate went down, with the test of that drop."""

    scenario_name: str
    baseline_passed: int
    baseline_runs: int
    passed: int
    runs: int
    p_value: float
    """One-sided Fisher exact p-value of "the current rate is lower"."""

    def describe(self) -> str:
        """``s: 18/20 → 8/20 (p = 0.0012)``."""
        return (
            f"{self.scenario_name}: {self.baseline_passed}/{self.baseline_runs} → "
            f"{self.passed}/{self.runs} (p = {self.p_value:.4g})"
        )


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
    regressed: list[RateChange] = Field(default_factory=list)
    """Scenarios whose pass rate dropped significantly (p <= ``alpha``)."""
    changed_not_significant: list[RateChange] = Field(default_factory=list)
    """Scenarios whose pass rate dropped, but not significantly."""
    alpha: float = ALPHA

    @property
    def has_regressions(self) -> bool:
        """A scenario regressed significantly (not merely a status that changed)."""
        return bool(self.regressed)

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
    @property
    def pass_counts(self) -> tuple[int, int]: ...


def _counts_of(status: str) -> tuple[int, int]:
    """One run's ``(passed, runs)``: a SKIP is no run."""
    if status == "skip":
        return (0, 0)
    return (1 if status == "pass" else 0, 1)


class ScenarioOutcome(BaseModel):
    """A scenario's verdict without its steps (as the server stores it)."""

    scenario_name: str
    status_text: str
    is_flaky: bool = False
    repeats_passed: int | None = None
    repeats_total: int | None = None

    @property
    def pass_counts(self) -> tuple[int, int]:
        """``(passed, runs)`` over its repeats (its status alone without repeats)."""
        if self.repeats_passed is not None and self.repeats_total is not None:
            return (self.repeats_passed, self.repeats_total)
        return _counts_of(self.status_text)


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

    @property
    def pass_counts(self) -> tuple[int, int]:
        stats = self._result.repeat_stats
        if stats is not None:
            return (stats.passed, stats.runs)
        return _counts_of(self._result.status.value)


def pass_rate_of(outcomes: Sequence[Outcome]) -> float | None:
    """Passed / non-skipped (an error counts), as ``SuiteResult.pass_rate``."""
    return _pass_rate_of(o.status_text for o in outcomes)


def compare_outcomes(
    baseline: Sequence[Outcome],
    current: Sequence[Outcome],
    *,
    baseline_pass_rate: float | None = None,
    pass_rate: float | None = None,
    alpha: float = ALPHA,
) -> RunComparison:
    """Classify two runs' scenario outcomes (see the module docstring); the pass rates
    default to :func:`pass_rate_of` each side; ``alpha`` is the level of a regression."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1 (0.05 for 5%), got {alpha!r}")
    regressed: list[RateChange] = []
    not_significant: list[RateChange] = []
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
        if old is not None and new is not None:
            drop = _rate_drop(name, old.pass_counts, new.pass_counts)
            if drop is not None:
                (regressed if drop.p_value <= alpha else not_significant).append(drop)
    fields: dict[str, Any] = dict(buckets)
    return RunComparison(
        **fields,
        flaky_changes=flaky,
        unchanged_passing=unchanged,
        baseline_pass_rate=(
            baseline_pass_rate if baseline_pass_rate is not None else pass_rate_of(baseline)
        ),
        pass_rate=pass_rate if pass_rate is not None else pass_rate_of(current),
        regressed=regressed,
        changed_not_significant=not_significant,
        alpha=alpha,
    )


def _rate_drop(name: str, before: tuple[int, int], after: tuple[int, int]) -> RateChange | None:
    """The test of a scenario whose pass rate went down (``None`` when it did not)."""
    (old_passed, old_runs), (new_passed, new_runs) = before, after
    if not old_runs or not new_runs or new_passed * old_runs >= old_passed * new_runs:
        return None
    return RateChange(
        scenario_name=name,
        baseline_passed=old_passed,
        baseline_runs=old_runs,
        passed=new_passed,
        runs=new_runs,
        p_value=fisher_less(old_runs, old_passed, new_runs, new_passed),
    )


def compare_runs(
    baseline: SuiteResult, current: SuiteResult, *, alpha: float = ALPHA
) -> RunComparison:
    """Classify every scenario of ``baseline`` and ``current`` (see the module docstring)."""
    return compare_outcomes(
        [_ResultOutcome(r) for r in baseline.results],
        [_ResultOutcome(r) for r in current.results],
        baseline_pass_rate=baseline.pass_rate,
        pass_rate=current.pass_rate,
        alpha=alpha,
    )
