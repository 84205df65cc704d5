"""Comparison checks: ``Equals``, ``NotEquals``, ``LessThan`` and friends.

Each compares the value at ``target_key`` with an expected value, given literally
(``expected_value``, where ``None`` is a real value) or read from the trace
(``expected_value_key``). Both sides are normalised first (see
:mod:`scenarist.checks._normalize`), then compared with the Python operator.

With ``match``, the value under test must be a list, tuple or set and each item is
compared: ``"any"`` passes when at least one item satisfies the comparison, ``"all"`` when
every item does (an empty collection passes), ``"none"`` when no item does.

The six public classes differ only in their operator and wording; the logic lives once,
in :class:`ComparisonCheck`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, ClassVar, Literal, Self, TypeAlias

from pydantic import model_validator

from scenarist.checks._normalize import NormalizationForm, normalize
from scenarist.checks._values import (
    DEFAULT_TARGET_KEY,
    KeyPath,
    NoMatch,
    exactly_one,
    optional,
    optional_value,
    pick,
    type_name,
)
from scenarist.checks.base import Check, fresh_verdicts
from scenarist.model._missing import is_missing
from scenarist.model.paths import resolve
from scenarist.model.results import CheckResult
from scenarist.model.trace import Trace

__all__ = [
    "ComparisonCheck",
    "Equals",
    "GreaterThan",
    "GreaterThanEquals",
    "LessThan",
    "LessThanEquals",
    "Match",
    "NotEquals",
]

Match: TypeAlias = Literal["any", "all", "none"]
"""How a collection under test is compared item by item."""

_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}

_COLLECTIONS = (list, tuple, set, frozenset)


class _Unsupported(Exception):
    """The operator raised: the two values cannot be compared."""


class ComparisonCheck(Check):
    """Base of the comparison checks; subclasses set the operator and its wording."""

    symbol: ClassVar[str] = "=="
    phrase: ClassVar[str] = "equal to"

    target_key: KeyPath = DEFAULT_TARGET_KEY
    expected_value: Any = optional_value()
    expected_value_key: KeyPath | None = optional()
    normalization_form: NormalizationForm | None = "NFKC"
    match: Match | None = optional()

    @model_validator(mode="after")
    def _one_expected(self) -> Self:
        exactly_one(
            "expected_value",
            not is_missing(self.expected_value),
            "expected_value_key",
            self.expected_value_key,
        )
        return self

    def _holds(self, actual: Any, expected: Any) -> bool:
        try:
            return bool(_OPERATORS[self.symbol](actual, expected))
        except (TypeError, ValueError) as exc:
            raise _Unsupported from exc

    @fresh_verdicts
    def run(self, trace: Trace[Any, Any]) -> CheckResult:
        """Compare the value at ``target_key`` with the expected value."""
        expected = pick(trace, self.expected_value, self.expected_value_key)
        actual = resolve(trace, self.target_key)
        details = {"actual_value": actual, "expected_value": expected}
        if isinstance(expected, NoMatch):
            return CheckResult.error(
                f"No value found for expected value key '{expected.key}'.", details=details
            )
        if isinstance(actual, NoMatch):
            return CheckResult.error(
                f"No value found for key '{self.target_key}', "
                f"expected a value {self.phrase} {expected!r}.",
                details=details,
            )
        if self.match is None:
            return self._compare_whole(actual, expected, details)
        return self._compare_items(actual, expected, self.match, details)

    def _compare_whole(self, actual: Any, expected: Any, details: dict[str, Any]) -> CheckResult:
        form = self.normalization_form
        try:
            holds = self._holds(normalize(actual, form), normalize(expected, form))
        except _Unsupported:
            return CheckResult.error(
                f"Comparison not supported: {type_name(actual)} does not support "
                f"{self.symbol} comparison with {type_name(expected)}",
                details=details,
            )
        if holds:
            return CheckResult.success(
                f"The actual value {actual!r} is {self.phrase} the expected value {expected!r}.",
                details=details,
            )
        return CheckResult.failure(
            f"Expected value {self.phrase} {expected!r} but got {actual!r}", details=details
        )

    def _compare_items(
        self, actual: Any, expected: Any, match: Match, details: dict[str, Any]
    ) -> CheckResult:
        if not isinstance(actual, _COLLECTIONS):
            return CheckResult.error(
                f"Expected a list, set, or tuple at key '{self.target_key}' when match is "
                f"'{match}', but got {type_name(actual)}.",
                details=details,
            )
        form = self.normalization_form
        wanted = normalize(expected, form)
        items = list(actual)
        try:
            outcomes = [self._holds(normalize(item, form), wanted) for item in items]
        except _Unsupported:
            return CheckResult.error(
                f"Comparison not supported: items in {type_name(actual)} do not support "
                f"{self.symbol} comparison with {type_name(expected)}",
                details=details,
            )
        phrase, shown = self.phrase, repr(expected)
        if match == "any":
            if any(outcomes):
                return CheckResult.success(
                    f"At least one value in {actual!r} is {phrase} {shown}.", details=details
                )
            return CheckResult.failure(
                f"Expected at least one value {phrase} {shown} but none matched in {actual!r}.",
                details=details,
            )
        if match == "all":
            if all(outcomes):
                return CheckResult.success(
                    f"All values in {actual!r} are {phrase} {shown}.", details=details
                )
            return CheckResult.failure(
                f"Expected all values {phrase} {shown} but got {actual!r}.", details=details
            )
        matches = [item for item, hit in zip(items, outcomes, strict=True) if hit]
        if not matches:
            return CheckResult.success(
                f"No value in {actual!r} is {phrase} {shown}.", details=details
            )
        return CheckResult.failure(
            f"Expected no value {phrase} {shown} but found matches in {matches!r}.",
            details=details,
        )


@Check.register("equals")
class Equals(ComparisonCheck):
    """The value at ``target_key`` equals the expected value (after normalisation)."""

    symbol: ClassVar[str] = "=="
    phrase: ClassVar[str] = "equal to"


@Check.register("not_equals")
class NotEquals(ComparisonCheck):
    """The value at ``target_key`` differs from the expected value (after normalisation)."""

    symbol: ClassVar[str] = "!="
    phrase: ClassVar[str] = "not equal to"


@Check.register("less_than")
class LessThan(ComparisonCheck):
    """The value at ``target_key`` is less than the expected value."""

    symbol: ClassVar[str] = "<"
    phrase: ClassVar[str] = "less than"


@Check.register("less_than_equals")
class LessThanEquals(ComparisonCheck):
    """The value at ``target_key`` is less than or equal to the expected value."""

    symbol: ClassVar[str] = "<="
    phrase: ClassVar[str] = "less than or equal to"


@Check.register("greater_than")
class GreaterThan(ComparisonCheck):
    """The value at ``target_key`` is greater than the expected value."""

    symbol: ClassVar[str] = ">"
    phrase: ClassVar[str] = "greater than"


@Check.register("greater_than_equals")
class GreaterThanEquals(ComparisonCheck):
    """The value at ``target_key`` is greater than or equal to the expected value."""

    symbol: ClassVar[str] = ">="
    phrase: ClassVar[str] = "greater than or equal to"
