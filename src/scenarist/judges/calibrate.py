"""``calibrate``: how often a judge check agrees with human labels.

Run a judge check over traces a person has labelled pass or fail and compare. "Pass" is
the positive class: TPR is the share of human passes the judge passes, TNR the share of
human fails the judge fails, and Cohen's κ corrects raw agreement for chance (1 is
perfect, 0 is what guessing with the same pass rates would give). Cases the judge could
not evaluate (ERROR or SKIP) are listed apart and left out of every rate, so a broken
judge cannot look accurate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scenarist._sync import run_sync
from scenarist.checks.base import Check
from scenarist.errors import UserError
from scenarist.model.results import CheckResult
from scenarist.model.trace import Trace

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

__all__ = ["CalibrationResult", "Disagreement", "LabelledCase", "calibrate", "calibrate_sync"]


@dataclass(frozen=True)
class LabelledCase:
    """A trace and the verdict a person gave it (``expected=True`` means it should pass)."""

    trace: Trace[Any, Any]
    expected: bool
    name: str | None = None


@dataclass(frozen=True)
class Disagreement:
    """A case where the judge and the label differ, or the judge could not decide."""

    index: int
    name: str | None
    expected: bool
    status: str
    message: str | None


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


@dataclass(frozen=True)
class CalibrationResult:
    """Agreement between a judge check and human labels (see the module docstring)."""

    true_positives: int
    false_negatives: int
    true_negatives: int
    false_positives: int
    disagreements: list[Disagreement] = field(default_factory=list)
    errors: list[Disagreement] = field(default_factory=list)
    results: list[CheckResult] = field(default_factory=list, repr=False)

    @property
    def judged(self) -> int:
        """Cases the judge gave a PASS or FAIL."""
        positives = self.true_positives + self.false_negatives
        return positives + self.true_negatives + self.false_positives

    @property
    def accuracy(self) -> float | None:
        return _ratio(self.true_positives + self.true_negatives, self.judged)

    @property
    def tpr(self) -> float | None:
        """True-positive rate (sensitivity): judged pass among labelled pass."""
        return _ratio(self.true_positives, self.true_positives + self.false_negatives)

    @property
    def tnr(self) -> float | None:
        """True-negative rate (specificity): judged fail among labelled fail."""
        return _ratio(self.true_negatives, self.true_negatives + self.false_positives)

    @property
    def kappa(self) -> float | None:
        """Cohen's κ; ``None`` when undefined (both sides always gave the same verdict)."""
        n = self.judged
        if not n:
            return None
        observed = (self.true_positives + self.true_negatives) / n
        label_pass = (self.true_positives + self.false_negatives) / n
        judge_pass = (self.true_positives + self.false_positives) / n
        chance = label_pass * judge_pass + (1 - label_pass) * (1 - judge_pass)
        if chance == 1:
            return None
        return (observed - chance) / (1 - chance)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from scenarist.judges._calibration_view import render_calibration

        yield from render_calibration(self)


def _case(item: Any, index: int) -> LabelledCase:
    if isinstance(item, LabelledCase):
        return item
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], Trace):
        return LabelledCase(trace=item[0], expected=bool(item[1]))
    raise UserError(
        f"labelled case {index} must be a LabelledCase or a (trace, expected_pass) tuple, "
        f"got {item!r}"
    )


async def calibrate(
    judge_check: Check,
    labelled_cases: Iterable[LabelledCase | tuple[Trace[Any, Any], bool]],
    *,
    max_concurrency: int = 8,
) -> CalibrationResult:
    """Run ``judge_check`` on every case (``max_concurrency`` at a time) and compare."""
    from scenarist.engine.runner import run_check

    cases = [_case(item, i) for i, item in enumerate(labelled_cases)]
    if not cases:
        raise UserError("calibrate needs at least one labelled case")
    limit = asyncio.Semaphore(max_concurrency)

    async def judge_one(case: LabelledCase) -> CheckResult:
        async with limit:
            return await run_check(judge_check, case.trace, return_exception=True)

    results = await asyncio.gather(*(judge_one(case) for case in cases))
    counts = {"tp": 0, "fn": 0, "tn": 0, "fp": 0}
    disagreements: list[Disagreement] = []
    errors: list[Disagreement] = []
    for index, (case, result) in enumerate(zip(cases, results, strict=True)):
        entry = Disagreement(index, case.name, case.expected, result.status.value, result.message)
        if not (result.passed or result.failed):
            errors.append(entry)
            continue
        key = ("t" if result.passed == case.expected else "f") + ("p" if result.passed else "n")
        counts[key] += 1
        if result.passed != case.expected:
            disagreements.append(entry)
    return CalibrationResult(
        true_positives=counts["tp"],
        false_negatives=counts["fn"],
        true_negatives=counts["tn"],
        false_positives=counts["fp"],
        disagreements=disagreements,
        errors=errors,
        results=list(results),
    )


def calibrate_sync(
    judge_check: Check,
    labelled_cases: Iterable[LabelledCase | tuple[Trace[Any, Any], bool]],
    *,
    max_concurrency: int = 8,
) -> CalibrationResult:
    """:func:`calibrate` from sync code."""
    return run_sync(calibrate, judge_check, labelled_cases, max_concurrency=max_concurrency)
