"""scenarist: scenario tests for LLM agents.

The top level holds the names code written for giskard-checks imports, and a few of our
own; everything else lives in the subpackages (``scenarist.checks``, ``scenarist.report``).
"""

from collections.abc import Callable
from typing import Any

from scenarist._status import CheckStatus, ScenarioStatus, TestCaseStatus
from scenarist._version import __version__
from scenarist.checks import (
    AllOf,
    AnyOf,
    Check,
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
    from_fn,
)
from scenarist.errors import (
    InputGenerationException,
    InteractionGenerationError,
    ScenaristError,
    TestCaseError,
    UserError,
)
from scenarist.interactions import Interact, InteractionSpec
from scenarist.paths import NoMatch, resolve
from scenarist.results import (
    CheckResult,
    GroupedSuiteResult,
    GroupStats,
    Metric,
    ScenarioResult,
    StepError,
    SuiteResult,
    TestCaseResult,
)
from scenarist.runner import ScenarioRunner, TestCase, TestCaseRunner, get_runner
from scenarist.scenario import Scenario, Step
from scenarist.settings import (
    get_default_embedding_model,
    get_default_generator,
    get_default_judge,
    set_default_embedding_model,
    set_default_generator,
    set_default_judge,
)
from scenarist.spy import WithSpy
from scenarist.suite import Suite
from scenarist.trace import Interaction, Span, Trace

Target = Callable[..., Any]
"""The system under test: a function of ``inputs`` (or ``(trace, inputs)``), sync or async."""

__all__ = [
    "AllOf",
    "AnyOf",
    "Check",
    "CheckResult",
    "CheckStatus",
    "Equals",
    "FnCheck",
    "GreaterThan",
    "GreaterThanEquals",
    "GroupStats",
    "GroupedSuiteResult",
    "InputGenerationException",
    "Interact",
    "Interaction",
    "InteractionGenerationError",
    "InteractionSpec",
    "JsonValid",
    "LessThan",
    "LessThanEquals",
    "Metric",
    "NoMatch",
    "Not",
    "NotEquals",
    "RegexMatching",
    "Scenario",
    "ScenarioResult",
    "ScenarioRunner",
    "ScenarioStatus",
    "ScenaristError",
    "Span",
    "Step",
    "StepError",
    "StringMatching",
    "Suite",
    "SuiteResult",
    "Target",
    "TestCase",
    "TestCaseError",
    "TestCaseResult",
    "TestCaseRunner",
    "TestCaseStatus",
    "Trace",
    "UserError",
    "WithSpy",
    "__version__",
    "from_fn",
    "get_default_embedding_model",
    "get_default_generator",
    "get_default_judge",
    "get_runner",
    "resolve",
    "set_default_embedding_model",
    "set_default_generator",
    "set_default_judge",
]
