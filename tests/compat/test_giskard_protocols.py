"""giskard-checks 1.0.6 protocols beyond the seed page: traces, async checks, specs, generics,
results. Each behaviour was observed black-box on giskard-checks; the code here is ours."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

from scenarist import (
    AllOf,
    AnyOf,
    Check,
    CheckResult,
    Equals,
    FnCheck,
    Interact,
    Interaction,
    InteractionGenerationError,
    InteractionSpec,
    JsonValid,
    RegexMatching,
    Scenario,
    ScenarioResult,
    StringMatching,
    Target,
    TestCaseError,
    TestCaseResult,
    Trace,
)

pytestmark = pytest.mark.anyio


class Transcript(Trace[str, str]):
    """A trace subclass a target asks for by annotation."""


class TwoTurns(InteractionSpec):
    """A spec written the giskard way: ``generate`` yields interactions."""

    async def generate(
        self, trace: Trace[Any, Any]
    ) -> AsyncGenerator[Interaction[Any, Any], Trace[Any, Any]]:
        updated = yield Interaction(inputs="first", outputs="one")
        yield Interaction(inputs=f"after {len(updated.interactions)}", outputs="two")


class Broken(InteractionSpec):
    async def generate(
        self, trace: Trace[Any, Any]
    ) -> AsyncGenerator[Interaction[Any, Any], Trace[Any, Any]]:
        yield Interaction(inputs="ok", outputs="ok")
        raise RuntimeError("generator broke")


class NeedsInner(Check[str, str, Trace[str, str]]):
    """A custom check (unregistered, generic) that awaits a built-in check."""

    async def run(self, trace: Trace[str, str]) -> CheckResult:
        inner = await Equals(expected_value="two").run(trace)
        return CheckResult.success("inner passed") if inner.passed else inner


async def test_trace_from_interactions_accepts_interactions_and_specs() -> None:
    trace = await Trace.from_interactions(
        Interaction(inputs="a", outputs="b"), TwoTurns(), Interact(inputs="q", outputs="r")
    )
    assert [(i.inputs, i.outputs) for i in trace.interactions] == [
        ("a", "b"),
        ("first", "one"),
        ("after 2", "two"),
        ("q", "r"),
    ]


async def test_trace_with_interaction_is_awaitable_and_still_sync() -> None:
    trace: Trace[str, str] = Trace()
    one = trace.with_interaction(Interaction(inputs="a", outputs="b"))
    two = await one.with_interaction(Interaction(inputs="c", outputs="d"))
    assert len(one.interactions) == 1
    assert len(two.interactions) == 2
    assert len((await two.with_interactions(TwoTurns())).interactions) == 4


async def test_trace_generation_failure_names_the_spec_and_chains_the_cause() -> None:
    with pytest.raises(InteractionGenerationError, match="Broken failed after 1") as caught:
        await Trace.from_interactions(Broken())
    assert isinstance(caught.value.__cause__, RuntimeError)


def test_trace_for_target_reads_the_target_annotation() -> None:
    def target(trace: Transcript, inputs: str) -> str:
        return inputs

    assert type(Trace.for_target(target)) is Transcript
    assert type(Trace.for_target(lambda inputs: inputs)) is Trace


@pytest.mark.parametrize(
    "check",
    [
        Equals(expected_value="two"),
        StringMatching(keyword="tw"),
        RegexMatching(pattern="^t"),
        JsonValid(parse=False),
        AllOf(checks=[Equals(expected_value="two")]),
        FnCheck(fn=lambda trace: True),
    ],
    ids=lambda c: type(c).__name__,
)
async def test_every_check_run_is_awaitable(check: Check) -> None:
    trace = await Trace.from_interactions(Interaction(inputs="x", outputs="two"))
    result = await check.run(trace)
    assert isinstance(result, CheckResult)
    assert result.status in ("pass", "fail")


async def test_custom_check_awaiting_a_builtin_runs_in_a_scenario() -> None:
    result = await Scenario(name="s").add_interaction(TwoTurns()).check(NeedsInner()).run()
    assert result.passed
    assert result.steps[0].results[0].message == "inner passed"


async def test_giskard_style_spec_runs_in_a_scenario_and_interact_generates() -> None:
    result = await Scenario(name="s").add_interaction(TwoTurns()).run()
    assert [i.outputs for i in result.final_trace.interactions] == ["one", "two"]
    generated = [i async for i in Interact(inputs="q", outputs="r").generate(Trace())]
    assert [(i.inputs, i.outputs) for i in generated] == [("q", "r")]


async def test_a_spec_with_neither_protocol_says_what_to_implement() -> None:
    class Nothing(InteractionSpec):
        pass

    with pytest.raises(NotImplementedError, match=r"run\(context\) or generate\(trace\)"):
        await Scenario(name="s").add_interaction(Nothing()).run()


def test_generic_subscripts_work_as_in_giskard() -> None:
    assert Check[str, str, Trace[str, str]] is Check
    assert FnCheck[str, str, Trace[str, str]] is FnCheck
    assert InteractionSpec[str, str, Trace[str, str]] is InteractionSpec
    assert ScenarioResult[Trace[str, str]] is ScenarioResult
    assert Target[str, str, Trace[str, str]] is Target
    assert Interaction[str, str](inputs="a", outputs="b").outputs == "b"


def test_test_case_result_predicates_and_failures_as_giskard() -> None:
    result = TestCaseResult(
        results=[
            CheckResult.failure("nope", details={"check_kind": "equals"}),
            CheckResult.skip("later"),
            CheckResult.success("fine"),
        ]
    )
    assert (result.failed, result.errored, result.skipped) == (True, False, False)
    assert result.format_failures() == [
        "equals FAILED: nope",
        "Unknown check SKIPPED: later",
    ]
    with pytest.raises(AssertionError) as caught:
        result.assert_passed()
    assert str(caught.value) == (
        "Test case failed with the following errors:\n"
        "equals FAILED: nope\nUnknown check SKIPPED: later"
    )


def test_test_case_error_is_the_step_error_model_with_a_summary() -> None:
    error = TestCaseError(message="no", exception_type="ValueError", phase="input_generation")
    assert error.summary() == "ValueError during input_generation: no"
    step = TestCaseResult(error=error)
    assert step.errored
    assert step.format_failures() == ["Test case ERRORED: ValueError during input_generation: no"]


async def test_failures_and_errors_are_the_failing_steps_and_scenarios() -> None:
    scenario = (
        Scenario(name="s")
        .interact(inputs="a", outputs="b")
        .check(Equals(expected_value="b"))
        .interact(inputs="c", outputs="d")
        .check(Equals(expected_value="x"))
    )
    result = await scenario.run()
    assert result.failures_and_errors == [result.steps[1]]


async def test_empty_all_of_passes_flagged_vacuous_and_empty_any_of_fails() -> None:
    trace = await Trace.from_interactions(Interaction(inputs="x", outputs="y"))
    all_of = await AllOf(checks=[]).run(trace)
    assert all_of.passed and all_of.vacuous
    assert (await AnyOf(checks=[]).run(trace)).failed


def test_multiple_runs_given_as_a_string_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="multiple_runs"):
        Scenario(name="s").interact(inputs="a", outputs="b").run_sync(multiple_runs="2")  # type: ignore[arg-type]


def test_scenario_model_validate_ignores_unknown_top_level_keys() -> None:
    data = {"name": "s", "steps": [], "written_by": "another tool", "trace_type": None}
    assert Scenario.model_validate(data).name == "s"
    with pytest.raises(ValueError):
        Scenario(name="s", multiple_run=3)  # type: ignore[call-arg]


def test_scenario_dump_carries_trace_type_and_loads_it_back() -> None:
    dumped = Scenario(name="s", trace_type=Trace).model_dump(mode="json")
    assert dumped["trace_type"] == "scenarist.model.trace.Trace"
    assert Scenario.model_validate(dumped).trace_type is Trace
    assert Scenario(name="s").model_dump(mode="json")["trace_type"] is None


def test_a_ready_verdict_goes_to_asyncio_like_giskards_coroutine() -> None:
    """giskard's ``run`` is a coroutine: its users pass it to ``asyncio.run``,
    ``create_task`` and ``gather``. A built-in check's ready verdict works there too."""
    import asyncio

    trace: Trace[str, str] = Trace().with_interaction(Interaction(inputs="q", outputs="two"))
    check, fn = Equals(expected_value="two"), FnCheck(fn=lambda trace: True)
    assert asyncio.run(check.run(trace)).passed  # type: ignore[arg-type]
    assert asyncio.run(fn.run(trace)).passed  # type: ignore[arg-type]

    async def together() -> list[CheckResult]:
        task = asyncio.create_task(check.run(trace))  # type: ignore[arg-type]
        gathered = await asyncio.gather(check.run(trace), fn.run(trace), check.run(trace))
        return [await task, *gathered]

    assert [r.status for r in asyncio.run(together())] == ["pass"] * 4
    verdict = CheckResult.failure("no")
    assert hash(verdict) == hash(CheckResult.failure("no")) and {verdict} == {verdict}


def test_a_ready_trace_goes_to_asyncio_like_giskards_coroutine() -> None:
    """``Trace.with_interaction`` is a coroutine in giskard: ours, ready, works there too."""
    import asyncio

    one = Interaction(inputs="q", outputs="a")
    assert len(asyncio.run(Trace().with_interaction(one)).interactions) == 1  # type: ignore[arg-type]

    async def together() -> list[Trace[Any, Any]]:
        return await asyncio.gather(Trace().with_interaction(one), Trace.from_interactions(one))

    assert [len(t.interactions) for t in asyncio.run(together())] == [1, 1]
    assert hash(Trace().with_interaction(one)) == hash(Trace().with_interaction(one))
