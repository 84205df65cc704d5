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
    seen = set(statuses)
    if "error" in seen:
        return as_type("error")
    if "fail" in seen:
        return as_type("fail")
    if seen == {"skip"}:
        return as_type("skip")
    return as_type("pass")
