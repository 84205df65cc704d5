"""Is a judge judging? Warnings for a run's reports, and the calibrations kept per judge.

A tiny judge model can answer ``{"passed": true}`` to everything: every check passes and
nothing looks wrong. Two signals catch it, and every report (console, HTML) prints them:

- **constant verdicts**: a judge that gave :data:`MIN_VERDICTS` or more verdicts in a run,
  all the same (all pass or all fail), is flagged, with its score if that was constant too;
- **calibration**: ``scenarist judges calibrate`` keeps each judge's last calibration
  (accuracy, TPR, TNR, Cohen's κ over labelled cases) in ``$SCENARIST_HOME/
  calibrations.json``; a judge used in a run whose κ is below ``SCENARIST_MIN_JUDGE_KAPPA``
  (default :data:`MIN_KAPPA`), or undefined, is flagged.

A judge verdict is recognised from its result alone (``details`` with ``judge`` and
``verdict``, what :class:`~scenarist.judges.base.BaseLLMCheck` writes), so a run read back
from its log is checked the same way.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scenarist.judges.calibrate import CalibrationResult
    from scenarist.model.results import CheckResult, ScenarioResult

__all__ = [
    "JUDGE_KINDS",
    "MIN_KAPPA",
    "MIN_VERDICTS",
    "JudgeVerdict",
    "calibrations_path",
    "judge_verdicts",
    "judge_warnings",
    "load_calibrations",
    "min_kappa",
    "save_calibration",
]

MIN_VERDICTS = 3
"""Fewer verdicts than this prove nothing about a judge being constant."""
MIN_KAPPA = 0.4
"""Cohen's κ below this is "fair" agreement at best: a judge not to rely on."""
KAPPA_ENV = "SCENARIST_MIN_JUDGE_KAPPA"
JUDGE_KINDS = frozenset(
    {
        "llm_judge", "groundedness", "contradiction", "conformity", "answer_relevance",
        "toxicity", "trace_judge",
    }
)  # fmt: skip
"""The built-in judge checks' kinds: where a stored check row (kind, status, message)
is known to hold a judge's reason (the dashboard shows those reasons for passes too)."""


@dataclass(frozen=True)
class JudgeVerdict:
    """One judge check's verdict in a run: who judged, where, and what it said."""

    judge: str
    scenario: str
    check: str
    passed: bool
    reason: str
    score: float | None


def _checks(result: ScenarioResult) -> Iterator[CheckResult]:
    for step in result.steps:
        yield from step.results


def judge_verdicts(results: Iterable[ScenarioResult]) -> list[JudgeVerdict]:
    """Every judge verdict (PASS or FAIL) in ``results``, in order."""
    found = []
    for result in results:
        for check in _checks(result):
            details = check.details or {}
            judge, verdict = details.get("judge"), details.get("verdict")
            if not isinstance(judge, dict) or not isinstance(verdict, dict):
                continue
            if not isinstance(verdict.get("passed"), bool):
                continue
            score = verdict.get("score")
            found.append(
                JudgeVerdict(
                    judge=str(judge.get("name") or "judge"),
                    scenario=result.scenario_name,
                    check=check.label,
                    passed=verdict["passed"],
                    reason=str(verdict.get("reason") or ""),
                    score=float(score) if isinstance(score, int | float) else None,
                )
            )
    return found


def min_kappa() -> float:
    """The κ threshold: ``SCENARIST_MIN_JUDGE_KAPPA``, else :data:`MIN_KAPPA`."""
    raw = os.environ.get(KAPPA_ENV, "").strip()
    if not raw:
        return MIN_KAPPA
    try:
        return float(raw)
    except ValueError:
        from scenarist.errors import UserError

        raise UserError(f"{KAPPA_ENV}={raw!r} is not a number; set it to e.g. 0.4") from None


def judge_warnings(
    results: Iterable[ScenarioResult],
    *,
    calibrations: Mapping[str, Mapping[str, Any]] | None = None,
    threshold: float | None = None,
) -> list[str]:
    """One sentence per judge of the run that looks degenerate (see the module docstring).

    ``calibrations`` defaults to the saved ones (:func:`load_calibrations`).
    """
    verdicts = judge_verdicts(results)
    if not verdicts:
        return []
    by_judge: dict[str, list[JudgeVerdict]] = {}
    for verdict in verdicts:
        by_judge.setdefault(verdict.judge, []).append(verdict)
    saved = load_calibrations() if calibrations is None else calibrations
    limit = min_kappa() if threshold is None else threshold
    warnings = []
    for judge, given in by_judge.items():
        outcomes = {v.passed for v in given}
        if len(given) >= MIN_VERDICTS and len(outcomes) == 1:
            word = "pass" if given[0].passed else "fail"
            scores = {v.score for v in given}
            same_score = f" and the same score {given[0].score:g}" if (
                len(scores) == 1 and given[0].score is not None
            ) else ""  # fmt: skip
            warnings.append(
                f"judge {judge} gave the same verdict ({word}){same_score} to all "
                f"{len(given)} of its checks in this run: it may not be judging; calibrate "
                f"it on labelled cases: scenarist judges calibrate LABELS --judge {judge}"
            )
        calibration = saved.get(judge)
        if calibration is not None:
            kappa = calibration.get("kappa")
            cases = calibration.get("judged")
            if not isinstance(kappa, int | float) or kappa < limit:
                shown = "undefined" if not isinstance(kappa, int | float) else f"{kappa:.2f}"
                warnings.append(
                    f"judge {judge} agreed with human labels no better than chance: "
                    f"calibration κ {shown} < {limit:.2f} over {cases} labelled case(s) "
                    f"({calibration.get('calibrated_at', 'date unknown')}); do not trust its "
                    "verdicts until it calibrates better"
                )
    return warnings


def calibrations_path() -> Path:
    """``$SCENARIST_HOME/calibrations.json``."""
    from scenarist._home import scenarist_home

    return scenarist_home() / "calibrations.json"


def load_calibrations(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """The saved calibrations by judge name (none saved, or unreadable: empty)."""
    file = path or calibrations_path()
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, dict)}


def save_calibration(judge: str, result: CalibrationResult, path: Path | None = None) -> Path:
    """Keep ``result`` as ``judge``'s calibration (replacing the previous one)."""
    file = path or calibrations_path()
    data = load_calibrations(file)
    data[judge] = {
        "kappa": result.kappa,
        "accuracy": result.accuracy,
        "tpr": result.tpr,
        "tnr": result.tnr,
        "judged": result.judged,
        "errors": len(result.errors),
        "calibrated_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
    file.parent.mkdir(parents=True, exist_ok=True)
    temporary = file.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    temporary.replace(file)
    return file
