"""The check catalogue: every built-in check, registered by its ``kind``.

Importing this package registers the kinds, so ``Check.model_validate({"kind": ...})``
can rebuild any of them. Each family lives in its own module; this file only re-exports.
"""

from scenarist.checks.base import AnyCheck, Check
from scenarist.checks.comparison import (
    ComparisonCheck,
    Equals,
    GreaterThan,
    GreaterThanEquals,
    LessThan,
    LessThanEquals,
    NotEquals,
)
from scenarist.checks.composite import AllOf, AnyOf, Not
from scenarist.checks.containers import Contains, LengthBetween
from scenarist.checks.fn import FnCheck, from_fn
from scenarist.checks.json_valid import JsonValid
from scenarist.checks.text import RegexMatching, StringMatching

__all__ = [
    "AllOf",
    "AnyCheck",
    "AnyOf",
    "Check",
    "ComparisonCheck",
    "Contains",
    "Equals",
    "FnCheck",
    "GreaterThan",
    "GreaterThanEquals",
    "JsonValid",
    "LengthBetween",
    "LessThan",
    "LessThanEquals",
    "Not",
    "NotEquals",
    "RegexMatching",
    "StringMatching",
    "from_fn",
]
