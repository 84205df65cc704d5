"""The runner's fast path (issue 15) keeps every contract of the general one.

Sync checks run without a coroutine and built-in verdicts are stamped in place; these
tests pin what users rely on around that: results they hold are never changed, awaiting
``check.run`` works for every check, sync ``run`` methods that return awaitables still
count, and the direct ``trace.last.outputs`` read answers like the path walk.
"""

from __future__ import annotations

import asyncio
from typing import Any

from scenarist import (
    Check,
    CheckResult,
    Equals,
    FnCheck,
    Interact,
    Interaction,
    Scenario,
    StringMatching,
    Trace,
)
from scenarist.engine.interactions import InteractionContext
from scenarist.model.paths import NoMatch, compile_path, resolve

CACHED = CheckResult.success("always", details={"source": "cache"})


class CachedEquals(Equals):
    """A subclass that overrides ``run`` and hands out one shared verdict."""

    def run(self, trace: Trace[Any, Any]) -> CheckResult:
        return CACHED


def test_a_verdict_the_check_keeps_is_copied_not_stamped_in_place() -> None:
    result = (
        Scenario("cached")
        .interact("q", "a")
        .check(CachedEquals(name="first", expected_value="a"))
        .check(CachedEquals(name="second", expected_value="a"))
        .run_sync()
    )
    first, second = result.steps[0].results
    assert (first.name, second.name) == ("first", "second")
    assert first.details["check_name"] == "first"
    assert second.details["check_name"] == "second"
    assert CACHED.name is None and CACHED.duration_ms is None
    assert CACHED.details == {"source": "cache"}


def test_built_in_verdicts_carry_identity_in_fields_and_details() -> None:
    result = (
        Scenario("identity")
        .interact("q", "the answer ok")
        .check(Equals(name="eq", description="same", expected_value="the answer ok"))
        .check(StringMatching(name="sm", keyword="ok"))
        .run_sync()
    )
    eq, sm = result.steps[0].results
    assert eq.passed and sm.passed
    assert (eq.kind, eq.name) == ("equals", "eq")
    assert eq.details["check_kind"] == "equals"
    assert eq.details["check_description"] == "same"
    assert eq.details["actual_value"] == "the answer ok"
    assert isinstance(eq.duration_ms, int) and eq.details["duration_ms"] == eq.duration_ms
    assert (sm.kind, sm.details["check_name"]) == ("string_matching", "sm")


def test_running_a_built_in_check_directly_is_not_stamped() -> None:
    trace = Trace().with_interaction(Interaction(inputs="q", outputs="a"))
    verdict = Equals(name="eq", expected_value="a").run(trace)
    assert isinstance(verdict, CheckResult) and verdict.passed
    assert verdict.name is None and "check_name" not in verdict.details


def test_await_run_works_for_sync_and_async_function_checks() -> None:
    trace = Trace().with_interaction(Interaction(inputs="q", outputs="a"))

    async def is_a(t: Trace[Any, Any]) -> bool:
        await asyncio.sleep(0)
        return t.last is not None and t.last.outputs == "a"

    async def go() -> tuple[CheckResult, CheckResult, CheckResult]:
        sync = await FnCheck(fn=lambda t: t.last.outputs == "a").run(trace)
        async_ = await FnCheck(fn=is_a).run(trace)
        wrong = await FnCheck(fn=lambda t: False, failure_message="nope").run(trace)
        return sync, async_, wrong

    sync, async_, wrong = asyncio.run(go())
    assert sync.passed and async_.passed
    assert not wrong.passed and wrong.message == "nope"


class AwaitableFromSyncRun(Check):
    """A sync ``run`` that hands back a coroutine (allowed by ``Check.run``'s type)."""

    verdict: bool = True

    def run(self, trace: Trace[Any, Any]) -> Any:
        async def later() -> CheckResult:
            await asyncio.sleep(0)
            return CheckResult.success("later") if self.verdict else CheckResult.failure("no")

        return later()


class ReturnsNothing(Check):
    def run(self, trace: Trace[Any, Any]) -> Any:
        return None


