"""Outcome enums, the status sets, the one roll-up rule, the pass rate and the summary line.

Every level (check, step, scenario, suite; the CLI, the pytest plugin, the console report,
the store and the dashboard) counts statuses through this module, so "passed", "failing"
and "pass rate" mean one thing everywhere. The enums are the source; the sets hold their
members (a ``StrEnum`` member equals and hashes as its string, so a plain ``"fail"`` read
back from a database is found too).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import TypeVar

__all__ = [
    "DECIDED",
    "FAILING",
    "SKIPPED",
    "CheckStatus",
    "RateVerdict",
    "ScenarioStatus",
    "TestCaseStatus",
    "format_rate",
    "is_failing",
    "pass_rate",
    "pass_rate_of",
    "rollup",
    "summary_counts",
    "summary_line",
]


class _Status(str, Enum):  # noqa: UP042  (giskard prints `CheckStatus.PASS`, not StrEnum's value)
    """A status: equal to (and hashed as) its plain value; printed as giskard-checks prints.

    ``str(status)``, ``f"{status}"`` and ``format(status)`` give ``CheckStatus.PASS`` (a
    ``(str, Enum)``, as in giskard-checks); ``.value`` is the plain ``"pass"``, which is what
    reports, the run log, JSON and the store write.
    """

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __format__(self, format_spec: str) -> str:
        return format(str(self), format_spec)


class CheckStatus(_Status):
    """Outcome of one check."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    SKIP = "skip"


class TestCaseStatus(_Status):
    """Outcome of one scenario step (its interactions, then its checks)."""

    __test__ = False  # not a pytest test class

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    SKIP = "skip"


class ScenarioStatus(_Status):
    """Outcome of a scenario: rolled up from its steps."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    SKIP = "skip"


class RateVerdict(_Status):
    """The statistical verdict on a scenario's repeats against a required pass rate.

    Not a giskard-checks status: it sits beside ``ScenarioStatus`` (which keeps PASS /
    FAIL / ERROR / SKIP) on ``ScenarioResult.repeat_stats``. PASS: the pass rate is shown
    to be at least the required rate; FAIL: shown to be below it; INCONCLUSIVE: the runs
    cannot tell (never a pass). See :mod:`scenarist.model.stats`.
    """

    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"


S = TypeVar("S", CheckStatus, TestCaseStatus, ScenarioStatus)


def rollup(statuses: Iterable[str], as_type: type[S]) -> S:
    """Any ERROR → ERROR; else any FAIL → FAIL; else all SKIP → SKIP; else PASS (empty → PASS)."""
    failed = False
    seen = False
    only_skips = True
    for status in statuses:
        seen = True
        if status == "error":
            return as_type.ERROR
        if status == "fail":
            failed = True
        elif status != "skip":
            only_skips = False
    if failed:
        return as_type.FAIL
    if seen and only_skips:
        return as_type.SKIP
    return as_type.PASS


#: Statuses that count against a run: the check (or scenario) failed, or could not run.
FAILING: frozenset[str] = frozenset({CheckStatus.FAIL, CheckStatus.ERROR})
#: The status of what was not evaluated.
SKIPPED: frozenset[str] = frozenset({CheckStatus.SKIP})
#: Statuses the pass rate is computed over (everything but SKIP; an ERROR counts).
DECIDED: frozenset[str] = frozenset({CheckStatus.PASS, CheckStatus.FAIL, CheckStatus.ERROR})


def is_failing(status: str) -> bool:
    """FAIL or ERROR."""
    return status in FAILING


def pass_rate(passed: int, decided: int) -> float | None:
    """``passed / decided`` (decided = passed + failed + errored); ``None`` when 0."""
    return passed / decided if decided else None


def pass_rate_of(statuses: Iterable[str]) -> float | None:
    """The pass rate of some statuses: passed over the non-skipped ones."""
    passed = decided = 0
    for status in statuses:
        if status in DECIDED:
            decided += 1
            passed += status == CheckStatus.PASS
    return pass_rate(passed, decided)


def format_rate(rate: float | None) -> str:
    """A pass rate as shown to people: ``50.0%``, or ``—`` when nothing was evaluated."""
    return "—" if rate is None else f"{rate * 100:.1f}%"


def summary_counts(
    total: int, passed: int, failed: int, errored: int, skipped: int, *, budget: int = 0
) -> str:
    """``4 scenarios: 2 passed, 2 failed, 0 errored, 0 skipped`` (``1 scenario: ...``);
    ``budget``: scenarios the budget did not start, said after ``errored`` when any (they
    are not in ``errored`` here)."""
    stopped = f", {budget} not started (budget)" if budget else ""
    return (
        f"{total} scenario{'' if total == 1 else 's'}: {passed} passed, {failed} failed, "
        f"{errored} errored{stopped}, {skipped} skipped"
    )


def summary_line(
    total: int,
    passed: int,
    failed: int,
    errored: int,
    skipped: int,
    rate: float | None,
    *,
    budget: int = 0,
) -> str:
    """The counts and the pass rate: what the CLI, the pytest plugin and the dashboard print,
    ``4 scenarios: 2 passed, 2 failed, 0 errored, 0 skipped | pass rate 50.0%``."""
    counts = summary_counts(total, passed, failed, errored, skipped, budget=budget)
    return f"{counts} | pass rate {format_rate(rate)}"
