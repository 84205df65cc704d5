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
    ITraceAssertion,
    JsonValid,
    LessThan,
    LessThanEquals,
    Not,
    NotEquals,
    RegexMatching,
    StringMatching,
    TraceAssert,
    from_fn,
)
from scenarist.client import Client, get_client, run_scenario, run_scenario_async
from scenarist.errors import (
    InputGenerationException,
    InteractionGenerationError,
    ScenaristError,
    TestCaseError,
    UserError,
)
from scenarist.interactions import Interact, InteractionSpec
from scenarist.items import ItemRunResult, ScenarioItem, ScenarioRunResult
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
from scenarist.tracing import RunContext, StepHandle, TraceRecord, step

Target = Callable[..., Any]
"""The system under test: a function of ``inputs`` (or ``(trace, inputs)``), sync or async."""

__all__ = [
    "AllOf",
    "AnyOf",
    "Check",
    "CheckResult",
    "CheckStatus",
    "Client",
    "Equals",
    "FnCheck",
    "GreaterThan",
    "GreaterThanEquals",
    "GroupStats",
    "GroupedSuiteResult",
    "ITraceAssertion",
    "InputGenerationException",
    "Interact",
    "Interaction",
    "InteractionGenerationError",
    "InteractionSpec",
    "ItemRunResult",
    "JsonValid",
    "LessThan",
    "LessThanEquals",
    "Metric",
    "NoMatch",
    "Not",
    "NotEquals",
    "RegexMatching",
    "RunContext",
    "Scenario",
    "ScenarioItem",
    "ScenarioResult",
    "ScenarioRunResult",
    "ScenarioRunner",
    "ScenarioStatus",
    "ScenaristError",
    "Span",
    "Step",
    "StepError",
    "StepHandle",
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
    "TraceAssert",
    "TraceRecord",
    "UserError",
    "WithSpy",
    "__version__",
    "from_fn",
    "get_client",
    "get_default_embedding_model",
    "get_default_generator",
    "get_default_judge",
    "get_runner",
    "resolve",
    "run_scenario",
    "run_scenario_async",
    "set_default_embedding_model",
    "set_default_generator",
    "set_default_judge",
    "step",
]
