"""Results built directly from the models, with fixed durations so reports are stable."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from scenarist.model.results import (
    CheckResult,
    ScenarioResult,
    StepError,
    SuiteResult,
    TestCaseResult,
)
from scenarist.model.trace import Interaction, Span, Trace


def stamped(result: CheckResult, kind: str, name: str | None = None) -> CheckResult:
    """A check result carrying the keys the runner stamps into ``details``."""
    details = {
        **result.details,
        "duration_ms": 0,
        "check_kind": kind,
        "check_name": name,
        "check_description": None,
    }
    return result.model_copy(update={"details": details})


def trace(*pairs: tuple[object, object], spans: list[Span] | None = None) -> Trace[Any, Any]:
    interactions: list[Interaction[Any, Any]] = [Interaction(inputs=i, outputs=o) for i, o in pairs]
    if spans and interactions:
        interactions[-1] = interactions[-1].model_copy(update={"spans": spans})
    return Trace(interactions=interactions)


def passing() -> ScenarioResult:
    ok = stamped(CheckResult.success("The actual value 'hello' is equal to 'hello'."), "equals")
    return ScenarioResult(
        scenario_name="passing",
        steps=[TestCaseResult(results=[ok], duration_ms=3, last_interaction_index=0)],
        final_trace=trace(("hi", "hello")),
        duration_ms=3,
        tags=["team:a"],
    )


def failing() -> ScenarioResult:
    bad = stamped(CheckResult.failure("Expected value equal to 'right' but got 'wrong'"), "equals")
    skipped = stamped(CheckResult.skip("Step 2 was skipped due to previous failure"), "equals")
    return ScenarioResult(
        scenario_name="failing",
        steps=[
            TestCaseResult(results=[bad], duration_ms=1, last_interaction_index=0),
            TestCaseResult(results=[skipped], duration_ms=0, last_interaction_index=0),
        ],
        final_trace=trace(("q1", "wrong")),
        duration_ms=1,
        tags=["team:b"],
    )


def erroring() -> ScenarioResult:
    boom = CheckResult.error(
        "Check 'boom_check' failed with error: kaboom",
        details={
            "traceback": "Traceback ...\nValueError: kaboom\n",
            "exception_type": "ValueError",
        },
    )
    return ScenarioResult(
        scenario_name="erroring",
        steps=[
            TestCaseResult(
                results=[stamped(boom, "fn", "boom_check")], duration_ms=2, last_interaction_index=0
            )
        ],
        final_trace=trace(("q", "a")),
        duration_ms=2,
        tags=["team:a", "kind:err"],
    )


def nochecks() -> ScenarioResult:
    return ScenarioResult(
        scenario_name="nochecks",
        steps=[TestCaseResult(results=[], duration_ms=0, last_interaction_index=0)],
        final_trace=trace(("q", "a")),
        duration_ms=0,
    )


def outputs_raised() -> ScenarioResult:
    """A step whose outputs callable raised: a step error and a skipped check."""
    skipped = stamped(
        CheckResult.skip("Checks were skipped due to input generation failure"), "equals"
    )
    error = StepError(
        message="division by zero",
        exception_type="ZeroDivisionError",
        traceback="Traceback ...\nZeroDivisionError: division by zero\n",
        phase="outputs",
    )
    return ScenarioResult(
        scenario_name="outputs_raised",
        steps=[TestCaseResult(results=[skipped], duration_ms=1, error=error)],
        duration_ms=1,
    )


def with_spans() -> ScenarioResult:
    """A failing agent scenario whose trace carries LLM and tool spans with cost."""
    llm = Span(
        span_id="2",
        parent_id="1",
        name="chat",
        kind="llm",
        model="gpt-x",
        duration_ms=40,
        tokens_in=120,
        tokens_out=30,
        cost_usd=0.0012,
    )
    tool = Span(span_id="3", parent_id="1", name="search", kind="tool", duration_ms=15)
    agent = Span(span_id="1", name="agent", kind="agent", duration_ms=60, children=[llm, tool])
    bad = stamped(CheckResult.failure("The answer does not cite a source."), "llm_judge", "cites")
    return ScenarioResult(
        scenario_name="agent_with_tools",
        steps=[TestCaseResult(results=[bad], duration_ms=61, last_interaction_index=0)],
        final_trace=trace(
            ("What is the capital of France? " * 8, {"answer": "Paris"}), spans=[agent]
        ),
        duration_ms=61,
        tags=["team:a"],
    )


STARTED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def suite_of(*results: ScenarioResult, **kwargs: object) -> SuiteResult:
    return SuiteResult(
        results=list(results), duration_ms=10, suite_name="demo_suite", started_at=STARTED, **kwargs
    )
