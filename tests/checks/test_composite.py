from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from scenarist.checks import (
    AllOf,
    AnyOf,
    Check,
    Equals,
    FnCheck,
    LessThan,
    Not,
    StringMatching,
    from_fn,
)
from scenarist.model.results import CheckResult, CheckStatus, Metric

from .conftest import CheckRunner, TraceFactory

BROKEN = LessThan(expected_value=1)  # "a" < 1 → ERROR
BROKEN_MESSAGE = "Comparison not supported: str does not support < comparison with int"


def returning(result: CheckResult, calls: list[str] | None = None, tag: str = "") -> FnCheck:
    """An FnCheck that returns ``result`` and records that it ran."""

    def fn(trace: Any) -> CheckResult:
        if calls is not None:
            calls.append(tag)
        return result

    return from_fn(fn)


SKIPPED = CheckResult.skip("not applicable")

# -- AllOf -------------------------------------------------------------------------------


def test_all_of_pass_joins_the_messages(make_trace: TraceFactory, run: CheckRunner) -> None:
    check = AllOf(checks=[Equals(expected_value="a"), StringMatching(keyword="a")])
    result = run(check, make_trace("a"))
    assert result.passed
    assert result.message == (
        "The actual value 'a' is equal to the expected value 'a'.; "
        "The answer contains the keyword 'a'."
    )
    assert result.details == {}


