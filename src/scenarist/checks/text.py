"""Text checks: ``StringMatching`` (a keyword is present) and ``RegexMatching``.

Both read the text under test from ``text`` when it is given, else from ``target_key``
(default ``trace.last.outputs``). A text that is not a string, or a key that resolves to
nothing, is an ERROR: the check could not look, which is different from "not found".
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import Field, model_validator

from scenarist.checks._normalize import NormalizationForm, normalize_text
from scenarist.checks._values import (
    DEFAULT_TARGET_KEY,
    KeyPath,
    NoMatch,
    exactly_one,
    not_a_string,
    optional,
    pick,
)
from scenarist.checks.base import Check, fresh_verdicts
from scenarist.model.paths import resolve
from scenarist.model.results import CheckResult
from scenarist.model.trace import Trace

__all__ = ["RegexMatching", "StringMatching"]


class _TextCheck(Check):
    """Shared ``text`` / ``target_key`` handling; the literal wins when given."""

    text: str | None = optional()
    target_key: KeyPath = DEFAULT_TARGET_KEY

    def _text_under_test(self, trace: Trace[Any, Any]) -> Any:
        return self.text if self.text is not None else resolve(trace, self.target_key)

    def _unusable(self, text: Any, other_name: str, other: Any) -> CheckResult | None:
        """An ERROR when the text or the other operand is missing or not a string."""
        if type(text) is str and type(other) is str:  # the common case, decided at once
            return None
        details = {"text": text, other_name: other}
        if isinstance(text, NoMatch):
            return CheckResult.error(f"No value found for text key '{text.key}'.", details=details)
        if isinstance(other, NoMatch):
            return CheckResult.error(
                f"No value found for {other_name} key '{other.key}'.", details=details
            )
        if not isinstance(text, str):
            return CheckResult.error(not_a_string("text", text), details=details)
        if not isinstance(other, str):
            return CheckResult.error(not_a_string(other_name, other), details=details)
        return None


#: ``StringMatching`` verdict messages by keyword. A message depends on the keyword only,
#: so every result that passes (or fails) on one shares one string (immutable) instead of
#: keeping its own: 86 bytes per kept result for a short keyword.
_FOUND: dict[str, str] = {}
_NOT_FOUND: dict[str, str] = {}
#: Keywords remembered at most (per table), and the longest one remembered.
MAX_MESSAGES, MAX_KEYWORD_LENGTH = 1024, 200


def _message(table: dict[str, str], verb: str, keyword: str, end: str) -> str:
    """The verdict message for ``keyword``, from ``table`` when it is there (a ``str``
    subclass may format differently, so only plain strings are looked up and kept)."""
    plain = type(keyword) is str
    if plain:
        message = table.get(keyword)
        if message is not None:
            return message
    message = f"The answer {verb} the keyword '{keyword}'{end}"
    if plain and len(table) < MAX_MESSAGES and len(keyword) <= MAX_KEYWORD_LENGTH:
        table[keyword] = message
    return message


@Check.register("string_matching")
class StringMatching(_TextCheck):
    """The text contains ``keyword`` (after normalisation; optionally ignoring case)."""

    keyword: str | None = optional()
    keyword_key: KeyPath | None = optional()
    normalization_form: NormalizationForm | None = "NFKC"
    case_sensitive: bool = True

    @model_validator(mode="after")
    def _one_keyword(self) -> Self:
        exactly_one("keyword", self.keyword is not None, "keyword_key", self.keyword_key)
        return self

    @fresh_verdicts
    def run(self, trace: Trace[Any, Any]) -> CheckResult:
        """Look for the keyword in the text."""
        text = self._text_under_test(trace)
        keyword = pick(trace, self.keyword, self.keyword_key)
        problem = self._unusable(text, "keyword", keyword)
        if problem is not None:
            return problem
        haystack = normalize_text(text, self.normalization_form)
        needle = normalize_text(keyword, self.normalization_form)
        if not self.case_sensitive:
            haystack, needle = haystack.casefold(), needle.casefold()
        details = {
            "text": text,
            "keyword": keyword,
            "normalization_form": self.normalization_form,
            "case_sensitive": self.case_sensitive,
        }
        if needle in haystack:
            return CheckResult.success(
                _message(_FOUND, "contains", keyword, "."),
                details=details,
            )
        return CheckResult.failure(
            _message(_NOT_FOUND, "does not contain", keyword, ""),
            details=details,
        )


@Check.register("regex_matching")
class RegexMatching(_TextCheck):
    """The text matches ``pattern`` somewhere (``regex.search``), within a time limit.

    The limit guards against catastrophic backtracking: a pattern such as ``(a+)+$`` can
    take longer than the age of the universe on a 40-character answer. Hitting it is an
    ERROR, as is a pattern that does not compile.
    """

    pattern: str | None = optional()
    pattern_key: KeyPath | None = optional()
    match_timeout_seconds: float = Field(default=2.0, gt=0)

    @model_validator(mode="after")
    def _one_pattern(self) -> Self:
        exactly_one("pattern", self.pattern is not None, "pattern_key", self.pattern_key)
        return self

    @fresh_verdicts
    def run(self, trace: Trace[Any, Any]) -> CheckResult:
        """Search the text for the pattern."""
        text = self._text_under_test(trace)
        pattern = pick(trace, self.pattern, self.pattern_key)
        problem = self._unusable(text, "pattern", pattern)
        if problem is not None:
            return problem
        details = {"text": text, "pattern": pattern}
        import regex  # lazy: only regex checks need it

        try:
            compiled = regex.compile(pattern)
        except regex.error as exc:
            return CheckResult.error(f"Invalid regex pattern '{pattern}': {exc}", details=details)
        try:
            found = compiled.search(text, timeout=self.match_timeout_seconds)
        except TimeoutError:
            return CheckResult.error(
                f"Matching the regex pattern '{pattern}' timed out after "
                f"{self.match_timeout_seconds:g}s; simplify the pattern or raise "
                "match_timeout_seconds.",
                details=details,
            )
        if found is not None:
            return CheckResult.success(
                f"Text matches the regex pattern '{pattern}'.", details=details
            )
        return CheckResult.failure(
            f"Text does not match the regex pattern '{pattern}'.", details=details
        )
