from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from pydantic import computed_field

from scenarist import (
    Check,
    CheckResult,
    Equals,
    FnCheck,
    Interaction,
    Scenario,
    ScenarioStatus,
    Suite,
    TestCase,
    Trace,
    get_runner,
)


def _boom(trace: Any) -> bool:
    raise RuntimeError("check exploded")


def test_runner_stops_after_a_failing_step_and_skips_the_rest_without_calling_the_target() -> None:
    calls: list[str] = []

    def agent(inputs: str) -> str:
        calls.append(inputs)
        return inputs.upper()

    result = (
        Scenario("stop")
        .interact("a")
        .check(Equals(expected_value="wrong"))
        .check(Equals(expected_value="A"))
        .interact("b")
        .check(Equals(expected_value="B"))
        .check(Equals(expected_value="B", name="second"))
        .interact("c")
    ).run_sync(target=agent)
    assert calls == ["a"]
    assert [s.status for s in result.steps] == ["fail", "skip", "skip"]
    # every check of the failing step ran, even after the first failure
    assert [r.status for r in result.steps[0].results] == ["fail", "pass"]
    assert [r.message for r in result.steps[1].results] == [
        "Step 2 was skipped due to previous failure"
    ] * 2
    assert [r.message for r in result.steps[2].results] == [
        "Step 3 was skipped due to previous failure"
    ]
    assert result.status == ScenarioStatus.FAIL and result.failed and not result.passed


def test_runner_stop_on_failure_false_keeps_running_later_steps() -> None:
    result = (
        Scenario("diagnose")
        .interact("a", "x")
        .check(Equals(expected_value="y"))
        .interact("b", "z")
        .check(Equals(expected_value="z"))
    ).run_sync(stop_on_failure=False)
    assert [s.status for s in result.steps] == ["fail", "pass"]


def test_runner_stamps_check_details_and_labels_unnamed_checks_by_kind() -> None:
    result = Scenario().interact("a", "b").check(Equals(expected_value="b")).run_sync()
    details = result.steps[0].results[0].details
    assert details["check_kind"] == "equals"
    assert details["check_name"] is None
    assert "duration_ms" in details and "check_description" in details
    assert result.steps[0].results[0].label == "equals"


def test_runner_check_exception_propagates_by_default() -> None:
    scenario = Scenario().interact("a", "b").check(FnCheck(fn=_boom))
    with pytest.raises(RuntimeError, match="check exploded"):
        scenario.run_sync()


def test_runner_check_exception_becomes_error_with_return_exception() -> None:
    result = (
        Scenario()
        .interact("a", "b")
        .check(FnCheck(fn=_boom, name="boom"))
        .run_sync(return_exception=True)
    )
    check = result.steps[0].results[0]
    assert check.status == "error"
    assert check.message == "Check 'boom' failed with error: check exploded"
    assert check.details["exception_type"] == "RuntimeError"
    assert "check exploded" in check.details["traceback"]
    assert result.errored


def test_runner_target_exception_propagates_unchanged_by_default() -> None:
    def agent(inputs: str) -> str:
        raise ConnectionError("agent down")

    with pytest.raises(ConnectionError, match="agent down"):
        Scenario().interact("a").check(Equals(expected_value="x")).run_sync(target=agent)


def test_runner_target_exception_keeps_the_partial_trace_with_return_exception() -> None:
    def agent(inputs: str) -> str:
        if inputs == "second":
            raise ConnectionError("agent down")
        return "ok"

    result = (
        Scenario()
        .interact("first")
        .interact("second")
        .check(Equals(expected_value="ok"))
        .interact("third")
    ).run_sync(target=agent, return_exception=True)
    step = result.steps[0]
    assert step.status == "error"
    assert step.error is not None
    assert (step.error.exception_type, step.error.phase) == ("ConnectionError", "input_generation")
    assert step.error.message == "agent down" and "ConnectionError" in (step.error.traceback or "")
    assert [r.status for r in step.results] == ["skip"]
    assert [i.inputs for i in result.final_trace.interactions] == ["first"]
    assert result.steps[1].status == "skip"


def test_runner_without_target_or_outputs_raises_value_error_with_the_fix() -> None:
    scenario = Scenario("no_target").interact("hello").check(Equals(expected_value="x"))
    with pytest.raises(ValueError, match="no target was bound") as info:
        scenario.run_sync()
    assert "Suite(target=...)" in str(info.value)
    result = scenario.run_sync(return_exception=True)
    assert result.status == "error"
    assert result.steps[0].error is not None and "no target" in result.steps[0].error.message


