"""scenarist: scenario tests for LLM agents.

The top level holds the names code written for giskard-checks and the Veval SDK import,
and a few of our own; everything else lives in the subpackages (``scenarist.checks``,
``scenarist.report``, ``scenarist.tracing``...). The Veval half loads on first use (see
:mod:`scenarist._lazy`), so scripts that only run scenarios import less.
"""

from typing import TYPE_CHECKING

from scenarist._lazy import lazy_attributes
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
    RequestError,
    ScenaristError,
    SendError,
    UserError,
)
from scenarist.interactions import Interact, InteractionSpec
from scenarist.model_defaults import (
    get_default_embedding_model,
    get_default_generator,
    get_default_judge,
    set_default_embedding_model,
    set_default_generator,
    set_default_judge,
)
from scenarist.paths import NoMatch, resolve
from scenarist.results import (
    CheckResult,
    GroupedSuiteResult,
    GroupStats,
    Metric,
    ScenarioResult,
    StepError,
    SuiteResult,
    TestCaseError,
    TestCaseResult,
)
from scenarist.runner import ScenarioRunner, TestCase, TestCaseRunner, get_runner
from scenarist.scenario import Scenario, Step, Target
from scenarist.suite import Suite
from scenarist.trace import Interaction, Span, Trace

if TYPE_CHECKING:
    from scenarist.checks.readability import Readability
    from scenarist.checks.rego import RegoPolicy
    from scenarist.checks.similarity import SemanticSimilarity
    from scenarist.checks.trace_assert import TraceAssert
    from scenarist.generators import (
        BaseLLMGenerator,
        DatasetInputGenerator,
        LLMGenerator,
        UserSimulator,
    )
    from scenarist.judges import (
        AnswerRelevance,
        BaseJudge,
        BaseLLMCheck,
        Conformity,
        Contradiction,
        Groundedness,
        LLMChatJudge,
        LLMCheckResult,
        LLMJudge,
        Toxicity,
        WithJudgeMixin,
    )
    from scenarist.providers.mixins import WithEmbeddingMixin, WithGeneratorMixin
    from scenarist.replay.snapshot_diff import (
        SnapshotAlignmentRow,
        SnapshotChange,
        SnapshotDiff,
        SnapshotOptions,
    )
    from scenarist.replay.snapshots import SnapshotData, SnapshotStep, compare_snapshots
    from scenarist.replay.step_replay import (
        ReplayBinding,
        ReplayFidelity,
        ReplayOptions,
        ReplayResult,
        UnusedRecording,
    )
    from scenarist.spy import WithSpy
    from scenarist.tracing import RunContext, StepHandle, TraceRecord, step
    from scenarist.veval.assertions import ITraceAssertion
    from scenarist.veval.client import Client, ClientOptions
    from scenarist.veval.default_client import get_client, run_scenario, run_scenario_async
    from scenarist.veval.items import ItemRunResult, ScenarioItem, ScenarioRunResult

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "WithSpy": "scenarist.spy",
        "AnswerRelevance": "scenarist.judges.checks",
        "BaseJudge": "scenarist.judges.judge",
        "BaseLLMCheck": "scenarist.judges.base",
        "BaseLLMGenerator": "scenarist.generators",
        "Client": "scenarist.veval.client",
        "ClientOptions": "scenarist.veval.client",
        "Conformity": "scenarist.judges.checks",
        "Contradiction": "scenarist.judges.checks",
        "DatasetInputGenerator": "scenarist.generators",
        "Groundedness": "scenarist.judges.checks",
        "ITraceAssertion": "scenarist.veval.assertions",
        "ItemRunResult": "scenarist.veval.items",
        "LLMChatJudge": "scenarist.judges.judge",
        "LLMCheckResult": "scenarist.judges.verdict",
        "LLMGenerator": "scenarist.generators",
        "LLMJudge": "scenarist.judges.checks",
        "ReplayBinding": "scenarist.replay.step_replay",
        "ReplayFidelity": "scenarist.replay.step_replay",
        "ReplayOptions": "scenarist.replay.step_replay",
        "ReplayResult": "scenarist.replay.step_replay",
        "RunContext": "scenarist.tracing",
        "ScenarioItem": "scenarist.veval.items",
        "ScenarioRunResult": "scenarist.veval.items",
        "Readability": "scenarist.checks.readability",
        "RegoPolicy": "scenarist.checks.rego",
        "SemanticSimilarity": "scenarist.checks.similarity",
        "SnapshotAlignmentRow": "scenarist.replay.snapshot_diff",
        "SnapshotChange": "scenarist.replay.snapshot_diff",
        "SnapshotData": "scenarist.replay.snapshots",
        "SnapshotDiff": "scenarist.replay.snapshot_diff",
        "SnapshotOptions": "scenarist.replay.snapshot_diff",
        "SnapshotStep": "scenarist.replay.snapshots",
        "StepHandle": "scenarist.tracing",
        "Toxicity": "scenarist.judges.checks",
        "TraceAssert": "scenarist.checks.trace_assert",
        "TraceRecord": "scenarist.tracing",
        "UserSimulator": "scenarist.generators",
        "WithEmbeddingMixin": "scenarist.providers.mixins",
        "WithGeneratorMixin": "scenarist.providers.mixins",
        "UnusedRecording": "scenarist.replay.step_replay",
        "WithJudgeMixin": "scenarist.judges.base",
        "compare_snapshots": "scenarist.replay.snapshots",
        "get_client": "scenarist.veval.default_client",
        "run_scenario": "scenarist.veval.default_client",
        "run_scenario_async": "scenarist.veval.default_client",
        "step": "scenarist.tracing",
    },
)

__all__ = [
    "AllOf",
    "AnswerRelevance",
    "AnyOf",
    "BaseJudge",
    "BaseLLMCheck",
    "BaseLLMGenerator",
    "Check",
    "CheckResult",
    "CheckStatus",
    "Client",
    "ClientOptions",
    "Conformity",
    "Contradiction",
    "DatasetInputGenerator",
    "Equals",
    "FnCheck",
    "GreaterThan",
    "GreaterThanEquals",
    "Groundedness",
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
    "LLMChatJudge",
    "LLMCheckResult",
    "LLMGenerator",
    "LLMJudge",
    "LessThan",
    "LessThanEquals",
    "Metric",
    "NoMatch",
    "Not",
    "NotEquals",
    "Readability",
    "RegexMatching",
    "RegoPolicy",
    "ReplayBinding",
    "ReplayFidelity",
    "ReplayOptions",
    "ReplayResult",
    "RequestError",
    "RunContext",
    "Scenario",
    "ScenarioItem",
    "ScenarioResult",
    "ScenarioRunResult",
    "ScenarioRunner",
    "ScenarioStatus",
    "ScenaristError",
    "SemanticSimilarity",
    "SendError",
    "SnapshotAlignmentRow",
    "SnapshotChange",
    "SnapshotData",
    "SnapshotDiff",
    "SnapshotOptions",
    "SnapshotStep",
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
    "Toxicity",
    "Trace",
    "TraceAssert",
    "TraceRecord",
    "UnusedRecording",
    "UserError",
    "UserSimulator",
    "WithEmbeddingMixin",
    "WithGeneratorMixin",
    "WithJudgeMixin",
    "WithSpy",
    "__version__",
    "compare_snapshots",
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
