"""``JsonValid``: the value is JSON, and optionally matches a JSON Schema."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ConfigDict, Field, field_validator

from scenarist.checks._values import DEFAULT_TARGET_KEY, KeyPath, NoMatch
from scenarist.checks.base import Check
from scenarist.model.paths import resolve
from scenarist.model.results import CheckResult
from scenarist.model.trace import Trace

__all__ = ["JsonValid"]


@Check.register("json_valid")
class JsonValid(Check):
    """The value at ``target_key`` is valid JSON and, with a ``schema``, matches it.

    With ``parse=True`` (the default) the value must be a string holding JSON; it is
    parsed, and the result is in ``details["parsed_value"]``. With ``parse=False`` the
    value is taken as already-parsed data (a dict from a structured-output API, say) and
    must be JSON-compatible.

    The schema is checked against its metaschema when the check is built, so a broken
    schema fails at once rather than at every run. A ``$ref`` that cannot be resolved at
    run time (remote references are never fetched) is an ERROR.
    """

    model_config = ConfigDict(
        defer_build=True, validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )

    target_key: KeyPath = DEFAULT_TARGET_KEY
    parse: bool = True
    expected_schema: dict[str, Any] | None = Field(default=None, alias="schema")

    @field_validator("expected_schema")
    @classmethod
    def _schema_is_valid(cls, schema: dict[str, Any] | None) -> Any:
        if schema is None:
            return schema
        from jsonschema.exceptions import SchemaError  # lazy: ~0.1 s to import
        from jsonschema.validators import validator_for

        try:
            validator_for(schema).check_schema(schema)
        except SchemaError as exc:
            raise ValueError(
                f"Provided JSON Schema is invalid: {exc.message}. "
                "Fix the schema (see https://json-schema.org) or leave it out."
            ) from None
        return schema

    def run(self, trace: Trace[Any, Any]) -> CheckResult:
        """Parse the value if asked, then validate it against the schema, if any."""
        key = self.target_key
        value = resolve(trace, key)
        details: dict[str, Any] = {
            "target_key": key,
            "value": value,
            "schema": self.expected_schema,
        }
        if isinstance(value, NoMatch):
            return CheckResult.error(
                f"No value found for key '{key}', expected a JSON value.", details=details
            )
        if self.parse:
            if not isinstance(value, str):
                return CheckResult.error(
                    f"Value at key '{key}' is not a string: {value!r}", details=details
                )
            try:
                parsed = json.loads(value)
            except json.JSONDecodeError as exc:
                return CheckResult.failure(
                    f"Value at key '{key}' is not valid JSON: {exc}",
                    details={**details, "error": str(exc)},
                )
        else:
            parsed = value
            try:
                json.dumps(value)
            except (TypeError, ValueError) as exc:
                return CheckResult.failure(
                    f"Value at key '{key}' is not JSON serializable: {exc}",
                    details={**details, "error": str(exc)},
                )
        details["parsed_value"] = parsed
        if self.expected_schema is not None:
            from jsonschema.exceptions import best_match
            from jsonschema.validators import validator_for
            from referencing.exceptions import Unresolvable

            schema = self.expected_schema
            try:
                error = best_match(validator_for(schema)(schema).iter_errors(parsed))
            except Unresolvable as exc:
                return CheckResult.error(
                    f"The JSON Schema for key '{key}' has a reference that cannot be "
                    f"resolved: {exc}. Inline the referenced schema or fix the '$ref'.",
                    details={**details, "error": str(exc)},
                )
            if error is not None:
                return CheckResult.failure(
                    f"JSON value at key '{key}' does not match the provided schema: "
                    f"{error.message}.",
                    details={**details, "error": error.message},
                )
        return CheckResult.success(f"Value at key '{key}' is valid JSON.", details=details)