def test_runner_step_without_checks_that_errors_records_a_skip_named_step() -> None:
    """As giskard-checks: a step that never got to run yields one SKIP, never an empty
    result list (which would roll up as a pass if the error were ever dropped)."""
    result = Scenario("no_target").interact("hello").run_sync(return_exception=True)
    (step,) = result.steps
    assert step.status == "error" and step.error is not None
    (skip,) = step.results
    assert skip.status == "skip"
    assert skip.message == "Checks were skipped due to input generation failure"
    assert (skip.kind, skip.name) == ("step", "step")
    assert (skip.details["check_kind"], skip.details["check_name"]) == ("step", "step")
    assert result.check_count == 1


def test_target_precedence_run_over_scenario_and_explicit_outputs_never_replaced() -> None:
    scenario = (
        Scenario("prec", target=lambda inputs: "scenario")
        .interact("a")
        .interact("b", "explicit")
        .check(Equals(expected_value="explicit"))
    )
    from_scenario = scenario.run_sync()
    from_run = scenario.run_sync(target=lambda inputs: "run")
    assert [i.outputs for i in from_scenario.final_trace.interactions] == ["scenario", "explicit"]
    assert [i.outputs for i in from_run.final_trace.interactions] == ["run", "explicit"]
    assert scenario.target("x") == "scenario"  # binding a run target did not mutate it


def test_outputs_callables_bind_by_name_or_by_position() -> None:
    seen: list[Any] = []

    def by_position(trace: Trace[Any, Any], question: str) -> str:
        seen.append((len(trace.interactions), question))
        return "p"

    def by_name(inputs: str, trace: Trace[Any, Any]) -> str:
        seen.append((inputs, len(trace.interactions)))
        return "n"

    Scenario().interact("one", lambda q: q).interact("two", by_position).interact(
        "three", by_name
    ).interact("four", lambda: "zero").run_sync()
    assert seen == [(1, "two"), ("three", 2)]


def _shape_positional_only(inputs: str, /) -> Any:
    return ("inputs", inputs)


def _shape_trace_keyword_only(*, trace: Trace[Any, Any]) -> Any:
    return ("turns", len(trace.interactions))


def _shape_both_keyword_only(*, inputs: str, trace: Trace[Any, Any]) -> Any:
    return ("both", inputs, len(trace.interactions))


def _shape_defaulted_extra(trace: Trace[Any, Any], inputs: str, extra: int = 7) -> Any:
    return ("extra", inputs, len(trace.interactions), extra)


def _shape_star_args(*args: Any) -> Any:
    return ("args", args[0])


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        (lambda q: ("one", q), ("one", "hi")),
        (lambda trace, q: ("two", q, len(trace.interactions)), ("two", "hi", 1)),
        (lambda inputs: ("name", inputs), ("name", "hi")),
        (lambda inputs, trace: ("names", inputs, len(trace.interactions)), ("names", "hi", 1)),
        (lambda: ("none",), ("none",)),
        (_shape_positional_only, ("inputs", "hi")),
        (_shape_trace_keyword_only, ("turns", 1)),
        (_shape_both_keyword_only, ("both", "hi", 1)),
        (_shape_defaulted_extra, ("extra", "hi", 1, 7)),
        (_shape_star_args, ("args", "hi")),
    ],
)
@pytest.mark.parametrize("how", ["serial", "timeout", "parallel"])
def test_every_target_shape_receives_its_arguments_on_every_call_path(
    target: Any, expected: Any, how: str
) -> None:
    """Whichever way a target names its parameters, and whichever path calls it (the event
    loop, a deadline thread, the suite's worker threads), it gets the same values."""
    scenario = Scenario("shape").interact("first", "static").interact("hi")
    if how == "parallel":
        suite = Suite(name="shapes", target=target)
        suite.append(scenario)
        result = suite.run_sync(parallel=True, max_concurrency=2).results[0]
    else:
        result = scenario.run_sync(target=target, timeout_s=30 if how == "timeout" else None)
    assert result.final_trace.interactions[-1].outputs == expected


async def test_async_targets_and_async_input_callables_are_awaited() -> None:
    async def agent(inputs: str) -> str:
        await asyncio.sleep(0)
        return f"echo {inputs}"

    async def next_input(trace: Trace[Any, Any]) -> str:
        return f"after {trace.last.outputs}"  # type: ignore[union-attr]

    result = await Scenario().interact("hi").interact(next_input).run(target=agent)
    assert [i.outputs for i in result.final_trace.interactions] == ["echo hi", "echo after echo hi"]


