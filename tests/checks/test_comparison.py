from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from scenarist.checks import (
    Check,
    Equals,
    GreaterThan,
    GreaterThanEquals,
    LessThan,
    LessThanEquals,
    NotEquals,
)
from scenarist.model.paths import NoMatch
from scenarist.model.results import CheckStatus

from .conftest import CheckRunner, TraceFactory


@pytest.mark.parametrize(
    ("check_type", "actual", "expected", "status", "message"),
    [
        (Equals, "a", "a", "pass", "The actual value 'a' is equal to the expected value 'a'."),
        (Equals, "b", "a", "fail", "Expected value equal to 'a' but got 'b'"),
        (Equals, 1, 1, "pass", "The actual value 1 is equal to the expected value 1."),
        (Equals, 2, 1, "fail", "Expected value equal to 1 but got 2"),
        (Equals, {"a": 2}, {"a": 1}, "fail", "Expected value equal to {'a': 1} but got {'a': 2}"),
        (
            NotEquals,
            "b",
            "a",
            "pass",
            "The actual value 'b' is not equal to the expected value 'a'.",
        ),
        (NotEquals, "a", "a", "fail", "Expected value not equal to 'a' but got 'a'"),
        (LessThan, 3, 5, "pass", "The actual value 3 is less than the expected value 5."),
        (LessThan, 7, 5, "fail", "Expected value less than 5 but got 7"),
        (
            LessThanEquals,
            5,
            5,
            "pass",
            "The actual value 5 is less than or equal to the expected value 5.",
        ),
        (LessThanEquals, 7, 5, "fail", "Expected value less than or equal to 5 but got 7"),
        (GreaterThan, 7, 5, "pass", "The actual value 7 is greater than the expected value 5."),
        (GreaterThan, 3, 5, "fail", "Expected value greater than 5 but got 3"),
        (
            GreaterThanEquals,
            5,
            5,
            "pass",
            "The actual value 5 is greater than or equal to the expected value 5.",
        ),
        (GreaterThanEquals, 3, 5, "fail", "Expected value greater than or equal to 5 but got 3"),
    ],
)
def test_comparison_verdicts_and_messages(
    make_trace: TraceFactory,
    run: CheckRunner,
    check_type: type[Check],
    actual: Any,
    expected: Any,
    status: str,
    message: str,
) -> None:
    result = run(check_type(expected_value=expected), make_trace(actual))
    assert result.status == status
    assert result.message == message
    assert result.details == {"actual_value": actual, "expected_value": expected}


def test_equals_normalises_nfkc_by_default(make_trace: TraceFactory, run: CheckRunner) -> None:
    result = run(Equals(expected_value="ﬁ"), make_trace("fi"))
    assert result.passed
    assert result.message == "The actual value 'fi' is equal to the expected value 'ﬁ'."
    assert result.details == {"actual_value": "fi", "expected_value": "ﬁ"}


