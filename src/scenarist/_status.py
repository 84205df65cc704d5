"""Outcome enums and the one roll-up rule every result level uses."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import TypeVar

__all__ = ["CheckStatus", "ScenarioStatus", "TestCaseStatus", "rollup"]


class CheckStatus(StrEnum):
    """Outcome of one check."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    SKIP = "skip"


class TestCaseStatus(StrEnum):
    """Outcome of one scenario step (its interactions, then its checks)."""

    __test__ = False  # not a pytest test class

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    SKIP = "skip"


class ScenarioStatus(StrEnum):
    """Outcome of a scenario: rolled up from its steps."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    SKIP = "skip"


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
