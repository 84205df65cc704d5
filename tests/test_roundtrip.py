"""Property tests: scenarios and results survive JSON and rerun to the same verdicts."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scenarist import (
    AllOf,
    AnyOf,
    Check,
    Equals,
    GreaterThan,
    JsonValid,
    Not,
    RegexMatching,
    Scenario,
    StringMatching,
    Suite,
    SuiteResult,
)

_text = st.text(alphabet=st.characters(categories=["L", "N", "Zs", "P"]), max_size=12)
_value = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=6,
)
_leaf_checks = st.one_of(
    st.builds(Equals, expected_value=_value),
    st.builds(GreaterThan, expected_value=st.integers(-5, 5)),
    st.builds(StringMatching, keyword=_text.filter(bool), case_sensitive=st.booleans()),
    st.builds(RegexMatching, pattern=st.sampled_from([r"\d+", r"^a", r"[A-Z]{2}", "ok"])),
    st.builds(JsonValid, parse=st.booleans()),
)
_checks: st.SearchStrategy[Check] = st.recursive(
    _leaf_checks,
    lambda inner: (
        st.builds(AllOf, checks=st.lists(inner, min_size=1, max_size=3))
        | st.builds(AnyOf, checks=st.lists(inner, min_size=1, max_size=3))
        | st.builds(Not, check=inner)
    ),
    max_leaves=4,
)


@st.composite
def _scenarios(draw: st.DrawFn) -> Scenario:
    scenario = Scenario(
        draw(_text),
        tags=draw(st.lists(st.sampled_from(["a:1", "a:2", "b", "c:"]), max_size=3)),
        annotations=draw(st.dictionaries(_text, _value, max_size=2)),
    )
    for _ in range(draw(st.integers(0, 3))):
        for _ in range(draw(st.integers(1, 2))):
            scenario.interact(draw(_value), draw(_value))
        for check in draw(st.lists(_checks, max_size=2)):
            scenario.check(check)
    return scenario


def _verdicts(result: Any) -> list[list[tuple[str, str | None]]]:
    return [[(r.status.value, r.message) for r in step.results] for step in result.steps]


@settings(max_examples=60, deadline=None)
@given(_scenarios())
def test_scenario_json_round_trip_reruns_to_the_same_verdicts(scenario: Scenario) -> None:
    data = scenario.model_dump(mode="json")
    again = Scenario.model_validate(data)
    assert again.model_dump(mode="json") == data
    first = scenario.run_sync(return_exception=True)
    second = again.run_sync(return_exception=True)
    assert first.status == second.status
    assert _verdicts(first) == _verdicts(second)


@settings(max_examples=30, deadline=None)
@given(st.lists(_scenarios(), max_size=4))
def test_suite_result_json_round_trip_keeps_every_verdict(scenarios: list[Scenario]) -> None:
    result = Suite(name="prop", scenarios=scenarios).run_sync(return_exception=True, verbose=False)
    again = SuiteResult.model_validate_json(result.model_dump_json())
    assert again.suite is None
    assert [r.status for r in again.results] == [r.status for r in result.results]
    assert [_verdicts(r) for r in again.results] == [_verdicts(r) for r in result.results]
    assert again.pass_rate == result.pass_rate
    assert again.model_dump(mode="json") == result.model_dump(mode="json")