def test_sync_run_returning_an_awaitable_or_garbage_through_the_runner() -> None:
    result = (
        Scenario("awaitable")
        .interact("q", "a")
        .check(AwaitableFromSyncRun(name="later"))
        .check(ReturnsNothing(name="nothing"))
        .run_sync(return_exception=True)
    )
    later, nothing = result.steps[0].results
    assert later.passed and later.message == "later" and later.name == "later"
    assert nothing.errored
    assert "ReturnsNothing.run returned NoneType; a check must return a CheckResult" in str(
        nothing.message
    )
    failing = (
        Scenario("awaitable-fails")
        .interact("q", "a")
        .check(AwaitableFromSyncRun(verdict=False))
        .run_sync()
    )
    assert failing.steps[0].results[0].message == "no"


class LastIsFirst(Trace[Any, Any]):
    """A trace subclass whose ``last`` means something else."""

    @property
    def last(self) -> Interaction[Any, Any] | None:  # type: ignore[override]
        return self.interactions[0] if len(self.interactions) else None


def test_the_direct_last_outputs_read_answers_like_the_path_walk() -> None:
    key = "trace.last.outputs"
    empty: Trace[Any, Any] = Trace()
    assert isinstance(resolve(empty, key), NoMatch)
    assert str(resolve(empty, key)) == str(compile_path(key).resolve(empty))
    two = empty.with_interaction(Interaction(inputs="1", outputs="one"))
    two = two.with_interaction(Interaction(inputs="2", outputs="two"))
    assert resolve(two, key) == compile_path(key).resolve(two) == "two"
    odd = LastIsFirst(interactions=list(two.interactions))
    assert resolve(odd, key) == compile_path(key).resolve(odd) == "one"


class Shouting(Interact):
    """A subclass of ``Interact`` with its own ``run``: it must be awaited, not recorded."""

    async def run(self, context: InteractionContext) -> None:
        context.add(Interaction(inputs=self.inputs, outputs=str(self.outputs).upper()))


def test_static_interactions_are_recorded_in_order_around_ones_that_run_code() -> None:
    seen: list[int] = []

    def outputs(trace: Trace[Any, Any], inputs: str) -> str:
        seen.append(len(trace.interactions))  # the recorded ones before it are visible
        return f"computed {inputs}"

    result = (
        Scenario("mixed")
        .interact("q1", "a1", metadata={"turn": 1})
        .interact("q2", "a2")
        .interact("q3", outputs)
        .interact("q4", "a4")
        .add_interaction(Shouting(inputs="q5", outputs="a5"))
        .interact("q6", "a6")
        .check(FnCheck(name="six", fn=lambda trace: len(trace.interactions) == 6))
        .run_sync()
    )
    trace = result.final_trace
    assert [(i.inputs, i.outputs) for i in trace.interactions] == [
        ("q1", "a1"),
        ("q2", "a2"),
        ("q3", "computed q3"),
        ("q4", "a4"),
        ("q5", "A5"),
        ("q6", "a6"),
    ]
    assert seen == [2]
    assert result.passed
    first = trace.interactions[0]
    assert first.metadata == {"turn": 1}
    assert first.spans == () and first.duration_ms == 0.0 and first.error is None
    # Recorded interactions in a row share the step's clock reading; one after code ran
    # reads the clock again (never earlier than the ones before it).
    # (The subclass built its own interaction, without a start time.)
    stamps = [i.started_at for i in trace.interactions]
    assert stamps[4] is None
    assert all(s is not None and s.tzinfo is not None for s in stamps[:4] + stamps[5:])
    assert stamps[0] == stamps[1]
    assert stamps[1] <= stamps[2] <= stamps[3] <= stamps[5]


def test_a_recorded_interaction_owns_its_metadata() -> None:
    scenario = (
        Scenario("meta")
        .interact("q", "a", metadata={"k": "v"})
        .check(FnCheck(name="ok", fn=lambda trace: True))
    )
    first = scenario.run_sync().final_trace.interactions[0]
    first.metadata["k"] = "changed"
    second = scenario.run_sync().final_trace.interactions[0]
    assert second.metadata == {"k": "v"}
    assert scenario.steps[0].interacts[0].metadata == {"k": "v"}


def test_a_static_interaction_without_outputs_still_asks_the_target() -> None:
    async def target(inputs: str) -> str:
        return f"target says {inputs}"

    result = (
        Scenario("target")
        .interact("q1", "given")
        .interact("q2")
        .check(Equals(name="eq", expected_value="target says q2"))
        .run_sync(target=target)
    )
    assert [i.outputs for i in result.final_trace.interactions] == ["given", "target says q2"]
    assert result.passed
