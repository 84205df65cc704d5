"""giskard-checks' ``builtin`` module: the built-in non-LLM checks under one import.

``from giskard.checks.builtin import Equals`` ports as ``from scenarist.builtin import
Equals`` (the judge checks are in :mod:`scenarist.judges`, as giskard's are in
``giskard.checks.judges``). Only re-exports; ``SemanticSimilarity``, ``RegoPolicy``
and ``Readability`` load on first use, as from ``scenarist`` itself.
"""

from typing import TYPE_CHECKING

from scenarist._lazy import lazy_attributes
from scenarist.checks import (
    AllOf,
    AnyOf,
    Equals,
    FnCheck,
    GreaterThan,
    GreaterThanEquals,
    JsonValid,
    LessThan,
    LessThanEquals,
    Not,
    NotEquals,
    RegexMatching,
    StringMatching,
)

if TYPE_CHECKING:
    from scenarist.checks.readability import Readability
    from scenarist.checks.rego import RegoPolicy
    from scenarist.checks.similarity import SemanticSimilarity

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "Readability": "scenarist.checks.readability",
        "RegoPolicy": "scenarist.checks.rego",
        "SemanticSimilarity": "scenarist.checks.similarity",
    },
)

__all__ = [
    "AllOf",
    "AnyOf",
    "Equals",
    "FnCheck",
    "GreaterThan",
    "GreaterThanEquals",
    "JsonValid",
    "LessThan",
    "LessThanEquals",
    "Not",
    "NotEquals",
    "Readability",
    "RegexMatching",
    "RegoPolicy",
    "SemanticSimilarity",
    "StringMatching",
]