def test_all_of_returns_the_first_failure_unchanged(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    calls: list[str] = []
    failing = StringMatching(keyword="b")
    check = AllOf(
        checks=[
            Equals(expected_value="a"),
            failing,
            returning(CheckResult.success(), calls, "after"),
        ]
    )
    result = run(check, make_trace("a"))
    assert result == run(failing, make_trace("a"))
    assert result.message == "The answer does not contain the keyword 'b'"
    assert calls == []


def test_all_of_returns_an_inner_error(make_trace: TraceFactory, run: CheckRunner) -> None:
    result = run(AllOf(checks=[BROKEN, Equals(expected_value="z")]), make_trace("a"))
    assert result.status is CheckStatus.ERROR
    assert result.message == BROKEN_MESSAGE
    assert result.details == {"actual_value": "a", "expected_value": 1}


def test_empty_all_of_passes_as_in_giskard_and_is_flagged_vacuous(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    result = run(AllOf(checks=[]), make_trace("a"))
    assert result.passed
    assert result.message == "All checks passed."
    assert result.vacuous
    assert result.model_dump()["vacuous"] is True


def test_a_non_empty_all_of_is_not_vacuous_and_dumps_no_flag(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    result = run(AllOf(checks=[Equals(expected_value="a")]), make_trace("a"))
    assert result.passed
    assert not result.vacuous
    assert "vacuous" not in result.model_dump()


def test_empty_any_of_constructs_and_fails(make_trace: TraceFactory, run: CheckRunner) -> None:
    result = run(AnyOf(checks=[]), make_trace("a"))
    assert result.failed
    assert result.message == "All checks failed."


def test_all_of_ignores_skips(make_trace: TraceFactory, run: CheckRunner) -> None:
    check = AllOf(checks=[returning(SKIPPED), Equals(expected_value="a")])
    result = run(check, make_trace("a"))
    assert result.passed
    assert result.message == "The actual value 'a' is equal to the expected value 'a'."


def test_all_of_all_skipped_is_skip(make_trace: TraceFactory, run: CheckRunner) -> None:
    result = run(AllOf(checks=[returning(SKIPPED), returning(SKIPPED)]), make_trace("a"))
    assert result.skipped
    assert result.message == "All checks were skipped. Details: not applicable; not applicable"


def test_all_of_gathers_metrics_of_passing_checks(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    scored = CheckResult.success("ok", metrics=[Metric(name="similarity", value=0.9)])
    result = run(AllOf(checks=[returning(scored), returning(CheckResult.success())]), make_trace())
    assert result.metrics == [Metric(name="similarity", value=0.9)]
    assert result.message == "ok"


# -- AnyOf -------------------------------------------------------------------------------


def test_any_of_returns_the_first_pass_and_stops(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    calls: list[str] = []
    check = AnyOf(
        checks=[
            Equals(expected_value="z"),
            StringMatching(keyword="a"),
            returning(CheckResult.failure(), calls, "after"),
        ]
    )
    result = run(check, make_trace("a"))
    assert result.passed
    assert result.message == "The answer contains the keyword 'a'."
    assert result.details["keyword"] == "a"
    assert calls == []


def test_any_of_fail_lists_the_failures(make_trace: TraceFactory, run: CheckRunner) -> None:
    check = AnyOf(checks=[Equals(expected_value="z"), StringMatching(keyword="b")])
    result = run(check, make_trace("a"))
    assert result.failed
    assert result.message == (
        "No checks passed. Failures: Expected value equal to 'z' but got 'a'; "
        "The answer does not contain the keyword 'b'"
    )
    assert result.details == {}


def test_any_of_error_does_not_hide_a_later_pass(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    result = run(AnyOf(checks=[BROKEN, Equals(expected_value="a")]), make_trace("a"))
    assert result.passed
    assert result.message == "The actual value 'a' is equal to the expected value 'a'."


def test_any_of_error_wins_over_failures_when_nothing_passed(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    check = AnyOf(checks=[Equals(expected_value="z"), BROKEN, returning(SKIPPED)])
    result = run(check, make_trace("a"))
    assert result.errored
    assert result.message == BROKEN_MESSAGE


def test_any_of_all_skipped_is_skip(make_trace: TraceFactory, run: CheckRunner) -> None:
    result = run(AnyOf(checks=[returning(SKIPPED)]), make_trace("a"))
    assert result.skipped


def test_any_of_lists_skip_reasons_among_failures_as_giskard(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    check = AnyOf(checks=[returning(SKIPPED), Equals(expected_value="z")])
    result = run(check, make_trace("a"))
    assert result.failed
    assert result.message == (
        "No checks passed. Failures: not applicable; Expected value equal to 'z' but got 'a'"
    )


def test_any_of_all_skipped_lists_the_reasons(make_trace: TraceFactory, run: CheckRunner) -> None:
    result = run(AnyOf(checks=[returning(SKIPPED), returning(SKIPPED)]), make_trace("a"))
    assert result.skipped
    assert result.message == (
        "No checks passed and all were skipped. Details: not applicable; not applicable"
    )


# -- Not ---------------------------------------------------------------------------------


def test_not_turns_a_failure_into_a_pass(make_trace: TraceFactory, run: CheckRunner) -> None:
    result = run(Not(check=Equals(expected_value="z")), make_trace("a"))
    assert result.passed
    assert result.message == (
        "Check correctly failed (inverted): Expected value equal to 'z' but got 'a'"
    )
    assert result.details == {"actual_value": "a", "expected_value": "z"}


def test_not_turns_a_pass_into_a_failure(make_trace: TraceFactory, run: CheckRunner) -> None:
    result = run(Not(check=Equals(expected_value="a")), make_trace("a"))
    assert result.failed
    assert result.message == (
        "Expected check to fail, but it passed: "
        "The actual value 'a' is equal to the expected value 'a'."
    )
    assert result.details == {"actual_value": "a", "expected_value": "a"}


def test_not_without_inner_message(make_trace: TraceFactory, run: CheckRunner) -> None:
    assert run(Not(check=from_fn(lambda t: True)), make_trace()).message == (
        "Expected check to fail, but it passed."
    )


@pytest.mark.parametrize(
    "inner",
    [CheckResult.error("broken key", details={"k": 1}), CheckResult.skip("n/a")],
    ids=["error", "skip"],
)
def test_not_passes_error_and_skip_through(
    make_trace: TraceFactory, run: CheckRunner, inner: CheckResult
) -> None:
    assert run(Not(check=returning(inner)), make_trace("a")) == inner


def test_not_never_launders_a_missing_key(make_trace: TraceFactory, run: CheckRunner) -> None:
    check = Not(check=Equals(expected_value="a", target_key="trace.last.metadata.nope"))
    assert run(check, make_trace("a")).errored


# -- shared ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_composites_await_async_inner_checks(make_trace: TraceFactory) -> None:
    async def is_a(trace: Any) -> bool:
        return bool(trace.last.outputs == "a")

    nested = AllOf(checks=[AnyOf(checks=[from_fn(is_a)]), Not(check=Equals(expected_value="b"))])
    assert (await nested.run(make_trace("a"))).passed
    assert (await nested.run(make_trace("b"))).failed


def test_composites_rebuild_inner_checks_from_dicts(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    check = Check.model_validate(
        {
            "kind": "any_of",
            "checks": [
                {"kind": "equals", "expected_value": "z"},
                {"kind": "not", "check": {"kind": "string_matching", "keyword": "q"}},
            ],
        }
    )
    assert isinstance(check, AnyOf)
    assert isinstance(check.checks[1], Not)
    assert run(check, make_trace("a")).passed


def test_composites_reject_typos_in_inner_checks() -> None:
    with pytest.raises(ValidationError, match="expected_valu"):
        Check.model_validate({"kind": "all_of", "checks": [{"kind": "equals", "expected_valu": 1}]})
    with pytest.raises(ValidationError, match="checks"):
        AllOf(check=[Equals(expected_value=1)])
    with pytest.raises(ValidationError, match="check\n  Field required"):
        Not()
