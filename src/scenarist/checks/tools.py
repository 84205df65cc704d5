"""Trace assertions over tool calls: spans of kind ``tool``, matched by exact name.

``ToolCalled`` is Veval's; the others go beyond it. A tool call counts whatever its status:
a tool that was called and failed was still called (``NoErrors`` reports the failure).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    SerializationInfo,
    WithJsonSchema,
    field_serializer,
    field_validator,
)

from scenarist.checks.base import Check, RefusesPredicatesInJson
from scenarist.checks.fn import omits_callables
from scenarist.checks.spans import Count, Scope, SpanCheck
from scenarist.errors import SerializationError
from scenarist.model.results import CheckResult, Metric
from scenarist.model.trace import Span

__all__ = [
    "ToolArgs",
    "ToolCallCount",
    "ToolCalled",
    "ToolNotCalled",
    "ToolOrder",
    "call_arguments",
    "tool_calls",
]


def tool_calls(spans: Sequence[Span]) -> list[Span]:
    """The spans of kind ``tool``, in order."""
    return [s for s in spans if s.kind == "tool"]


class _NamedToolCheck(SpanCheck):
    """A check about the calls of one tool, ``tool_name``."""

    tool_name: str

    def calls(self, scope: Scope) -> tuple[list[Span], dict[str, Any]]:
        """The calls of ``tool_name`` and details naming every tool call in scope."""
        tools = tool_calls(scope.spans)
        calls = [s for s in tools if s.name == self.tool_name]
        return calls, {"tool_name": self.tool_name, "tool_calls": [s.name for s in tools]}


@Check.register("trace_tool_called")
class ToolCalled(_NamedToolCheck):
    """A span of kind ``tool`` named ``tool_name`` exists."""

    def evaluate(self, scope: Scope) -> CheckResult:
        calls, details = self.calls(scope)
        if not calls:
            return CheckResult.failure(
                f"{self.prefix}: no tool step named '{self.tool_name}' was found", details=details
            )
        return CheckResult.success(
            f"{self.prefix}: tool '{self.tool_name}' was called {len(calls)} time(s).",
            details=details,
        )


@Check.register("trace_tool_not_called")
class ToolNotCalled(_NamedToolCheck):
    """No span of kind ``tool`` is named ``tool_name``."""

    def evaluate(self, scope: Scope) -> CheckResult:
        calls, details = self.calls(scope)
        if calls:
            return CheckResult.failure(
                f"{self.prefix}: tool '{self.tool_name}' was called {len(calls)} time(s)",
                details=details,
            )
        return CheckResult.success(
            f"{self.prefix}: tool '{self.tool_name}' was not called.", details=details
        )


@Check.register("trace_tool_call_count")
class ToolCallCount(_NamedToolCheck):
    """The tool ``tool_name`` was called exactly ``count`` times."""

    count: Count = Field(ge=0)

    def evaluate(self, scope: Scope) -> CheckResult:
        calls, details = self.calls(scope)
        details["count"] = self.count
        metrics = [Metric(name="tool_calls", value=len(calls))]
        if len(calls) != self.count:
            return CheckResult.failure(
                f"{self.prefix}: expected tool '{self.tool_name}' to be called {self.count} "
                f"time(s), got {len(calls)}",
                details=details,
                metrics=metrics,
            )
        return CheckResult.success(
            f"{self.prefix}: tool '{self.tool_name}' was called {len(calls)} time(s).",
            details=details,
            metrics=metrics,
        )


def _is_subsequence(wanted: Sequence[str], actual: Sequence[str]) -> bool:
    remaining = iter(actual)
    return all(name in remaining for name in wanted)


@Check.register("trace_tool_order")
class ToolOrder(SpanCheck):
    """The tool calls happen in the order of ``tool_names``.

    ``mode="subsequence"`` (default): the names appear in this order, other calls may come
    in between. ``mode="exact"``: the tool calls are exactly these, in this order.
    """

    tool_names: list[str] = Field(min_length=1)
    mode: Literal["subsequence", "exact"] = "subsequence"

    def evaluate(self, scope: Scope) -> CheckResult:
        actual = [s.name for s in tool_calls(scope.spans)]
        wanted = self.tool_names
        details = {"tool_names": wanted, "mode": self.mode, "tool_calls": actual}
        if self.mode == "exact":
            ok = actual == wanted
            expectation = f"exactly [{', '.join(wanted)}]"
        else:
            ok = _is_subsequence(wanted, actual)
            expectation = f"[{', '.join(wanted)}] in this order"
        if not ok:
            return CheckResult.failure(
                f"{self.prefix}: expected tool calls {expectation}, got [{', '.join(actual)}]",
                details=details,
            )
        return CheckResult.success(
            f"{self.prefix}: tool calls [{', '.join(actual)}] match {expectation}.",
            details=details,
        )


# -- arguments -------------------------------------------------------------------------

_SHOWN_CALLS = 3  # the actual arguments a failure shows (all are in the details)


def _cut(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


ArgPredicate = Callable[[Any], bool]
"""A test for one argument's value: ``lambda city: city.lower() == "paris"``."""


