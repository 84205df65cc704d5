"""Comparing two suite runs: what a change fixed, broke, or left failing.

Scenarios are matched by name. A scenario that passed before and does not now is
**broken**; one that did not pass and does now is **fixed**; one that did not pass in
either is **still failing**; **new** and **removed** scenarios exist in one run only;
**flaky changes** list scenarios whose flakiness (with ``repeat``) changed. A SKIP on
either side is not a verdict and is listed apart (``skipped``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

    from scenarist.results import ScenarioResult, SuiteResult

__all__ = ["RunComparison", "ScenarioChange", "compare_runs"]


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
        from scenarist.report import render

        yield from render(self)

    def print_report(self, console: Console | None = None) -> None:
        from scenarist.report import print_report

        print_report(self, console)


def _by_name(result: SuiteResult) -> dict[str, ScenarioResult]:
    return {r.scenario_name: r for r in result.results}


def compare_runs(baseline: SuiteResult, current: SuiteResult) -> RunComparison:
    """Classify every scenario of ``baseline`` and ``current`` (see the module docstring)."""
    before, after = _by_name(baseline), _by_name(current)
    buckets: dict[str, list[ScenarioChange]] = {
        name: [] for name in ("fixed", "broken", "still_failing", "new", "removed", "skipped")
    }
    flaky: list[ScenarioChange] = []
    unchanged = 0
    for name in [*before, *(n for n in after if n not in before)]:
        old, new = before.get(name), after.get(name)
        change = ScenarioChange(
            scenario_name=name,
            before=old.status.value if old else None,
            after=new.status.value if new else None,
        )
        if old is None:
            buckets["new"].append(change)
        elif new is None:
            buckets["removed"].append(change)
        elif "skip" in (change.before, change.after):
            buckets["skipped"].append(change)
        elif old.passed and new.passed:
            unchanged += 1
        elif new.passed:
            buckets["fixed"].append(change)
        elif old.passed:
            buckets["broken"].append(change)
        else:
            buckets["still_failing"].append(change)
        if old is not None and new is not None and old.flaky != new.flaky:
            flaky.append(change)
    fields: dict[str, Any] = dict(buckets)
    return RunComparison(
        **fields,
        flaky_changes=flaky,
        unchanged_passing=unchanged,
        baseline_pass_rate=baseline.pass_rate,
        pass_rate=current.pass_rate,
    )
