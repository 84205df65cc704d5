from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from scenarist.checks import Check, JsonValid
from scenarist.model.paths import NoMatch

from .conftest import CheckRunner, TraceFactory

KEY = "trace.last.outputs"


def test_json_valid_parses_a_string(make_trace: TraceFactory, run: CheckRunner) -> None:
    result = run(JsonValid(), make_trace('{"a": 1}'))
    assert result.passed
    assert result.message == "Value at key 'trace.last.outputs' is valid JSON."
    assert result.details == {
        "target_key": KEY,
        "value": '{"a": 1}',
        "schema": None,
        "parsed_value": {"a": 1},
    }


@pytest.mark.parametrize(
    ("value", "shown"), [({"a": 1}, "{'a': 1}"), (5, "5"), (None, "None")], ids=str
)
def test_json_valid_parse_needs_a_string(
    make_trace: TraceFactory, run: CheckRunner, value: Any, shown: str
) -> None:
    result = run(JsonValid(), make_trace(value))
    assert result.errored
    assert result.message == f"Value at key 'trace.last.outputs' is not a string: {shown}"
    assert result.details == {"target_key": KEY, "value": value, "schema": None}


def test_json_valid_bad_json_fails(make_trace: TraceFactory, run: CheckRunner) -> None:
    result = run(JsonValid(), make_trace('{"a": '))
    assert result.failed
    assert result.message == (
        "Value at key 'trace.last.outputs' is not valid JSON: "
        "Expecting value: line 1 column 7 (char 6)"
    )
    assert result.details["error"] == "Expecting value: line 1 column 7 (char 6)"
    assert "parsed_value" not in result.details


@pytest.mark.parametrize("value", ['{"a": 1}', {"a": 1}, [1, "x", None]])
def test_json_valid_without_parse_takes_the_value_as_is(
    make_trace: TraceFactory, run: CheckRunner, value: Any
) -> None:
    result = run(JsonValid(parse=False), make_trace(value))
    assert result.passed
    assert result.details["parsed_value"] == value


def test_json_valid_without_parse_rejects_non_json_data(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    result = run(JsonValid(parse=False), make_trace({"when": object()}))
    assert result.failed
    # giskard-checks 1.0.6's wording for data that json.dumps refuses
    assert result.message.startswith("Value at key 'trace.last.outputs' is not JSON serializable: ")


def test_json_valid_without_parse_takes_a_structured_output_as_its_dump(
    make_trace: TraceFactory, run: CheckRunner
) -> None:
    """A pydantic model output is JSON data as giskard's trace dump holds it (a dict)."""
    from pydantic import BaseModel

    class Order(BaseModel):
        order_id: int

    check = JsonValid(parse=False, schema={"type": "object", "required": ["order_id"]})
    result = run(check, make_trace(Order(order_id=7)))
    assert result.passed
    assert result.details["parsed_value"] == {"order_id": 7}


def test_json_valid_schema_match_passes(make_trace: TraceFactory, run: CheckRunner) -> None:
    schema = {"type": "object", "required": ["a"]}
    result = run(JsonValid(schema=schema), make_trace('{"a": 1}'))
    assert result.passed
    assert result.details["schema"] == schema


@pytest.mark.parametrize(
    ("schema", "error"),
    [
        ({"type": "object", "required": ["b"]}, "'b' is a required property"),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}},
            "1 is not of type 'string'",
        ),
    ],
)
def test_json_valid_schema_mismatch_fails(
    make_trace: TraceFactory, run: CheckRunner, schema: dict[str, Any], error: str
) -> None:
    result = run(JsonValid(schema=schema), make_trace('{"a": 1}'))
    assert result.failed
    assert result.message == (
        f"JSON value at key 'trace.last.outputs' does not match the provided schema: {error}."
    )
    assert result.details["error"] == error
    assert result.details["parsed_value"] == {"a": 1}


def test_json_valid_local_ref_resolves(make_trace: TraceFactory, run: CheckRunner) -> None:
    schema = {
        "$defs": {"name": {"type": "string"}},
        "type": "object",
        "properties": {"name": {"$ref": "#/$defs/name"}},
    }
    assert run(JsonValid(schema=schema), make_trace('{"name": "Ada"}')).passed
    assert run(JsonValid(schema=schema), make_trace('{"name": 1}')).failed


@pytest.mark.parametrize(
    "ref", ["#/$defs/missing", "https://example.invalid/schema.json"], ids=["local", "remote"]
)
def test_json_valid_unresolvable_ref_errors(
    make_trace: TraceFactory, run: CheckRunner, ref: str
) -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": ref}}}
    result = run(JsonValid(schema=schema), make_trace('{"a": 1}'))
    assert result.errored
    assert result.message.startswith(
        "The JSON Schema for key 'trace.last.outputs' has a reference that cannot be resolved"
    )
    assert result.message.endswith("Inline the referenced schema or fix the '$ref'.")


def test_json_valid_invalid_schema_is_rejected_at_construction() -> None:
    with pytest.raises(ValidationError) as info:
        JsonValid(schema={"type": 12})
    text = str(info.value)
    assert "\nschema\n" in text
    assert (
        "Provided JSON Schema is invalid: 12 is not valid under any of the given schemas." in text
    )


def test_json_valid_accepts_schema_under_both_names() -> None:
    schema = {"type": "array"}
    assert JsonValid(schema=schema) == JsonValid(expected_schema=schema)
    assert JsonValid(schema=schema).expected_schema == schema


def test_json_valid_dumps_the_schema_as_schema() -> None:
    assert JsonValid(schema={"type": "array"}).to_spec() == {
        "kind": "json_valid",
        "target_key": KEY,
        "parse": True,
        "schema": {"type": "array"},
    }
    # As giskard-checks: a dump writes an unset schema (both write the same keys); a spec
    # leaves every None out.
    assert JsonValid().model_dump(mode="json")["schema"] is None
    assert JsonValid().to_spec() == {"kind": "json_valid", "target_key": KEY, "parse": True}


def test_json_valid_round_trips_with_a_schema() -> None:
    check = JsonValid(schema={"type": "object", "required": ["a"]}, parse=False)
    assert Check.model_validate(check.model_dump(mode="json")) == check


def test_json_valid_missing_key_errors(make_trace: TraceFactory, run: CheckRunner) -> None:
    result = run(JsonValid(target_key="trace.last.metadata.raw"), make_trace("{}"))
    assert result.errored
    assert result.message == (
        "No value found for key 'trace.last.metadata.raw', expected a JSON value."
    )
    assert result.details["value"] == NoMatch("trace.last.metadata.raw")


def test_json_valid_rejects_an_invalid_key() -> None:
    with pytest.raises(ValidationError, match="target_key"):
        JsonValid(target_key="last.outputs")