pytestmark = pytest.mark.anyio


def test_generator_inputs_yield_several_turns_and_receive_the_updated_trace() -> None:
    received: list[int] = []
    closed: list[bool] = []

    def conversation(trace: Trace[Any, Any]) -> Iterator[str]:
        try:
            updated = yield "one"
            received.append(len(updated.interactions))
            updated = yield "two"
            received.append(len(updated.interactions))
        finally:
            closed.append(True)

    result = Scenario().interact(conversation, lambda inputs: inputs * 2).run_sync()
    assert [i.outputs for i in result.final_trace.interactions] == ["oneone", "twotwo"]
    assert received == [1, 2] and closed == [True]


async def test_async_generator_inputs_are_closed_at_the_end() -> None:
    closed: list[bool] = []

    async def conversation(trace: Trace[Any, Any]) -> AsyncIterator[str]:
        try:
            for word in ("a", "b", "c"):
                yield word
        finally:
            closed.append(True)

    result = await Scenario().interact(conversation, str.upper).run()
    assert [i.outputs for i in result.final_trace.interactions] == ["A", "B", "C"]
    assert closed == [True]


def test_outputs_returning_an_interaction_is_used_as_is() -> None:
    def agent(inputs: str) -> Interaction[str, str]:
        return Interaction(inputs=inputs, outputs="x", metadata={"model": "m"})

    result = Scenario().interact("a", agent).run_sync()
    assert result.final_trace.last == Interaction(inputs="a", outputs="x", metadata={"model": "m"})


def test_multiple_runs_stops_at_the_first_run_that_does_not_pass() -> None:
    answers = iter(["ok", "ok", "bad", "ok"])
    scenario = Scenario("flaky", multiple_runs=4).interact("q").check(Equals(expected_value="ok"))
    result = scenario.run_sync(target=lambda inputs: next(answers))
    assert (result.multiple_runs, result.runs_executed) == (4, 3)
    assert result.run_statuses == ["pass", "pass", "fail"]
    assert result.status == "fail"


def test_multiple_runs_each_run_gets_a_fresh_trace_and_override_wins() -> None:
    result = (
        Scenario(multiple_runs=5)
        .interact("q", "a")
        .check(FnCheck(fn=lambda trace: len(trace.interactions) == 1))
        .run_sync(multiple_runs=3)
    )
    assert (result.multiple_runs, result.runs_executed, result.status) == (3, 3, "pass")


@pytest.mark.parametrize(
    ("value", "error"), [(0, ValueError), (-2, ValueError), (True, ValueError), ("2", ValueError)]
)
def test_run_multiple_runs_override_is_validated(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match="multiple_runs"):
        Scenario().interact("a", "b").run_sync(multiple_runs=value)


def test_empty_scenario_and_scenario_without_checks_pass_but_are_flagged() -> None:
    empty = Scenario("empty").run_sync()
    unchecked = Scenario("unchecked").interact("a", "b").run_sync()
    assert empty.status == unchecked.status == "pass"
    assert not empty.has_checks and not unchecked.has_checks


def test_timeout_expires_as_error_with_phase_timeout() -> None:
    async def slow(inputs: str) -> str:
        await asyncio.Event().wait()  # never set: only the deadline ends this call
        return "late"

    result = (
        Scenario(timeout_s=0.05)
        .interact("a")
        .check(Equals(expected_value="x"))
        .run_sync(target=slow, return_exception=True)
    )
    error = result.steps[0].error
    assert error is not None and error.phase == "timeout"
    assert "timeout_s=0.05" in error.message


@pytest.mark.parametrize("parallel", [False, True])
def test_an_async_target_that_blocks_the_event_loop_past_its_timeout_is_an_error(
    parallel: bool,
) -> None:
    """``time.sleep`` in an ``async def`` blocks the loop, so the deadline cannot cancel it;
    when it returns, the interaction is recorded as timed out, never as a pass."""
    import time

    async def blocks(inputs: str) -> str:
        time.sleep(2)  # noqa: ASYNC251  (blocks the event loop: ten times the timeout)
        return "good"

    async def fine(inputs: str) -> str:
        return "good"

    scenario = (
        Scenario("blocks", target=blocks, timeout_s=0.2)
        .interact("a")
        .check(Equals(expected_value="good"))
    )
    if parallel:
        other = Scenario("fine", target=fine).interact("a").check(Equals(expected_value="good"))
        suite = Suite(name="loop", scenarios=[scenario, other])
        results = suite.run_sync(parallel=True, return_exception=True).results
        assert results[1].status == ScenarioStatus.PASS
        result = results[0]
    else:
        result = scenario.run_sync(return_exception=True)
    assert result.status == ScenarioStatus.ERROR
    error = result.steps[0].error
    assert error is not None and error.phase == "timeout"
    assert "did not finish within timeout_s=0.2" in error.message
    assert "the event loop was blocked past the deadline" in error.message


