"""``RegoPolicy``: a boolean rule of a Rego (Open Policy Agent) policy, over a traced value.

The engine is ``regopy`` (the OPA Rego interpreter of the Rego C++ project), an optional
extra: ``pip install 'scenarist[rego]'``. It is imported when a policy is built, never
by ``import scenarist``; without it, building the check raises an ``ImportError`` naming
the extra (giskard-checks also refuses at construction).

The value at ``target_key`` is the policy's ``input``; ``data`` is merged in as the
``data`` document. ``rule`` is a full path (``data.<package>.<rule>``). Verdicts, as in
giskard-checks: ``true`` → PASS; ``false`` or undefined → FAIL; any other value → ERROR
(a policy bug, not a verdict); no value at ``target_key`` → ERROR.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

from pydantic import ConfigDict, Field, model_validator

from scenarist._extras import missing_extra
from scenarist.checks._values import DEFAULT_TARGET_KEY, KeyPath, NoMatch
from scenarist.checks.base import Check
from scenarist.model.paths import resolve
from scenarist.model.results import CheckResult
from scenarist.model.trace import Trace

__all__ = ["RegoPolicy"]

_MODULE = "policy.rego"
_BINDING = "scenarist_rule_value"
_UNDEFINED = object()


def _interpreter() -> Any:
    try:
        from regopy import Interpreter  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError as exc:
        raise missing_extra("rego", exc) from exc
    return Interpreter()


@contextlib.contextmanager
def _engine_output() -> Iterator[list[str]]:
    """Capture what the engine's C++ core prints on stdout (its parse errors, readable).

    Used when a policy is built only: a policy that compiled prints nothing when run.
    """
    captured: list[str] = []
    sys.stdout.flush()
    with tempfile.TemporaryFile(mode="w+b") as sink:
        saved = os.dup(1)
        os.dup2(sink.fileno(), 1)
        try:
            yield captured
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            sink.seek(0)
            captured.append(sink.read().decode("utf-8", "replace"))


def _evaluate(policy: str, data: dict[str, Any], rule: str, value: Any) -> Any:
    """The rule's value (``_UNDEFINED`` when undefined); ``RuntimeError`` on a bad policy."""
    rego = _interpreter()
    try:
        rego.add_module(_MODULE, policy)
        if data:
            rego.add_data_json(json.dumps(data, default=str, allow_nan=False))
        rego.set_input_term(json.dumps(value, default=str, allow_nan=False))
        # Bound to a variable: a bare ``false`` would read as "no result" (undefined).
        output = str(rego.query(f"{_BINDING} := {rule}"))
    except Exception as exc:  # the engine's own error type; its message says what is wrong
        raise RuntimeError(" ".join(str(exc).split())) from None
    if output.strip() == "undefined":
        return _UNDEFINED
    # Rego has one number type: read numbers as floats, as giskard-checks reports them.
    bindings = json.loads(output, parse_int=float).get("bindings", {})
    return bindings.get(_BINDING, _UNDEFINED)


def _type_name(value: Any) -> str:
    # Rego has one number type; name it as giskard-checks does.
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "float"
    return type(value).__name__


@Check.register("rego_policy")
class RegoPolicy(Check):
    """PASS when ``rule`` of the Rego ``policy`` is ``true`` for the value at ``target_key``."""

    model_config = ConfigDict(defer_build=True)

    policy: str = Field(description="The Rego source (a module with a package clause).")
    rule: str = Field(description="The full rule path, e.g. 'data.scenarist.allow'.")
    target_key: KeyPath = DEFAULT_TARGET_KEY
    data: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _policy_compiles(self) -> RegoPolicy:
        if not self.rule.startswith("data."):
            raise ValueError(
                f"Rule path must start with 'data.'. Got {self.rule!r}; write the full "
                "path, e.g. 'data.<package>.allow'."
            )
        with _engine_output() as printed:
            try:
                _evaluate(self.policy, self.data, "true", None)
                problem = None
            except RuntimeError as exc:
                problem = str(exc)
        if problem is not None:
            readable = printed[0].strip().removeprefix("Errors:").strip() or problem
            raise ValueError(f"Invalid Rego policy or data: {readable}")
        return self

    def run(self, trace: Trace[Any, Any]) -> CheckResult:
        """Evaluate the rule with the traced value as ``input``."""
        value = resolve(trace, self.target_key)
        details: dict[str, Any] = {
            "target_key": self.target_key,
            "data": self.data,
            "rule": self.rule,
            "input": value,
        }
        if isinstance(value, NoMatch):
            return CheckResult.error(f"No value found for key '{value.key}'.", details=details)
        try:
            outcome = _evaluate(self.policy, self.data, self.rule, value)
        except RuntimeError as exc:
            details["error"] = str(exc)
            return CheckResult.error(f"Rego policy evaluation failed: {exc}", details=details)
        details["value"] = None if outcome is _UNDEFINED else outcome
        if outcome is _UNDEFINED:
            return CheckResult.failure(f"Rule '{self.rule}' is undefined.", details=details)
        if outcome is True:
            return CheckResult.success(f"Rule '{self.rule}' evaluated to true.", details=details)
        if outcome is False:
            return CheckResult.failure(f"Rule '{self.rule}' evaluated to false.", details=details)
        return CheckResult.error(
            f"Rule '{self.rule}' returned {_type_name(outcome)}, expected bool or undefined.",
            details=details,
        )
