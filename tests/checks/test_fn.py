from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from scenarist.checks import AllOf, Check, FnCheck, Not, from_fn
from scenarist.errors import SerializationError
from scenarist.model.results import CheckResult
from scenarist.model.trace import Trace

from .conftest import CheckRunner, TraceFactory


def has_interactions(trace: Trace[Any, Any]) -> bool:
    return len(trace.interactions) > 0


def test_fn_check_true_passes_and_false_fails_without_default_messages(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    check = from_fn(has_interactions)
    passing = run(check, make_trace("x"))
    assert (passing.passed, passing.message, passing.details) == (True, None, {})
    failing = run(check, make_trace())
    assert (failing.failed, failing.message, failing.details) == (True, None, {})


def test_fn_check_uses_configured_messages_and_details(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    check = from_fn(
        has_interactions, success_message="yep", failure_message="nope", details={"k": 1}
    )
    assert run(check, make_trace("x")).message == "yep"
    failing = run(check, make_trace())
    assert failing.message == "nope"
    assert failing.details == {"k": 1}


def test_fn_check_returned_check_result_is_used_as_is(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    verdict = CheckResult.failure("custom", details={"why": "because"})
    result = run(from_fn(lambda trace: verdict, success_message="ignored"), make_trace("x"))
    assert result == verdict


def test_fn_check_accepts_an_async_function(make_trace: TraceFactory, run: CheckRunner) -> None:
    async def last_is_polite(trace: Trace[Any, Any]) -> bool:
        return "please" in trace.last.outputs

    check = from_fn(last_is_polite)
    assert run(check, make_trace("yes please")).passed
    assert run(check, make_trace("no")).failed


@pytest.mark.anyio
async def test_fn_check_run_is_a_coroutine(make_trace: TraceFactory) -> None:
    result = await from_fn(lambda trace: True).run(make_trace("x"))
    assert result.passed


@pytest.mark.parametrize(
    ("returned", "shown"),
    [(None, "NoneType (value: None)"), (1, "int (value: 1)"), ("yes", "str (value: 'yes')")],
)
def test_fn_check_other_return_types_raise_type_error(
    make_trace: TraceFactory, run: CheckRunner, returned: Any, shown: str
) -> None:
    check = from_fn(lambda trace: returned)
    with pytest.raises(TypeError) as info:
        run(check, make_trace("x"))
    assert str(info.value) == (
        f"from_fn callable must return bool or CheckResult (or awaitable thereof), but got {shown}"
    )


def test_fn_check_exceptions_propagate(make_trace: TraceFactory, run: CheckRunner) -> None:
    with pytest.raises(ZeroDivisionError):
        run(from_fn(lambda trace: 1 / 0), make_trace("x"))


def test_from_fn_sets_name_and_description() -> None:
    check = from_fn(has_interactions, name="has_turns", description="at least one turn")
    assert isinstance(check, FnCheck)
    assert (check.name, check.description, check.kind) == ("has_turns", "at least one turn", "fn")
    assert check.label == "has_turns"


def test_fn_check_requires_a_callable() -> None:
    with pytest.raises(ValidationError, match="fn"):
        FnCheck(fn="not callable")
    with pytest.raises(ValidationError, match="fn\n  Field required"):
        FnCheck()


def test_fn_check_json_dump_raises_serialization_error() -> None:
    check = from_fn(has_interactions, name="turns")
    with pytest.raises(SerializationError, match="cannot be written to JSON") as info:
        check.model_dump(mode="json")
    assert "'has_interactions'" in str(info.value)
    assert "FnCheck 'turns'" in str(info.value)
    with pytest.raises(SerializationError):
        check.model_dump_json()


@pytest.mark.parametrize("wrap", [lambda c: AllOf(checks=[c]), lambda c: Not(check=Not(check=c))])
def test_fn_check_inside_a_composite_json_dump_raises_serialization_error(wrap: Any) -> None:
    composite = wrap(from_fn(has_interactions))
    with pytest.raises(SerializationError, match="has_interactions"):
        composite.model_dump(mode="json")
    with pytest.raises(SerializationError, match="has_interactions"):
        composite.model_dump_json()


def test_fn_check_python_dump_keeps_the_function() -> None:
    check = from_fn(has_interactions, failure_message="none")
    data = check.model_dump()
    assert data["fn"] is has_interactions
    assert Check.model_validate(data) == check
    assert check.copy_with(name="renamed").fn is has_interactions


def test_fn_check_spec_leaves_the_function_out() -> None:
    check = from_fn(has_interactions, name="n", details={"k": 1})
    assert check.to_spec() == {"kind": "fn", "details": {"k": 1}}
    nested = AllOf(checks=[check]).to_spec()
    assert nested == {
        "kind": "all_of",
        "checks": [{"kind": "fn", "name": "n", "details": {"k": 1}}],
    }
    json.dumps(nested)