def test_the_watchdog_names_the_code_blocking_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The target blocks the loop until the watchdog has spoken (no timing involved): its
    stderr line and the timed-out error both name the blocking function."""
    import sys
    import threading

    from tests.helpers.limits import HANG_S

    spoken = threading.Event()
    lines: list[str] = []

    class Stderr:
        def write(self, text: str) -> int:
            lines.append(text)
            if "the event loop is blocked" in text:
                spoken.set()
            return len(text)

        def flush(self) -> None:
            pass

    monkeypatch.setattr(sys, "stderr", Stderr())

    async def blocks_until_told(inputs: str) -> str:
        spoken.wait(HANG_S)  # blocks the event loop (a threading wait in async code)
        return "good"

    result = (
        Scenario("blocks", target=blocks_until_told, timeout_s=0.2)
        .interact("a")
        .check(Equals(expected_value="good"))
        .run_sync(return_exception=True)
    )
    (line,) = [text for text in lines if "the event loop is blocked" in text]
    assert "blocks_until_told (" in line and "timeout_s=0.2" in line
    error = result.steps[0].error
    assert result.status == ScenarioStatus.ERROR and error is not None
    assert error.phase == "timeout" and "blocks_until_told (" in error.message


class Transcript(Trace[str, str]):
    @computed_field  # type: ignore[prop-decorator]
    @property
    def transcript(self) -> str:
        return " | ".join(f"{i.inputs}>{i.outputs}" for i in self.interactions)


def test_trace_type_from_scenario_or_target_annotation() -> None:
    def agent(trace: Transcript, inputs: str) -> str:
        return inputs.upper()

    inferred = (
        Scenario()
        .interact("a")
        .check(Equals(expected_value="a>A", target_key="trace.transcript"))
        .run_sync(target=agent)
    )
    assert isinstance(inferred.final_trace, Transcript) and inferred.passed
    explicit = Scenario(trace_type=Transcript).interact("b", "B").run_sync()
    assert isinstance(explicit.final_trace, Transcript)


def test_annotations_start_every_trace() -> None:
    result = (
        Scenario(annotations={"user": "u1"})
        .interact("a", "b")
        .check(Equals(expected_value="u1", target_key="trace.annotations.user"))
        .run_sync()
    )
    assert result.passed


def test_async_check_run_is_awaited() -> None:
    @Check.register("test_runner_async_check")
    class AsyncCheck(Check):
        async def run(self, trace: Any) -> CheckResult:
            await asyncio.sleep(0)
            return CheckResult.failure("async said no")

    result = Scenario().interact("a", "b").check(AsyncCheck()).run_sync()
    assert result.steps[0].results[0].message == "async said no"


def test_check_returning_a_non_result_is_an_error() -> None:
    @Check.register("test_runner_bad_return")
    class BadReturn(Check):
        def run(self, trace: Any) -> Any:
            return True

    with pytest.raises(TypeError, match="must return a CheckResult"):
        Scenario().interact("a", "b").check(BadReturn()).run_sync()


async def test_run_sync_works_inside_a_running_event_loop() -> None:
    result = Scenario().interact("a", "b").check(Equals(expected_value="b")).run_sync()
    assert result.passed


def test_assert_passed_lists_the_failures() -> None:
    result = (
        Scenario("bad").interact("a", "b").check(Equals(expected_value="c", name="eq")).run_sync()
    )
    with pytest.raises(AssertionError, match=r"(?s)scenario 'bad' fail.*eq FAILED: Expected value"):
        result.assert_passed()
    Scenario().interact("a", "b").run_sync().assert_passed()


async def test_test_case_runs_checks_over_an_existing_trace() -> None:
    trace = Trace().with_interaction(Interaction(inputs="q", outputs="recorded"))
    case = TestCase(
        trace=trace, checks=[Equals(expected_value="recorded"), Equals(expected_value="x")]
    )
    result = await case.run()
    assert [r.status for r in result.results] == ["pass", "fail"]
    # no step produced the trace: no last interaction index (giskard-checks 1.0.6: None)
    assert result.last_interaction_index is None
    with pytest.raises(AssertionError):
        await case.assert_passed()


def test_get_runner_returns_one_process_wide_runner() -> None:
    assert get_runner() is get_runner()
