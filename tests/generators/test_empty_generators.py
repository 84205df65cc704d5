"""Input generators that yield nothing, as giskard-checks 1.0.6 runs them: no interaction,
the step's checks judge the trace as it is, the scenario passes if they do; ours flags the
pass ``vacuous`` and ``min_inputs`` makes it the step's ERROR."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from scenarist import Equals, FnCheck, Interact, Scenario, Suite, Trace
from scenarist.report.junit import to_junit_xml

pytestmark = pytest.mark.anyio


def nothing(trace: Trace) -> Iterator[str]:  # type: ignore[type-arg]
    return
    yield  # pragma: no cover


async def anothing(trace: Trace) -> AsyncIterator[str]:  # type: ignore[type-arg]
    return
    yield  # pragma: no cover


def _empty_gen() -> Iterator[str]:
    yield from ()


async def _empty_agen() -> AsyncIterator[str]:
    for _ in ():
        yield ""


FORMS: dict[str, Any] = {
    "function": lambda: nothing,
    "async function": lambda: anothing,
    "generator object": lambda: (x for x in ()),
    "async generator object": _empty_agen,
    "callable returning one": lambda: lambda: (x for x in ()),
}
LABELS = {
    "function": "nothing",
    "async function": "anothing",
    "generator object": "<genexpr>",
    "async generator object": "_empty_agen",
    "callable returning one": "<lambda>",
}


@pytest.mark.parametrize("form", list(FORMS))
async def test_an_empty_generator_passes_vacuously(form: str) -> None:
    result = await Scenario("x").interact(inputs=FORMS[form](), outputs=lambda i: "hi").run()
    assert result.status == "pass" and len(result.final_trace.interactions) == 0
    (step,) = result.steps
    assert step.results == [] and step.error is None
    assert step.empty_generators == (LABELS[form],)
    assert result.vacuous
    reason = f"the input generator {LABELS[form]!r} of step 1 yielded no input"
    assert result.vacuous_reason == reason


@pytest.mark.parametrize("form", list(FORMS))
async def test_checks_judge_the_trace_as_it_is(form: str) -> None:
    """A check that needs the missing turn ERRORs, one that does not passes (giskard's)."""
    needs = (
        await Scenario("needs")
        .interact(inputs=FORMS[form](), outputs=lambda i: "hi")
        .check(Equals(target_key="trace.last.outputs", expected_value="hi"))
        .run()
    )
    assert needs.status == "error" and not needs.vacuous
    assert needs.steps[0].results[0].message == (
        "No value found for key 'trace.last.outputs', expected a value equal to 'hi'."
    )
    after = (
        await Scenario("after")
        .interact(inputs=FORMS[form](), outputs=lambda i: "hi")
        .interact(inputs="a", outputs="b")
        .check(Equals(target_key="trace.last.outputs", expected_value="b"))
        .run()
    )
    assert after.status == "pass" and len(after.final_trace.interactions) == 1
    assert after.vacuous  # the trace is not empty, but that step's generator tested nothing


async def test_a_generator_object_is_iterated_and_receives_the_trace() -> None:
    """giskard-checks iterates a generator given as inputs (not the object as one input)."""
    seen: list[int] = []

    def talk() -> Any:
        trace = yield "one"
        seen.append(len(trace.interactions))
        yield "two"

    async def atalk() -> Any:
        trace = yield "three"
        seen.append(len(trace.interactions))

    result = (
        await Scenario("objects")
        .interact(inputs=talk(), outputs=str.upper)
        .interact(inputs=atalk(), outputs=str.upper)
        .interact(inputs=lambda trace: (m for m in ["four"]), outputs=str.upper)
        .run()
    )
    assert [i.outputs for i in result.final_trace.interactions] == ["ONE", "TWO", "THREE", "FOUR"]
    assert seen == [1, 3]
    assert not result.vacuous
    with pytest.raises(ValueError, match="functions or generators exist only in code"):
        Scenario("s").interact(inputs=(x for x in ()), outputs="o").model_dump_json()


async def test_min_inputs_makes_too_few_inputs_the_steps_error() -> None:
    result = (
        await Scenario("strict")
        .interact(inputs=anothing, outputs=lambda i: "hi", min_inputs=1)
        .check(FnCheck(fn=lambda trace: True))
        .run(return_exception=True)
    )
    assert result.status == "error" and not result.vacuous
    (step,) = result.steps
    assert step.error is not None and step.error.phase == "input_generation"
    assert step.error.exception_type == "InputGenerationException"
    assert step.error.message == (
        "the input generator 'anothing' yielded 0 input(s), fewer than min_inputs=1, so this "
        "step did not test what it should; make it yield more, or lower min_inputs"
    )
    assert step.results[0].status == "skip"

    def one(trace: Trace) -> Iterator[str]:  # type: ignore[type-arg]
        yield "only"

    two = Scenario("two").interact(inputs=one, outputs="o", min_inputs=2)
    assert "yielded 1 input(s), fewer than min_inputs=2" in (
        (await two.run(return_exception=True)).steps[0].error.message  # type: ignore[union-attr]
    )
    enough = await Scenario("ok").interact(inputs=one, outputs="o", min_inputs=1).run()
    assert enough.status == "pass" and not enough.vacuous


def test_min_inputs_dumps_only_when_set_and_refuses_a_single_value_above_one() -> None:
    assert "min_inputs" not in Interact(inputs="a", outputs="b").model_dump()
    assert Interact(inputs=nothing, min_inputs=1).min_inputs == 1
    strict = Scenario("s").interact(inputs="a", outputs="b", min_inputs=1)
    assert strict.model_dump()["steps"][0]["interacts"][0]["min_inputs"] == 1
    with pytest.raises(ValueError, match="min_inputs=2 but inputs is a single value"):
        Interact(inputs="a", outputs="b", min_inputs=2)
    with pytest.raises(ValueError, match="min_inputs"):
        Interact(inputs=nothing, min_inputs=-1)


async def test_a_suite_and_junit_pass_it_and_flag_it() -> None:
    suite = Suite(name="s")
    suite.append(Scenario("empty").interact(inputs=anothing, outputs=lambda i: "hi"))
    suite.append(Scenario("real").interact(inputs="a", outputs="b"))
    result = await suite.run(verbose=False)
    assert [r.status.value for r in result.results] == ["pass", "pass"]
    assert [r.vacuous for r in result.results] == [True, False]
    xml = to_junit_xml(result)
    assert 'failures="0"' in xml and 'errors="0"' in xml
    assert xml.count('<property name="vacuous" value="true"') == 1


async def test_each_run_of_a_repeated_scenario_notes_its_own_empty_generators() -> None:
    """The context's note is reset per step: a later step that yields is not flagged."""
    calls: list[int] = []

    async def first_time_only(trace: Trace) -> AsyncIterator[str]:  # type: ignore[type-arg]
        calls.append(1)
        if len(calls) > 1:
            yield "again"

    scenario = (
        Scenario("r")
        .interact(inputs=first_time_only, outputs=lambda i: "x")
        .check(FnCheck(fn=lambda trace: True))
        .interact(inputs="b", outputs="c")
        .check(FnCheck(fn=lambda trace: True))
    )
    first = await scenario.run()
    assert [s.empty_generators for s in first.steps] == [("first_time_only",), ()]
    second = await scenario.run()
    assert [s.empty_generators for s in second.steps] == [(), ()]
    assert first.vacuous and not second.vacuous
