"""Veval's assertion objects: every ``TraceAssert`` result is an ``ITraceAssertion`` with
``evaluate_async(ctx)`` (``None`` or Veval's failure message), and stays a check that works
in a giskard-style scenario."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from scenarist import (
    Check,
    CheckResult,
    ITraceAssertion,
    RunContext,
    Scenario,
    ScenarioItem,
    SnapshotData,
    TraceAssert,
)
from scenarist.model.trace import Span, Trace
from scenarist.testing import TestClient

pytestmark = pytest.mark.anyio


def refund_run() -> RunContext:
    """A finished run: an llm step (cost 0.2) then a tool step, answer 'refund ok'."""
    ctx = RunContext("tr_objects", "where is my refund?")

    def classify(handle: Any) -> str:
        handle.set_meta("type", "llm")
        handle.set_meta("cost_usd", 0.2)
        return "refund"

    def lookup(handle: Any) -> dict[str, int]:
        handle.set_meta("type", "tool")
        return {"order": 42}

    ctx.track_step("classify", ctx.input, classify)
    ctx.track_step("lookup_order", "refund", lookup)
    ctx.output = "refund ok"
    return ctx


BUILT_INS = {
    "no_errors": (TraceAssert.no_errors, (), None),
    "max_steps": (TraceAssert.max_steps, (1,), "MaxSteps: expected at most 1 steps, got 2"),
    "step_exists": (TraceAssert.step_exists, ("pay",), "StepExists: step 'pay' not found"),
    "tool_called": (
        TraceAssert.tool_called,
        ("classify",),
        "ToolCalled: no tool step named 'classify' was found",
    ),
    "max_cost": (TraceAssert.max_cost, (0.1,), "MaxCost: expected at most 0.1, got 0.2"),
    "output_contains": (
        TraceAssert.output_contains,
        ("refund ok",),
        "OutputContains: no step output contains 'refund ok'",
    ),
}


@pytest.mark.parametrize("method", sorted(BUILT_INS))
async def test_every_built_in_is_an_itraceassertion_evaluated_on_a_run(method: str) -> None:
    build, args, message = BUILT_INS[method]
    assertion = build(*args)
    assert isinstance(assertion, ITraceAssertion)
    assert isinstance(assertion, Check)  # still a check
    assert await assertion.evaluate_async(refund_run()) == message


async def test_passing_built_ins_return_none() -> None:
    ctx = refund_run()
    for assertion in [
        TraceAssert.max_steps(2),
        TraceAssert.step_exists("lookup_order"),
        TraceAssert.tool_called("lookup_order"),
        TraceAssert.max_cost(0.2),
        TraceAssert.output_contains("order"),
        TraceAssert.max_duration(60_000),
        TraceAssert.matches_snapshot(SnapshotData.from_context(ctx, name="baseline")),
    ]:
        assert await assertion.evaluate_async(ctx) is None, assertion


async def test_matches_snapshot_evaluates_on_the_context() -> None:
    baseline = SnapshotData.from_context(refund_run(), name="baseline")
    changed = RunContext("tr_changed", "q")
    changed.track_step("classify", "another prompt", lambda: "x")
    message = await TraceAssert.matches_snapshot(baseline).evaluate_async(changed)
    assert message is not None
    assert message.startswith("MatchesSnapshot: ")


async def test_agent_errors_are_read_from_the_finished_run() -> None:
    client = TestClient()

    async def agent(ctx: RunContext) -> str:
        ctx.track_step("fine", None, lambda: "ok")
        raise ValueError("gave up")

    seen: dict[str, Any] = {}

    class Keep(ITraceAssertion):
        async def evaluate_async(self, ctx: Any) -> str | None:
            seen["steps"] = await TraceAssert.no_errors().evaluate_async(ctx)
            seen["agent"] = await TraceAssert.no_errors(agent_errors=True).evaluate_async(ctx)
            return None

    await client.run_scenario_async("errors", agent, [Keep()], items=[ScenarioItem(input="q")])
    assert seen["steps"] is None  # Veval's rule: the steps only
    assert seen["agent"] == "NoErrors: found 1 agent error(s): ValueError: gave up"


async def test_judge_evaluated_directly_keeps_its_verdict_in_the_context() -> None:
    client = TestClient().with_judge_mock("polite", False, 0.2, "rude")
    ctx = refund_run()
    message = await TraceAssert.judge(client, "polite").evaluate_async(ctx)
    assert message == "Judge: polite (score 0.20) — rude"
    assert [(j["criteria"], j["passed"]) for j in ctx.judgments] == [("polite", False)]
    unmocked = await TraceAssert.judge(client, "concise").evaluate_async(ctx)
    assert unmocked is not None
    assert unmocked.startswith("Judge: evaluation failed — ")


async def test_evaluate_async_reads_a_record_or_a_trace_and_refuses_anything_else() -> None:
    record = refund_run().to_record()
    assert await TraceAssert.max_steps(1).evaluate_async(record) == (
        "MaxSteps: expected at most 1 steps, got 2"
    )
    assert await TraceAssert.step_exists("classify").evaluate_async(record.to_trace()) is None
    with pytest.raises(TypeError, match=r"expects the run's context .* got dict"):
        await TraceAssert.no_errors().evaluate_async({"steps": []})


async def test_evaluate_async_reads_any_object_with_steps_as_veval_does() -> None:
    built = SimpleNamespace(steps=[Span(name="hand-made", output="x")], output=None)
    assert await TraceAssert.step_exists("hand-made").evaluate_async(built) is None
    assert await TraceAssert.max_steps(0).evaluate_async(built) == (
        "MaxSteps: expected at most 0 steps, got 1"
    )
    with pytest.raises(TypeError, match="whose steps are spans; got SimpleNamespace"):
        await TraceAssert.no_errors().evaluate_async(SimpleNamespace(steps=["not a span"]))


class Explodes(Check):
    def run(self, trace: Trace[Any, Any]) -> CheckResult:
        raise RuntimeError("check bug")


class Skips(Check):
    def run(self, trace: Trace[Any, Any]) -> CheckResult:
        return CheckResult.skip("nothing to check")


async def test_an_error_or_a_skip_never_reads_as_a_pass() -> None:
    ctx = refund_run()
    assert await Explodes(name="explodes").evaluate_async(ctx) == (
        "[ERROR] Check 'explodes' failed with error: check bug"
    )
    assert await Skips().evaluate_async(ctx) == "[SKIP] nothing to check"


def test_custom_itraceassertion_subclasses_and_plain_objects() -> None:
    class Mine(ITraceAssertion):
        async def evaluate_async(self, ctx: Any) -> str | None:
            return None

    class Lookalike:  # has the method but is no subclass: not one, as in Veval
        async def evaluate_async(self, ctx: Any) -> str | None:
            return None

    assert isinstance(Mine(), ITraceAssertion)
    assert not isinstance(Lookalike(), ITraceAssertion)


def test_the_same_objects_work_as_checks_in_a_giskard_scenario() -> None:
    def agent(question: str) -> str:
        return "refund ok"

    checks = [TraceAssert.no_errors(), TraceAssert.max_steps(3), TraceAssert.max_cost(0.1)]
    assert all(isinstance(c, ITraceAssertion) for c in checks)
    scenario = Scenario("objects").interact("q", outputs=agent)
    for check in checks:
        scenario = scenario.check(check)
    result = scenario.run_sync()
    assert result.passed, result
