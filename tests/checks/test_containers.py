from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from scenarist.checks import Contains, LengthBetween

from .conftest import CheckRunner, TraceFactory

# -- Contains ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("actual", "item"),
    [
        ("the refund was issued", "refund"),
        (["search", "book"], "book"),
        (("search", "book"), "search"),
        ({"search"}, "search"),
        ({"citations": [], "answer": "x"}, "citations"),
        ([1, 2, 3], 2),
        ("ﬁnal  answer", "final answer"),
        ([["a", "b"], ["c"]], ["c"]),
    ],
)
def test_contains_passes(
    make_trace: TraceFactory, run: CheckRunner, actual: Any, item: Any
) -> None:
    result = run(Contains(item=item), make_trace(actual))
    assert result.passed
    assert result.message == f"The value at key 'trace.last.outputs' contains {item!r}."
    assert result.details == {"actual_value": actual, "item": item}


def test_contains_fail_message(make_trace: TraceFactory, run: CheckRunner) -> None:
    result = run(Contains(item="pay"), make_trace(["search", "book"]))
    assert result.failed
    assert result.message == (
        "Expected the value at key 'trace.last.outputs' to contain 'pay' but got ['search', 'book']"
    )


def test_contains_looks_at_dict_keys_not_values(make_trace: TraceFactory, run: CheckRunner) -> None:
    assert run(Contains(item="x"), make_trace({"answer": "x"})).failed


@pytest.mark.parametrize("actual", [3, None, 2.5])
def test_contains_on_a_non_container_errors(
    make_trace: TraceFactory, run: CheckRunner, actual: Any
) -> None:
    result = run(Contains(item="a"), make_trace(actual))
    assert result.errored
    assert result.message == (
        "Expected a string, list, tuple, set or dict at key 'trace.last.outputs', "
        f"but got {type(actual).__name__}."
    )


def test_contains_non_string_item_in_a_string_errors(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    result = run(Contains(item=1), make_trace("a1"))
    assert result.errored
    assert "the item must be a string too, but got int" in result.message


def test_contains_unhashable_item_in_a_set_errors(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    result = run(Contains(item=["a"]), make_trace({"a"}))
    assert result.errored
    assert result.message.startswith("Cannot look for ['a'] in the set at key 'trace.last.outputs'")


def test_contains_item_key_and_missing_keys(make_trace: TraceFactory, run: CheckRunner) -> None:
    trace = make_trace(["in", "out"])
    assert run(Contains(item_key="trace.last.inputs"), trace).passed
    missing_item = run(Contains(item_key="trace.annotations.nope"), trace)
    assert missing_item.message == "No value found for item key 'trace.annotations.nope'."
    missing_target = run(Contains(item="a", target_key="trace.last.metadata.tools"), trace)
    assert missing_target.errored
    assert missing_target.message == (
        "No value found for key 'trace.last.metadata.tools', expected a value containing 'a'."
    )


@pytest.mark.parametrize("kwargs", [{}, {"item": "a", "item_key": "trace.last.inputs"}])
def test_contains_requires_exactly_one_item(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="Exactly one of 'item' or 'item_key'"):
        Contains(**kwargs)


def test_contains_item_none_is_a_value(make_trace: TraceFactory, run: CheckRunner) -> None:
    assert run(Contains(item=None), make_trace([None, 1])).passed


# -- LengthBetween -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bounds", "actual", "status", "message"),
    [
        (
            {"min_length": 1, "max_length": 5},
            "abc",
            "pass",
            "The value at key 'trace.last.outputs' has length 3, between 1 and 5.",
        ),
        (
            {"min_length": 1, "max_length": 2},
            "abc",
            "fail",
            "Expected a length between 1 and 2 at key 'trace.last.outputs' but got 3",
        ),
        (
            {"min_length": 4},
            [1, 2],
            "fail",
            "Expected a length at least 4 at key 'trace.last.outputs' but got 2",
        ),
        (
            {"max_length": 2},
            {"a": 1, "b": 2},
            "pass",
            "The value at key 'trace.last.outputs' has length 2, at most 2.",
        ),
        (
            {"min_length": 0, "max_length": 0},
            [],
            "pass",
            "The value at key 'trace.last.outputs' has length 0, between 0 and 0.",
        ),
    ],
)
def test_length_between_verdicts(
    make_trace: TraceFactory,
    run: CheckRunner,
    bounds: dict[str, int],
    actual: Any,
    status: str,
    message: str,
) -> None:
    result = run(LengthBetween(**bounds), make_trace(actual))
    assert result.status == status
    assert result.message == message
    assert result.details["length"] == len(actual)


def test_length_between_without_length_errors(make_trace: TraceFactory, run: CheckRunner) -> None:
    result = run(LengthBetween(max_length=3), make_trace(12))
    assert result.errored
    assert result.message == "Value at key 'trace.last.outputs' has no length: got int."


def test_length_between_missing_key_errors(make_trace: TraceFactory, run: CheckRunner) -> None:
    result = run(LengthBetween(max_length=3), make_trace())
    assert result.errored
    assert result.message == (
        "No value found for key 'trace.last.outputs', expected a length at most 3."
    )


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({}, "needs at least one bound"),
        ({"min_length": 3, "max_length": 1}, "'min_length' (3) is greater than 'max_length' (1)"),
        ({"min_length": -1}, "min_length\n  Input should be greater than or equal to 0"),
        ({"max_len": 3}, "max_len\n  Extra inputs are not permitted"),
    ],
)
def test_length_between_rejects_bad_bounds(kwargs: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValidationError) as info:
        LengthBetween(**kwargs)
    assert needle in str(info.value)
