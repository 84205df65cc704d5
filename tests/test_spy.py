from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from helpers import spied_tools
from scenarist import Equals, Interact, Scenario, Suite, WithSpy

TARGET = "helpers.spied_tools.lookup"


def agent(inputs: str) -> str:
    return f"answer: {spied_tools.lookup(inputs)['found']}"


def _spied(inputs: str, **kw: Any) -> WithSpy:
    return WithSpy(
        interaction_generator=Interact(inputs=inputs, outputs=agent, **kw), target=TARGET
    )


def test_with_spy_records_calls_as_plain_data_and_path_checks_still_work() -> None:
    result = (
        Scenario("spy")
        .add_interaction(_spied("q1"))
        .check(Equals(expected_value="answer: q1"))  # giskard: every path check errors here
        .check(Equals(expected_value=1, target_key=f"trace.last.metadata['{TARGET}'].call_count"))
        .check(
            Equals(
                expected_value=["q1"], target_key=f"trace.last.metadata['{TARGET}'].calls[0].args"
            )
        )
    ).run_sync()
    assert result.passed, result.format_failures()
    record = result.final_trace.last.metadata[TARGET]  # type: ignore[union-attr]
    assert record == {
        "call_count": 1,
        "calls": [{"args": ["q1"], "kwargs": {}, "returned": {"found": "q1"}}],
    }
    result.final_trace.model_dump_json()  # the trace stays serialisable


def test_with_spy_calls_through_and_restores_the_function() -> None:
    original = spied_tools.lookup
    Scenario().add_interaction(_spied("x")).run_sync()
    assert spied_tools.lookup is original


def test_with_spy_keeps_concurrent_scenarios_apart() -> None:
    suite = Suite(name="spies")
    for i in range(20):
        suite.append(
            Scenario(f"s{i}")
            .add_interaction(_spied(f"q{i}"))
            .check(
                Equals(
                    expected_value=[f"q{i}"],
                    target_key=f"trace.last.metadata['{TARGET}'].calls[*].args[0]",
                )
            )
        )
    result = suite.run_sync(parallel=True, max_concurrency=8, verbose=False)
    assert result.passed_count == 20, [r.format_failures() for r in result.results]


def test_with_spy_rejects_a_target_that_does_not_exist() -> None:
    spec = WithSpy(
        interaction_generator=Interact(inputs="a", outputs="b"), target="helpers.nope.fn"
    )
    with pytest.raises(ValueError, match="cannot be found"):
        Scenario().add_interaction(spec).run_sync()
    with pytest.raises(ValidationError, match="target"):
        WithSpy(interaction_generator=Interact(inputs="a", outputs="b"), target="not a path")


def test_with_spy_round_trips_when_its_spec_is_static() -> None:
    spec = WithSpy(interaction_generator=Interact(inputs="a", outputs="b"), target=TARGET)
    again = WithSpy.model_validate(spec.model_dump(mode="json"))
    assert again == spec
    assert again.model_dump(mode="json")["interaction_generator"]["kind"] == "interact"