def _describe(value: Any) -> Any:
    if callable(value):
        return f"<predicate {getattr(value, '__name__', None) or type(value).__name__}>"
    return value


def call_arguments(span: Span) -> Mapping[str, Any] | None:
    """The call's arguments: its input as a mapping (a JSON object string is parsed)."""
    value = span.input
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, Mapping) else None


@Check.register("trace_tool_args")
class ToolArgs(RefusesPredicatesInJson, _NamedToolCheck):
    """Some call of ``tool_name`` has arguments matching ``args``.

    The arguments are the span's ``input`` when it is a mapping (or a JSON object string,
    as LLM tool calls send them). Each expected value is compared with ``==``, or, when it
    is a callable, called with the argument and must return ``True``. A missing argument
    does not match. Predicates make the check unserialisable: a JSON dump raises
    :class:`~scenarist.errors.SerializationError` (``to_spec`` describes them instead).
    """

    args: Annotated[
        dict[str, Any],
        WithJsonSchema({"type": "object", "description": "Values or Python predicates."}),
    ] = Field(min_length=1)

    @field_validator("args", mode="after")
    @classmethod
    def _string_keys(cls, args: dict[str, Any]) -> dict[str, Any]:
        bad = [key for key in args if not isinstance(key, str)]
        if bad:
            raise ValueError(f"argument names must be strings, got {bad[0]!r}")
        return args

    def _predicates(self) -> list[str]:
        return [key for key, value in self.args.items() if callable(value)]

    def _unserialisable(self) -> SerializationError:
        return SerializationError(
            f"ToolArgs for tool {self.tool_name!r} uses Python predicates for "
            f"{', '.join(map(repr, self._predicates()))}, which cannot be written to JSON; "
            "dump it with mode='python', describe it with to_spec(), or compare with plain "
            "values to make it serialisable."
        )

    @field_serializer("args", mode="plain")
    def _dump_args(self, args: dict[str, Any], info: SerializationInfo) -> dict[str, Any]:
        if not info.mode_is_json() or not self._predicates():
            return args
        if omits_callables(info.context):
            return {key: _describe(value) for key, value in args.items()}
        raise self._unserialisable()

    def _reject_predicates(self) -> None:
        if self._predicates():
            raise self._unserialisable()

    def evaluate(self, scope: Scope) -> CheckResult:
        calls, details = self.calls(scope)
        expected = {key: _describe(value) for key, value in self.args.items()}
        details["args"] = expected
        if not calls:
            return CheckResult.failure(
                f"{self.prefix}: no tool step named '{self.tool_name}' was found", details=details
            )
        details["calls"] = [s.input for s in calls]
        for span in calls:
            arguments = call_arguments(span)
            if arguments is None:
                continue
            matched = True
            for key, want in self.args.items():
                if key not in arguments:
                    matched = False
                    break
                verdict = self._matches(key, want, arguments[key])
                if isinstance(verdict, CheckResult):
                    return verdict.model_copy(update={"details": details})
                if not verdict:
                    matched = False
                    break
            if matched:
                return CheckResult.success(
                    f"{self.prefix}: a call of tool '{self.tool_name}' matched {expected}.",
                    details=details,
                )
        got = ", ".join(
            _cut(repr(call_arguments(span) if call_arguments(span) is not None else span.input))
            for span in calls[:_SHOWN_CALLS]
        )
        more = f", and {len(calls) - _SHOWN_CALLS} more" if len(calls) > _SHOWN_CALLS else ""
        return CheckResult.failure(
            f"{self.prefix}: no call of tool '{self.tool_name}' matched {expected} "
            f"({len(calls)} call(s) checked; they had {got}{more})",
            details=details,
        )

    def _matches(self, key: str, want: Any, actual: Any) -> bool | CheckResult:
        if not callable(want):
            return bool(want == actual)
        try:
            verdict = want(actual)
        except Exception as exc:
            return CheckResult.error(
                f"{self.prefix}: the predicate for argument '{key}' raised "
                f"{type(exc).__name__}: {exc}"
            )
        if not isinstance(verdict, bool):
            return CheckResult.error(
                f"{self.prefix}: the predicate for argument '{key}' must return a bool, "
                f"got {type(verdict).__name__}: {verdict!r}"
            )
        return verdict