def test_equals_without_normalisation_compares_exactly(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    assert run(Equals(expected_value="ﬁ", normalization_form=None), make_trace("fi")).failed
    assert run(Equals(expected_value="a", normalization_form=None), make_trace(" a")).failed


def test_equals_ignores_surrounding_and_repeated_whitespace(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    check = Equals(expected_value={"city": "New York"})
    assert run(check, make_trace({"city": "  New \n York\n"})).passed


def test_equals_normalises_strings_inside_lists(make_trace: TraceFactory, run: CheckRunner) -> None:
    assert run(Equals(expected_value=["fi", ("x",)]), make_trace(["ﬁ ", ("x\n",)])).passed


def test_equals_expected_none_matches_none(make_trace: TraceFactory, run: CheckRunner) -> None:
    result = run(Equals(expected_value=None), make_trace(None))
    assert result.passed
    assert result.message == "The actual value None is equal to the expected value None."


def test_equals_expected_value_key_reads_the_trace(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    check = Equals(expected_value_key="trace.last.inputs")
    passing = run(check, make_trace("in"))
    assert passing.message == "The actual value 'in' is equal to the expected value 'in'."
    failing = run(check, make_trace("out"))
    assert failing.message == "Expected value equal to 'in' but got 'out'"


def test_equals_missing_expected_value_key_errors(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    result = run(Equals(expected_value_key="trace.annotations.nope"), make_trace("out"))
    assert result.status is CheckStatus.ERROR
    assert result.message == "No value found for expected value key 'trace.annotations.nope'."
    assert result.details == {
        "actual_value": "out",
        "expected_value": NoMatch("trace.annotations.nope"),
    }


def test_equals_missing_target_key_errors_naming_the_key(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    check = Equals(expected_value="a", target_key="trace.last.metadata.zz")
    result = run(check, make_trace("a"))
    assert result.errored
    assert (
        result.message
        == "No value found for key 'trace.last.metadata.zz', expected a value equal to 'a'."
    )
    assert result.details["actual_value"] == NoMatch("trace.last.metadata.zz")


def test_less_than_missing_target_key_names_the_comparison(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    result = run(LessThan(expected_value=1, target_key="trace.annotations.nope"), make_trace(0))
    assert result.message == (
        "No value found for key 'trace.annotations.nope', expected a value less than 1."
    )


def test_equals_on_an_empty_trace_errors(make_trace: TraceFactory, run: CheckRunner) -> None:
    result = run(Equals(expected_value="a"), make_trace())
    assert result.errored
    assert result.message == (
        "No value found for key 'trace.last.outputs', expected a value equal to 'a'."
    )


@pytest.mark.parametrize(
    ("check", "actual", "message"),
    [
        (
            LessThan(expected_value=5),
            "abc",
            "Comparison not supported: str does not support < comparison with int",
        ),
        (
            GreaterThan(expected_value=5),
            None,
            "Comparison not supported: NoneType does not support > comparison with int",
        ),
    ],
)
def test_comparison_type_error_is_an_error_result(
    make_trace: TraceFactory, run: CheckRunner, check: Check, actual: Any, message: str
) -> None:
    result = run(check, make_trace(actual))
    assert result.status is CheckStatus.ERROR
    assert result.message == message


@pytest.mark.parametrize(
    ("check", "actual", "status", "message"),
    [
        (
            Equals(expected_value="a", match="any"),
            ["x", "a"],
            "pass",
            "At least one value in ['x', 'a'] is equal to 'a'.",
        ),
        (
            Equals(expected_value="a", match="any"),
            ["x", "y"],
            "fail",
            "Expected at least one value equal to 'a' but none matched in ['x', 'y'].",
        ),
        (
            Equals(expected_value="a", match="all"),
            ["a", "a"],
            "pass",
            "All values in ['a', 'a'] are equal to 'a'.",
        ),
        (
            Equals(expected_value="a", match="all"),
            ["a", "y"],
            "fail",
            "Expected all values equal to 'a' but got ['a', 'y'].",
        ),
        (
            Equals(expected_value="a", match="none"),
            ["x", "y"],
            "pass",
            "No value in ['x', 'y'] is equal to 'a'.",
        ),
        (
            Equals(expected_value="a", match="none"),
            ["a", "y"],
            "fail",
            "Expected no value equal to 'a' but found matches in ['a'].",
        ),
        (
            Equals(expected_value="a", match="any"),
            [],
            "fail",
            "Expected at least one value equal to 'a' but none matched in [].",
        ),
        (Equals(expected_value="a", match="all"), [], "pass", "All values in [] are equal to 'a'."),
        (Equals(expected_value="a", match="none"), [], "pass", "No value in [] is equal to 'a'."),
        (
            Equals(expected_value="a", match="any"),
            ("x", "a"),
            "pass",
            "At least one value in ('x', 'a') is equal to 'a'.",
        ),
        (
            LessThan(expected_value=2, match="any"),
            [5, 6],
            "fail",
            "Expected at least one value less than 2 but none matched in [5, 6].",
        ),
        (
            LessThan(expected_value=2, match="all"),
            [1, 6],
            "fail",
            "Expected all values less than 2 but got [1, 6].",
        ),
        (
            LessThan(expected_value=2, match="none"),
            [1, 6],
            "fail",
            "Expected no value less than 2 but found matches in [1].",
        ),
        (
            Equals(expected_value="fi", match="all"),
            ["ﬁ", " fi "],
            "pass",
            "All values in ['ﬁ', ' fi '] are equal to 'fi'.",
        ),
    ],
)
def test_comparison_match_modes(
    make_trace: TraceFactory,
    run: CheckRunner,
    check: Check,
    actual: Any,
    status: str,
    message: str,
) -> None:
    result = run(check, make_trace(actual))
    assert result.status == status
    assert result.message == message


@pytest.mark.parametrize("match", ["any", "all", "none"])
@pytest.mark.parametrize("actual", ["abc", 3, {"a": 1}, None])
def test_comparison_match_on_a_non_collection_errors(
    make_trace: TraceFactory, run: CheckRunner, match: Any, actual: Any
) -> None:
    result = run(Equals(expected_value="a", match=match), make_trace(actual))
    assert result.errored
    assert result.message == (
        f"Expected a list, set, or tuple at key 'trace.last.outputs' when match is "
        f"'{match}', but got {type(actual).__name__}."
    )


def test_comparison_match_items_that_cannot_compare_error(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    result = run(LessThan(expected_value=2, match="any"), make_trace(["a", 1]))
    assert result.errored
    assert result.message == (
        "Comparison not supported: items in list do not support < comparison with int"
    )


def test_comparison_match_over_a_wildcard_path(make_trace: TraceFactory, run: CheckRunner) -> None:
    trace = make_trace("x", "a")
    key = "trace.interactions[*].outputs"
    assert run(Equals(expected_value="a", match="any", target_key=key), trace).passed
    result = run(Equals(expected_value="a", match="all", target_key=key), trace)
    assert result.message == "Expected all values equal to 'a' but got ['x', 'a']."


def test_comparison_without_match_compares_a_list_whole(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    check = Equals(expected_value="a", target_key="trace.interactions[*].outputs")
    result = run(check, make_trace("x", "a"))
    assert result.message == "Expected value equal to 'a' but got ['x', 'a']"


def test_comparison_is_sync_and_registered_by_kind() -> None:
    assert Equals.kind == "equals"
    assert NotEquals.kind == "not_equals"
    assert LessThan.kind == "less_than"
    assert LessThanEquals.kind == "less_than_equals"
    assert GreaterThan.kind == "greater_than"
    assert GreaterThanEquals.kind == "greater_than_equals"


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({}, "Exactly one of 'expected_value' or 'expected_value_key' must be provided"),
        (
            {"expected_value": "x", "expected_value_key": "trace.last.inputs"},
            "Exactly one of 'expected_value' or 'expected_value_key' must be provided",
        ),
        ({"expected_valu": 1}, "expected_valu\n  Extra inputs are not permitted"),
        ({"expected_value": 1, "target_key": "outputs.x"}, "target_key\n"),
        ({"expected_value": 1, "target_key": "trace.last.outputs["}, "target_key\n"),
        ({"expected_value_key": "outputs.x"}, "expected_value_key\n"),
        ({"expected_value": 1, "normalization_form": "NFX"}, "normalization_form\n"),
        ({"expected_value": 1, "match": "some"}, "match\n  Input should be 'any', 'all' or 'none'"),
        ({"expected_value": 1, "target_key": 3}, "target_key\n  Input should be a valid string"),
    ],
)
def test_comparison_construction_rejects_bad_arguments(kwargs: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValidationError) as info:
        Equals(**kwargs)
    assert needle in str(info.value)


def test_comparison_both_and_neither_messages_say_which() -> None:
    with pytest.raises(ValidationError, match=r"not both or neither \(got neither\)"):
        NotEquals()
    with pytest.raises(ValidationError, match=r"not both or neither \(got both\)"):
        NotEquals(expected_value=None, expected_value_key="trace.last.inputs")


def test_comparison_dump_leaves_out_what_was_not_given() -> None:
    assert Equals(expected_value="a").to_spec() == {
        "kind": "equals",
        "target_key": "trace.last.outputs",
        "expected_value": "a",
        "normalization_form": "NFKC",
    }
    assert Equals(expected_value_key="trace.last.inputs", match="all").to_spec() == {
        "kind": "equals",
        "target_key": "trace.last.outputs",
        "expected_value_key": "trace.last.inputs",
        "normalization_form": "NFKC",
        "match": "all",
    }
