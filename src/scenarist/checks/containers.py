"""Checks on collections and strings: ``Contains`` and ``LengthBetween`` (beyond giskard).

``Contains`` is the sugar users reach for when ``Equals(match="any")`` reads backwards:
"the tool list contains ``search``", "the answer's JSON has a ``citations`` key".
``LengthBetween`` bounds the size of an answer, a list of tool calls or a dict.
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import Field, model_validator

from scenarist.checks._normalize import NormalizationForm, normalize
from scenarist.checks._values import (
    DEFAULT_TARGET_KEY,
    KeyPath,
    NoMatch,
    exactly_one,
    is_none,
    optional,
    optional_value,
    pick,
    type_name,
)
from scenarist.checks.base import Check
from scenarist.model._missing import is_missing
from scenarist.model.paths import resolve
from scenarist.model.results import CheckResult
from scenarist.model.trace import Trace

__all__ = ["Contains", "LengthBetween"]


@Check.register("contains")
class Contains(Check):
    """The value at ``target_key`` contains ``item``.

    A string contains a substring, a list, tuple or set contains an element, a dict
    contains a key. Both sides are normalised first, as in
    :class:`~scenarist.checks.comparison.Equals`. Anything else under test is an ERROR.
    """

    target_key: KeyPath = DEFAULT_TARGET_KEY
    item: Any = optional_value()
    item_key: KeyPath | None = optional()
    normalization_form: NormalizationForm | None = "NFKC"

    @model_validator(mode="after")
    def _one_item(self) -> Self:
        exactly_one("item", not is_missing(self.item), "item_key", self.item_key)
        return self

    def run(self, trace: Trace[Any, Any]) -> CheckResult:
        """Look for the item in the value under test."""
        key = self.target_key
        item = pick(trace, self.item, self.item_key)
        actual = resolve(trace, key)
        details = {"actual_value": actual, "item": item}
        if isinstance(item, NoMatch):
            return CheckResult.error(f"No value found for item key '{item.key}'.", details=details)
        if isinstance(actual, NoMatch):
            return CheckResult.error(
                f"No value found for key '{key}', expected a value containing {item!r}.",
                details=details,
            )
        if not isinstance(actual, str | list | tuple | set | frozenset | dict):
            return CheckResult.error(
                f"Expected a string, list, tuple, set or dict at key '{key}', "
                f"but got {type_name(actual)}.",
                details=details,
            )
        if isinstance(actual, str) and not isinstance(item, str):
            return CheckResult.error(
                f"Value at key '{key}' is a string, so the item must be a string too, "
                f"but got {type_name(item)}.",
                details=details,
            )
        haystack = normalize(actual, self.normalization_form)
        try:
            found = normalize(item, self.normalization_form) in haystack
        except TypeError as exc:
            return CheckResult.error(
                f"Cannot look for {item!r} in the {type_name(actual)} at key '{key}': {exc}",
                details=details,
            )
        if found:
            return CheckResult.success(
                f"The value at key '{key}' contains {item!r}.", details=details
            )
        return CheckResult.failure(
            f"Expected the value at key '{key}' to contain {item!r} but got {actual!r}",
            details=details,
        )


@Check.register("length_between")
class LengthBetween(Check):
    """``len()`` of the value at ``target_key`` lies within inclusive bounds.

    Give ``min_length``, ``max_length`` or both. Strings are measured in characters, as
    given (not normalised). A value without a length is an ERROR.
    """

    target_key: KeyPath = DEFAULT_TARGET_KEY
    min_length: int | None = Field(default=None, ge=0, exclude_if=is_none)
    max_length: int | None = Field(default=None, ge=0, exclude_if=is_none)

    @model_validator(mode="after")
    def _bounds(self) -> Self:
        if self.min_length is None and self.max_length is None:
            raise ValueError(
                "LengthBetween needs at least one bound: give 'min_length', 'max_length' or both."
            )
        if (
            self.min_length is not None
            and self.max_length is not None
            and self.min_length > self.max_length
        ):
            raise ValueError(
                f"'min_length' ({self.min_length}) is greater than 'max_length' "
                f"({self.max_length}); swap them."
            )
        return self

    @property
    def _bound(self) -> str:
        low, high = self.min_length, self.max_length
        if low is not None and high is not None:
            return f"between {low} and {high}"
        return f"at least {low}" if low is not None else f"at most {high}"

    def run(self, trace: Trace[Any, Any]) -> CheckResult:
        """Measure the value and compare with the bounds."""
        key = self.target_key
        actual = resolve(trace, key)
        details: dict[str, Any] = {
            "actual_value": actual,
            "min_length": self.min_length,
            "max_length": self.max_length,
        }
        if isinstance(actual, NoMatch):
            return CheckResult.error(
                f"No value found for key '{key}', expected a length {self._bound}.",
                details=details,
            )
        try:
            length = len(actual)
        except TypeError:
            return CheckResult.error(
                f"Value at key '{key}' has no length: got {type_name(actual)}.", details=details
            )
        details["length"] = length
        too_short = self.min_length is not None and length < self.min_length
        too_long = self.max_length is not None and length > self.max_length
        if too_short or too_long:
            return CheckResult.failure(
                f"Expected a length {self._bound} at key '{key}' but got {length}",
                details=details,
            )
        return CheckResult.success(
            f"The value at key '{key}' has length {length}, {self._bound}.", details=details
        )
