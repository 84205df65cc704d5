from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from scenarist import (
    Check,
    CheckResult,
    Equals,
    FnCheck,
    Interact,
    Scenario,
    Step,
    StringMatching,
    Suite,
)


def test_scenario_groups_interactions_then_checks_into_steps() -> None:
    scenario = (
        Scenario("grouping")
        .interact("a", "1")
        .interact("b", "2")
        .check(Equals(expected_value="2"))
        .check(StringMatching(keyword="2"))
        .interact("c", "3")
    )
    assert [(len(s.interacts), len(s.checks)) for s in scenario.steps] == [(2, 2), (1, 0)]


def test_scenario_check_without_interaction_opens_a_step() -> None:
    scenario = Scenario().check(Equals(expected_value=1)).interact("x", 1)
    assert [(len(s.interacts), len(s.checks)) for s in scenario.steps] == [(0, 1), (1, 0)]


def test_scenario_builder_mutates_and_returns_self() -> None:
    scenario = Scenario("s")
    assert scenario.interact("a", "b") is scenario
    assert scenario.check(Equals(expected_value="b")) is scenario
    assert scenario.with_tags(["k:v"]) is scenario
    assert (
        scenario.extend(Interact(inputs="c", outputs="d"), Equals(expected_value="d")) is scenario
    )
    assert len(scenario.steps) == 2


def test_scenario_name_positional_or_keyword_with_default() -> None:
    assert Scenario("x").name == "x"
    assert Scenario(name="y").name == "y"
    assert Scenario().name == "Unnamed Scenario"


def test_scenario_with_tags_replaces_tags() -> None:
    scenario = Scenario("t", tags=["a:1"]).with_tags(["b:2", "smoke"])
    assert scenario.tags == ["b:2", "smoke"]


@pytest.mark.parametrize("value", [0, -1, True, 1.0, "2"])
def test_scenario_multiple_runs_rejects_non_positive_ints_and_bools(value: Any) -> None:
    with pytest.raises(ValidationError, match="multiple_runs"):
        Scenario("m", multiple_runs=value)


def test_scenario_rejects_a_string_as_tags() -> None:
    with pytest.raises(ValidationError, match="tags must be a list"):
        Scenario("t", tags="smoke")  # type: ignore[arg-type]


def test_scenario_rejects_unknown_fields() -> None:
    with pytest.raises(ValidationError, match="multiple_run"):
        Scenario("t", multiple_run=2)


def test_a_non_check_is_taken_then_the_run_raises_at_its_step_with_the_fix() -> None:
    # giskard-checks: .check() appends anything; running the step fails validation
    calls: list[str] = []

    def agent(inputs: str) -> str:
        calls.append(inputs)
        return inputs

    scenario = (
        Scenario("misuse")
        .interact("first")
        .check(Equals(expected_value="first"))
        .interact("second")
        .check(Equals(expected_value="second"))
        .check(lambda trace: True)  # type: ignore[arg-type]
    )
    for return_exception in (False, True):
        calls.clear()
        with pytest.raises(ValidationError, match=r"checks\.1\n.*is not a check.*from_fn") as info:
            scenario.run_sync(target=agent, return_exception=return_exception)
        assert isinstance(info.value, ValueError)
        assert calls == ["first", "second"]  # raised at the step, as giskard-checks


def test_a_non_check_in_a_skipped_step_raises_too() -> None:
    scenario = (
        Scenario("misuse").interact("a", "b").check(Equals(expected_value="x")).interact("c", "d")
    )
    scenario.check("not a check")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="'not a check' is not a check"):
        scenario.run_sync()


def test_with_tags_takes_a_string_as_given_and_a_suite_run_refuses_it() -> None:
    # giskard-checks: the scenario's result records list(tags); a suite fails validation
    scenario = Scenario("t").with_tags("a,b").interact("q", "r")  # type: ignore[arg-type]
    assert scenario.run_sync().tags == ["a", ",", "b"]
    calls: list[str] = []
    suite = Suite(name="tagged", target=lambda inputs: calls.append(inputs) or inputs)
    suite.append(Scenario("fine").interact("q")).append(scenario)
    with pytest.raises(ValidationError, match=r"scenarios\.1\.tags\n.*tags must be a list"):
        suite.run_sync(verbose=False)
    assert calls == []  # refused before anything ran
    scenario.with_tags(["a", ""])  # each tag: a non-empty string
    with pytest.raises(ValidationError, match="each tag must be a non-empty string"):
        suite.run_sync(verbose=False)
    scenario.with_tags(["a", "b"])
    assert suite.run_sync(verbose=False).results[1].tags == ["a", "b"]


