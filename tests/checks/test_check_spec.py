"""Each verdict's ``details["check_spec"]``: giskard-checks' ``to_spec()`` of its check,
one dict per check shared by its verdicts (``scenarist.checks._spec``)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from pydantic import field_serializer

from scenarist import (
    AllOf,
    AnyOf,
    Check,
    CheckResult,
    Equals,
    FnCheck,
    GreaterThan,
    Interaction,
    JsonValid,
    LLMJudge,
    Not,
    RegexMatching,
    Scenario,
    StringMatching,
    TestCase,
    Trace,
)
from scenarist.checks._spec import check_spec


def _is_short(trace: Any) -> bool:
    return len(str(trace.last.outputs)) < 20


class Unregistered(Check):
    limit: int = 3
    label_text: str | None = None

    def run(self, trace: Trace[Any, Any]) -> CheckResult:
        return CheckResult.success()


@Check.register("test_spec_shouts")
class Shouts(Check):
    word: str = "hi"

    @field_serializer("word")
    def _upper(self, value: str) -> str:
        return value.upper()

    def run(self, trace: Trace[Any, Any]) -> CheckResult:
        return CheckResult.success()


@Check.register("test_spec_raises")
class SpecRaises(Check):
    def run(self, trace: Trace[Any, Any]) -> CheckResult:
        return CheckResult.success()

    def to_spec(self) -> dict[str, Any]:
        raise RuntimeError("no spec today")


SPECS: list[tuple[Check, dict[str, Any]]] = [
    (
        Equals(name="eq", description="d", expected_value="x"),
        {
            "kind": "equals",
            "target_key": "trace.last.outputs",
            "expected_value": "x",
            "normalization_form": "NFKC",
        },
    ),
    # None values are left out, as giskard-checks' to_spec does (exclude_none)
    (
        Equals(expected_value=None),
        {"kind": "equals", "target_key": "trace.last.outputs", "normalization_form": "NFKC"},
    ),
    (JsonValid(), {"kind": "json_valid", "target_key": "trace.last.outputs", "parse": True}),
    (LLMJudge(prompt="ok?"), {"kind": "llm_judge", "prompt": "ok?"}),
    (FnCheck(fn=_is_short, name="short"), {"kind": "fn", "details": {}}),
    # nested checks keep their names; their None descriptions are left out
    (
        AllOf(checks=[FnCheck(fn=_is_short, name="short"), Not(check=FnCheck(fn=_is_short))]),
        {
            "kind": "all_of",
            "checks": [
                {"kind": "fn", "name": "short", "details": {}},
                {"kind": "not", "check": {"kind": "fn", "details": {}}},
            ],
        },
    ),
    # an unregistered check has no kind in its spec (giskard leaves the None kind out)
    (Unregistered(name="u"), {"limit": 3}),
    (SpecRaises(), {"kind": "test_spec_raises"}),
    # a class whose dump changes a value: the spec is its dump's, not its field's
    (Shouts(word="hey"), {"kind": "test_spec_shouts", "word": "HEY"}),
]


@pytest.mark.parametrize(("check", "expected"), SPECS, ids=lambda v: type(v).__name__)
def test_check_spec_is_giskards_to_spec(check: Check, expected: dict[str, Any]) -> None:
    assert check_spec(check) == expected
    json.dumps(expected)


def test_check_spec_of_plain_checks_equals_pydantics_dump_of_them() -> None:
    # the spec read from the fields directly is what to_spec() gives (1, 1.0 and True differ)
    for check in (
        Equals(expected_value=1),
        Equals(expected_value=1.0),
        Equals(expected_value=True),
        Equals(expected_value=float("nan")),
        Equals(expected_value=[1, 2]),
        GreaterThan(expected_value=3),
        RegexMatching(pattern="a+"),
        StringMatching(keyword="ok", case_sensitive=False),
        FnCheck(fn=_is_short, details={"k": 1}, failure_message="too long"),
        AnyOf(checks=[Equals(expected_value=1)]),
    ):
        spec = check_spec(check)
        assert spec == check.to_spec()
        assert [type(v) for v in spec.values()] == [type(v) for v in check.to_spec().values()]


def test_every_verdict_of_a_check_holds_the_same_spec_not_a_copy() -> None:
    check = StringMatching(name="sm", keyword="ok")
    scenario = Scenario("shared").interact("q", "ok").check(check).interact("r", "ok").check(check)
    first, second = (step.results[0].details["check_spec"] for step in scenario.run_sync().steps)
    again = scenario.run_sync().steps[0].results[0].details["check_spec"]
    assert first == check.to_spec()
    assert first is second is again


def test_equal_plain_checks_share_one_spec() -> None:
    one, two = StringMatching(keyword="shared-spec"), StringMatching(keyword="shared-spec")
    assert check_spec(one) is check_spec(two)
    assert check_spec(Equals(expected_value=1)) is not check_spec(Equals(expected_value=True))


def test_assigning_a_field_gives_the_next_verdict_a_new_spec() -> None:
    check = Equals(expected_value="a")
    scenario = Scenario("changed").interact("q", "b").check(check)
    before = scenario.run_sync().steps[0].results[0].details["check_spec"]
    check.expected_value = "b"
    after = scenario.run_sync().steps[0].results[0].details["check_spec"]
    assert before["expected_value"] == "a" and after["expected_value"] == "b"


def test_copies_of_a_check_make_their_own_spec() -> None:
    check = Equals(expected_value="a")
    spec = check_spec(check)
    changed = check.model_copy(update={"expected_value": "z"})
    assert check_spec(changed)["expected_value"] == "z"
    assert check_spec(copy.deepcopy(check)) == spec
    # the kept spec is not a field: equality and dumps do not see it
    assert check == Equals(expected_value="a")
    assert "_scenarist_spec" not in check.model_dump()


def test_skipped_and_errored_verdicts_carry_the_spec_too() -> None:
    def boom(inputs: str) -> str:
        raise ValueError("agent down")

    later = Equals(expected_value="x", name="later")
    result = (
        Scenario("skips")
        .interact("q")
        .check(Equals(expected_value="y", name="first"))
        .interact("r", "x")
        .check(later)
        .run_sync(target=boom, return_exception=True)
    )
    skipped_by_error = result.steps[0].results[0]
    skipped_later = result.steps[1].results[0]
    assert skipped_by_error.status == "skip" and skipped_later.status == "skip"
    assert skipped_by_error.details["check_spec"]["expected_value"] == "y"
    assert skipped_later.details["check_spec"] is check_spec(later)


def test_a_lone_test_case_stamps_the_spec() -> None:
    trace = Trace().with_interaction(Interaction(inputs="q", outputs="ok"))
    case = TestCase(trace=trace, checks=[StringMatching(keyword="ok")])
    verdict = case.run_sync().results[0]
    assert verdict.details["check_spec"]["keyword"] == "ok"


def test_a_step_without_checks_has_no_spec() -> None:
    result = (
        Scenario("empty step")
        .interact("q", "a")
        .check(Equals(expected_value="b"))
        .interact("r", "c")
        .run_sync()
    )
    synthetic = result.steps[1].results[0]
    assert synthetic.details["check_kind"] == "step"
    assert "check_spec" not in synthetic.details
