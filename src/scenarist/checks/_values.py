"""Helpers shared by the built-in checks: key fields, literal/key pairs, inner runs.

Most checks take the value they compare against either literally (``keyword="refund"``) or
from the trace (``keyword_key="trace.last.metadata.keyword"``). The helpers here keep
that pattern identical everywhere: the same validation message when both or neither are
given, the same rule for which one wins, and dumps that leave out what was not given.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator, Field

from scenarist.model._missing import MISSING, is_missing
from scenarist.model.paths import NoMatch, resolve, validate_path

if TYPE_CHECKING:
    from scenarist.checks.base import Check
    from scenarist.model.results import CheckResult
    from scenarist.model.trace import Trace

__all__ = [
    "DEFAULT_TARGET_KEY",
    "KeyPath",
    "NoMatch",
    "exactly_one",
    "is_none",
    "not_a_string",
    "optional",
    "optional_value",
    "pick",
    "run_inner",
    "type_name",
]

DEFAULT_TARGET_KEY = "trace.last.outputs"

KeyPath = Annotated[str, AfterValidator(validate_path)]
"""A path into the trace, checked when the check is built (see :mod:`scenarist.model.paths`)."""


def is_none(value: object) -> bool:
    """``exclude_if`` predicate: leave a ``None`` default out of dumps."""
    return value is None


def optional() -> Any:
    """A field that defaults to ``None`` and is left out of dumps while ``None``.

    For keys and literals where ``None`` means "not given"; dumps then read like the
    check was written (``{"kind": "equals", "expected_value": 1, ...}``).
    """
    return Field(default=None, exclude_if=is_none)


def optional_value() -> Any:
    """A field for any value, ``None`` included; :data:`MISSING` (not dumped) if not given."""
    return Field(default=MISSING, exclude_if=is_missing)


def exactly_one(literal_name: str, has_literal: bool, key_name: str, key: str | None) -> None:
    """Raise ``ValueError`` naming the pair unless exactly one of the two was given."""
    if has_literal == (key is not None):
        got = "both" if has_literal else "neither"
        raise ValueError(
            f"Exactly one of '{literal_name}' or '{key_name}' must be provided, "
            f"not both or neither (got {got})."
        )


def pick(trace: Trace[Any, Any], literal: Any, key: str | None) -> Any:
    """The value at ``key`` when a key was given (possibly a :class:`NoMatch`), else ``literal``.

    For "exactly one of" pairs, where :func:`exactly_one` ran at construction.
    """
    return literal if key is None else resolve(trace, key)


def type_name(value: object) -> str:
    """The bare type name used in messages: ``str``, ``int``, ``NoneType``."""
    return type(value).__name__


def not_a_string(field: str, value: object) -> str:
    """The message for a value that should have been a string."""
    return f"Value for {field} is not a string, expected string but got {type_name(value)}."


async def run_inner(check: Check, trace: Trace[Any, Any]) -> CheckResult:
    """Run ``check`` on ``trace``, awaiting the result when ``run`` is ``async``."""
    result = check.run(trace)
    if inspect.isawaitable(result):
        return await result
    return result