def test_interact_rejects_an_outputs_callable_that_cannot_be_bound() -> None:
    def needs_three(a: str, b: str, c: str) -> str:
        return a

    with pytest.raises(TypeError, match=r"cannot call .*needs_three.* as outputs"):
        Scenario().interact("x", needs_three)


def test_scenario_without_callables_round_trips_and_reruns_to_the_same_status() -> None:
    @Check.register("test_scenario_len_is")
    class LenIs(Check):
        n: int

        def run(self, trace: Any) -> CheckResult:
            ok = len(trace.interactions) == self.n
            return CheckResult.success() if ok else CheckResult.failure(f"len != {self.n}")

    scenario = (
        Scenario("saved", tags=["a:b"], multiple_runs=2, annotations={"user": "u1"})
        .interact("hi", {"text": "hello"}, metadata={"lang": "en"})
        .check(Equals(expected_value="hello", target_key="trace.last.outputs.text"))
        .interact("bye", "ciao")
        .check(LenIs(n=3))
    )
    data = scenario.model_dump(mode="json")
    assert data["steps"][0]["checks"][0]["kind"] == "equals"
    again = Scenario.model_validate(data)
    assert again.model_dump(mode="json") == data
    assert isinstance(again.steps[1].checks[0], LenIs)
    first, second = scenario.run_sync(), again.run_sync()
    assert first.status == second.status == "fail"
    assert first.steps[1].results[0].message == second.steps[1].results[0].message == "len != 3"


def test_scenario_dump_refuses_callables_with_a_clear_message() -> None:
    scenario = Scenario("code").interact("x", lambda inputs: inputs)
    with pytest.raises(Exception, match=r"cannot write '<lambda>' to JSON"):
        scenario.model_dump(mode="json")
    with pytest.raises(Exception, match=r"callable '.*<lambda>', which cannot be written to JSON"):
        Scenario().check(FnCheck(fn=lambda t: True)).model_dump(mode="json")


def test_scenario_copy_branches_without_shared_state() -> None:
    base = Scenario("base", tags=["a:1"]).interact("x", "y")
    variant = base.copy().interact("z", "w").with_tags(["b:2"])
    assert len(base.steps[0].interacts) == 1
    assert len(variant.steps[0].interacts) == 2
    assert base.tags == ["a:1"]


def test_step_is_a_model_with_interacts_and_checks() -> None:
    step = Step(interacts=[Interact(inputs="a", outputs="b")], checks=[Equals(expected_value="b")])
    assert Step.model_validate(step.model_dump(mode="json")) == step


def test_scenario_from_file_names_the_file_and_field(tmp_path: Any) -> None:
    good = tmp_path / "s.json"
    good.write_text(
        Scenario("f").interact("a", "b").check(Equals(expected_value="b")).model_dump_json()
    )
    assert Scenario.from_file(good).run_sync().passed
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "f", "steps": [{"checks": [{"kind": "equals", "expected_valu": 1}]}]}')
    with pytest.raises(ValueError, match=r"bad\.json: invalid Scenario: .*expected_valu"):
        Scenario.from_file(bad)
    with pytest.raises(ValueError, match="no such file"):
        Scenario.from_file(tmp_path / "missing.json")


@pytest.mark.parametrize("mock_type", ["MagicMock", "AsyncMock"])
def test_scenario_runs_a_mock_as_its_outputs_callable(mock_type: str) -> None:
    # A Mock answers every attribute, ``func`` included: treating that as a partial to
    # unwrap looped forever. giskard-checks 1.0.6 runs both kinds once (checked in its venv).
    import functools
    from unittest import mock

    fake = getattr(mock, mock_type)(return_value="hi")
    result = (
        Scenario("mocked").interact(inputs="x", outputs=fake).check(Equals(expected_value="hi"))
    ).run_sync()
    assert result.status == "pass"
    assert fake.call_count == 1
    assert fake.call_args == mock.call("x")

    async def answer(prefix: str, inputs: str) -> str:
        return f"{prefix} {inputs}"

    wrapped = functools.partial(functools.partial(answer), "re:")
    again = Scenario("partial").interact(inputs="x", outputs=wrapped)
    assert again.check(Equals(expected_value="re: x")).run_sync().status == "pass"
