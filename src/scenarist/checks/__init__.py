"""The check catalogue: every built-in check, registered by its ``kind``.

Importing this package registers the kinds, so ``Check.model_validate({"kind": ...})``
can rebuild any of them. Each family lives in its own module; this file only re-exports.
The trace assertions (``TraceAssert`` and its checks) load on first use, by name or by
kind (see :mod:`scenarist._lazy`).
"""

from typing import TYPE_CHECKING

from scenarist._lazy import lazy_attributes
from scenarist.checks.base import AnyCheck, Check

if TYPE_CHECKING:
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
    from scenarist.checks.readability import Readability
    from scenarist.checks.rego import RegoPolicy
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
    from scenarist.checks.tools import (
        ToolArgs,
        ToolCallCount,
        ToolCalled,
        ToolNotCalled,
        ToolOrder,
    )

_TRACE_ASSERTIONS = "scenarist.veval.trace_assert"
# The core catalogue loads on first use too: ``import scenarist`` then costs pydantic and
# the engine, not the class creation of every check (issue 15: import <= 0.2 s).
_CORE: dict[str, dict[str, str | None]] = {
    "scenarist.checks.comparison": {
        "ComparisonCheck": None,
        "Equals": "equals",
        "NotEquals": "not_equals",
        "LessThan": "less_than",
        "LessThanEquals": "less_than_equals",
        "GreaterThan": "greater_than",
        "GreaterThanEquals": "greater_than_equals",
    },
    "scenarist.checks.composite": {"AllOf": "all_of", "AnyOf": "any_of", "Not": "not"},
    "scenarist.checks.fn": {"FnCheck": "fn", "from_fn": None},
    "scenarist.checks.json_valid": {"JsonValid": "json_valid"},
    "scenarist.checks.text": {
        "StringMatching": "string_matching",
        "RegexMatching": "regex_matching",
    },
}
Check.register_lazy(
    {kind: module for module, names in _CORE.items() for kind in names.values() if kind}
)
Check.register_lazy(
    {"contains": "scenarist.checks.containers", "length_between": "scenarist.checks.containers"}
)
Check.register_lazy(
    dict.fromkeys(
        [
            "trace_no_errors",
            "trace_max_steps",
            "trace_min_steps",
            "trace_step_exists",
            "trace_max_cost",
            "trace_max_tokens",
            "trace_max_llm_calls",
            "trace_max_duration",
            "trace_step_duration",
            "trace_output_contains",
            "trace_tool_called",
            "trace_tool_not_called",
            "trace_tool_call_count",
            "trace_tool_order",
            "trace_tool_args",
            "trace_custom",
        ],
        _TRACE_ASSERTIONS,
    )
    | {"trace_matches_snapshot": "scenarist.veval.snapshot_check"}
    | dict.fromkeys(
        [
            "llm_judge",
            "groundedness",
            "contradiction",
            "conformity",
            "answer_relevance",
            "toxicity",
        ],
        "scenarist.judges.checks",
    )
    | {"trace_judge": "scenarist.judges.trace_judge"}
    | {"tool_trajectory": "scenarist.judges.trajectory_check"}
    | {"rego_policy": "scenarist.checks.rego"}
    | {"readability": "scenarist.checks.readability"}
)
__getattr__, __dir__ = lazy_attributes(
    __name__,
    {name: module for module, names in _CORE.items() for name in names}
    | {
        "Contains": "scenarist.checks.containers",
        "LengthBetween": "scenarist.checks.containers",
        "Readability": "scenarist.checks.readability",
        "RegoPolicy": "scenarist.checks.rego",
        "SemanticSimilarity": "scenarist.checks.similarity",
        "MaxCost": "scenarist.checks.spans",
        "MaxDuration": "scenarist.checks.spans",
        "MaxLlmCalls": "scenarist.checks.spans",
        "MaxSteps": "scenarist.checks.spans",
        "MaxTokens": "scenarist.checks.spans",
        "MinSteps": "scenarist.checks.spans",
        "NoErrors": "scenarist.checks.spans",
        "OutputContains": "scenarist.checks.spans",
        "SpanCheck": "scenarist.checks.spans",
        "StepDuration": "scenarist.checks.spans",
        "StepExists": "scenarist.checks.spans",
        "ToolArgs": "scenarist.checks.tools",
        "ToolCallCount": "scenarist.checks.tools",
        "ToolCalled": "scenarist.checks.tools",
        "ToolNotCalled": "scenarist.checks.tools",
        "ToolOrder": "scenarist.checks.tools",
    },
)

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
    "Readability",
    "RegexMatching",
    "RegoPolicy",
    "SemanticSimilarity",
    "SpanCheck",
    "StepDuration",
    "StepExists",
    "StringMatching",
    "ToolArgs",
    "ToolCallCount",
    "ToolCalled",
    "ToolNotCalled",
    "ToolOrder",
    "from_fn",
]
