"""Every built-in kind survives a JSON round trip and keeps its verdict."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from scenarist.checks import (
    AllOf,
    AnyOf,
    Check,
    Contains,
    Equals,
    GreaterThan,
    GreaterThanEquals,
    JsonValid,
    LengthBetween,
    LessThan,
    LessThanEquals,
    Not,
    NotEquals,
    RegexMatching,
    StringMatching,
)
from scenarist.model.trace import Trace

from .conftest import CheckRunner, TraceFactory

SAMPLES: list[Check] = [
    Equals(expected_value={"a": [1, "x"]}, name="eq", description="dict equality"),
    Equals(expected_value=None),
    Equals(expected_value_key="trace.last.inputs", normalization_form=None),
    NotEquals(expected_value="b", match="all"),
    LessThan(expected_value=10, target_key="trace.last.metadata.n"),
    LessThanEquals(expected_value=5, target_key="trace.last.metadata.n"),
    GreaterThan(expected_value=1, target_key="trace.last.metadata.n"),
    GreaterThanEquals(expected_value=5, target_key="trace.last.metadata.n", match="any"),
    StringMatching(keyword="RES", case_sensitive=False, normalization_form="NFC"),
    StringMatching(keyword_key="trace.last.inputs", text="some input"),
    RegexMatching(pattern=r"^\{", match_timeout_seconds=0.5),
    RegexMatching(pattern_key="trace.annotations.pattern"),
    JsonValid(schema={"type": "object", "required": ["a"]}),
    JsonValid(parse=False, target_key="trace.last.metadata"),
    AllOf(checks=[Equals(expected_value='{"a": 1}'), Not(check=StringMatching(keyword="zz"))]),
    AnyOf(checks=[LessThan(expected_value=1), JsonValid()], name="any"),
    Not(check=AllOf(checks=[Equals(expected_value="x")])),
    Contains(item="a"),
    Contains(item_key="trace.last.inputs", normalization_form="NFD"),
    LengthBetween(min_length=1, max_length=100),
]

OUR_KINDS = {
    "all_of",
    "any_of",
    "contains",
    "equals",
    "fn",
    "greater_than",
    "greater_than_equals",
    "json_valid",
    "length_between",
    "less_than",
    "less_than_equals",
    "not",
    "not_equals",
    "regex_matching",
    "string_matching",
}


@pytest.fixture
def trace(make_trace: TraceFactory) -> Trace[Any, Any]:
    return make_trace(
        '{"a": 1}',
        inputs="in",
        metadata={"n": 5},
        annotations={"pattern": r"\d"},
    )


def test_registry_knows_every_built_in_kind() -> None:
    assert set(Check.kinds()) >= OUR_KINDS
    assert {type(c).kind for c in SAMPLES} | {"fn"} == OUR_KINDS


@pytest.mark.parametrize("check", SAMPLES, ids=lambda c: c.kind)
def test_registry_round_trip_keeps_the_check_and_its_verdict(
    check: Check, trace: Trace[Any, Any], run: CheckRunner
) -> None:
    data = check.model_dump(mode="json")
    assert data["kind"] == check.kind
    rebuilt = Check.model_validate(json.loads(json.dumps(data)))
    assert type(rebuilt) is type(check)
    assert rebuilt == check
    before, after = run(check, trace), run(rebuilt, trace)
    assert (after.status, after.message) == (before.status, before.message)


@pytest.mark.parametrize("check", SAMPLES, ids=lambda c: c.kind)
def test_registry_json_string_round_trip(check: Check) -> None:
    assert Check.model_validate_json(check.model_dump_json()) == check


@pytest.mark.parametrize("check", SAMPLES, ids=lambda c: c.kind)
def test_registry_spec_drops_name_and_description(check: Check) -> None:
    spec = check.to_spec()
    assert spec["kind"] == check.kind
    assert "name" not in spec
    assert "description" not in spec


@pytest.mark.parametrize(
    "data",
    [
        {"kind": "equals", "expected_valu": 1},
        {"kind": "string_matching", "keywrd": "a"},
        {"kind": "regex_matching", "pattern": "a", "timeout": 1},
        {"kind": "json_valid", "schemas": {}},
        {"kind": "not", "check": {"kind": "equals", "expected_value": 1, "target": "x"}},
        {"kind": "equalz", "expected_value": 1},
    ],
    ids=lambda d: d["kind"],
)
def test_registry_rejects_typos(data: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Check.model_validate(data)


def test_registry_typo_in_a_constructor_fails_loudly() -> None:
    with pytest.raises(ValidationError, match="expected_valu"):
        Equals(expected_valu=1)  # type: ignore[call-arg]


def test_registry_unregistered_check_has_no_kind_as_in_giskard() -> None:
    """An unregistered subclass's kind is None (giskard-checks 1.0.6: ``None``, not ``""``),
    in its dump and in what the runner stamps on its verdict."""
    from scenarist import CheckResult, Scenario

    class Unregistered(Check):
        async def run(self, trace: Trace[Any, Any]) -> CheckResult:
            return CheckResult.success()

    check = Unregistered()
    assert check.kind is None
    assert check.model_dump()["kind"] is None
    result = Scenario("s").interact(inputs="a", outputs="b").check(check).run_sync()
    verdict = result.steps[0].results[0]
    assert verdict.kind is None and verdict.details["check_kind"] is None
