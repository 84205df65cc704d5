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
from scenarist.checks.spans import (
    MaxCost,
    MaxDuration,
    MaxLlmCalls,
    MaxSteps,
    MaxTokens,
    MinSteps,
    NoErrors,
    OutputContains,
    SpanCheck,
    StepDuration,
    StepExists,
)
from scenarist.checks.text import RegexMatching, StringMatching
from scenarist.checks.tools import ToolArgs, ToolCallCount, ToolCalled, ToolNotCalled, ToolOrder
from scenarist.checks.trace_assert import CustomAssertion, ITraceAssertion, TraceAssert

__all__ = [
    "AllOf",
    "AnyCheck",
    "AnyOf",
    "Check",
    "ComparisonCheck",
    "Contains",
    "CustomAssertion",
    "Equals",
    "FnCheck",
    "GreaterThan",
    "GreaterThanEquals",
    "ITraceAssertion",
    "JsonValid",
    "LengthBetween",
    "LessThan",
    "LessThanEquals",
    "MaxCost",
    "MaxDuration",
    "MaxLlmCalls",
    "MaxSteps",
    "MaxTokens",
    "MinSteps",
    "NoErrors",
    "Not",
    "NotEquals",
    "OutputContains",
    "RegexMatching",
    "SpanCheck",
    "StepDuration",
    "StepExists",
    "StringMatching",
    "ToolArgs",
    "ToolCallCount",
    "ToolCalled",
    "ToolNotCalled",
    "ToolOrder",
    "TraceAssert",
    "from_fn",
]
