"""``ToolTrajectory``: the trace's tool calls against an expected trajectory.

Modes say which calls must line up: ``strict`` (the same calls in the same order),
``unordered`` (the same calls, any order), ``subset`` (every call made was expected; some
may be missing), ``superset`` (every expected call was made; others may come too; with
``ordered=True`` in this order). Each expected call names its tool and matchers for some
of its arguments (:mod:`scenarist.checks.trajectory`); the check scores the best pairing
with partial credit and passes when the score reaches ``threshold`` (1.0: an exact match
of the mode). A failure shows both trajectories aligned, one row per call.

It lives with the judges because one matcher, ``{"judge": criterion}``, asks an LLM (the
judges' strict parsing: an unusable answer after the retries is ERROR, never PASS). Each
distinct (tool, argument, criterion, value) is asked once, only for calls of the tool the
expected call names; a check without judged matchers never touches a model.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from pydantic import Field, StrictBool, WithJsonSchema, model_validator

from scenarist.checks.base import Check, RefusesPredicatesInJson
from scenarist.checks.spans import SpanCheck
from scenarist.checks.trajectory import (
    EXPECTED_CALL_SCHEMA,
    ActualCall,
    ExpectedCall,
    TrajectoryMode,
    Verdicts,
    actual_calls,
    align,
    credit_matrix,
    render_table,
    unserialisable,
    value_key,
)
from scenarist.judges._prompts import PromptError, builtin, judge_messages, render
from scenarist.judges.base import WithJudgeMixin
from scenarist.judges.judge import JudgeCall
from scenarist.judges.mocks import active_judge_mocks
from scenarist.model.results import CheckResult, Metric
from scenarist.model.trace import Trace
from scenarist.providers.base import ProviderError

__all__ = ["ToolTrajectory"]

_TEMPLATE = "tool_argument"
_Key = tuple[str, str, str, str]


class _JudgeFailed(Exception):
    """A judged argument got no verdict: the check is ERROR."""


@Check.register("tool_trajectory")
class ToolTrajectory(RefusesPredicatesInJson, SpanCheck, WithJudgeMixin):
    """The tool calls match ``expected`` in ``mode``, scoring at least ``threshold``.

    ``judge``, ``temperature`` and ``max_retries`` serve the judged matchers only, as in
    the judge checks (default: the default judge, temperature 0, two retries).
    """

    expected: list[Annotated[ExpectedCall, WithJsonSchema(EXPECTED_CALL_SCHEMA)]]
    mode: TrajectoryMode = "strict"
    ordered: StrictBool = Field(default=False, exclude_if=lambda v: v is False)
    threshold: float = Field(default=1.0, ge=0.0, le=1.0)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0, exclude_if=lambda v: v == 0.0)
    max_retries: int = Field(default=2, ge=0, le=10, exclude_if=lambda v: v == 2)

    @model_validator(mode="after")
    def _valid_mode(self) -> ToolTrajectory:
        if self.ordered and self.mode not in ("subset", "superset"):
            hint = "strict already keeps the order" if self.mode == "strict" else "use strict"
            raise ValueError(f"ordered=True applies to mode subset or superset only ({hint})")
        if self.mode == "superset" and not self.expected:
            raise ValueError(
                "expected: a superset of no calls asserts nothing; list the calls that must "
                "happen (or use mode 'strict' with expected=[] for 'no tool calls')"
            )
        return self

    # -- serialisation: Python predicates cannot be written to JSON -----------------------

    def _predicates(self) -> list[str]:
        return [f"{c.tool}.{name}" for c in self.expected for name in c.predicates]

    def _reject_predicates(self) -> None:
        if self._predicates():
            raise unserialisable(self._predicates())

    # -- running ---------------------------------------------------------------------------

    async def run(self, trace: Trace[Any, Any]) -> CheckResult:  # type: ignore[override]
        """Read the tool calls in scope, judge what must be judged, align and score."""
        scope = self.scope(trace)
        if isinstance(scope, CheckResult):
            return scope
        calls = actual_calls(scope.spans)
        details: dict[str, Any] = {
            "mode": self.mode,
            "ordered": self.ordered,
            "threshold": self.threshold,
            "expected": [c.describe() for c in self.expected],
            "tool_calls": [{"tool": c.tool, "args": c.args} for c in calls],
        }
        if self.interaction is not None:
            details["interaction"] = self.interaction
        judge_calls: list[JudgeCall] = []
        try:
            verdicts = await self._judge_arguments(calls, details, judge_calls)
        except _JudgeFailed as exc:
            return CheckResult.error(
                f"{self.prefix}: {exc}", details=details, metrics=_usage(judge_calls, details)
            )
        metrics = _usage(judge_calls, details) if judge_calls else []
        credits = credit_matrix(self.expected, calls, verdicts)
        if isinstance(credits, str):
            return CheckResult.error(f"{self.prefix}: {credits}", details=details, metrics=metrics)
        alignment = align(credits, len(self.expected), len(calls), self.mode, self.ordered)
        details["score"] = alignment.score
        details["alignment"] = [
            {
                "expected": row.expected,
                "actual": row.actual,
                "credit": None if row.outcome is None else row.outcome.credit,
                "mismatches": [] if row.outcome is None else row.outcome.problems,
            }
            for row in alignment.rows
        ]
        metrics.insert(0, Metric(name="trajectory_score", value=alignment.score))
        table = render_table(alignment, [e.describe() for e in self.expected], calls, self.mode)
        summary = (
            f"mode {self.mode}{', ordered' if self.ordered else ''}: "
            f"{alignment.matched} of {len(self.expected)} expected call(s) matched fully, "
            f"{len(calls)} call(s) made"
        )
        if alignment.score + 1e-9 < self.threshold:
            return CheckResult.failure(
                f"{self.prefix}: score {alignment.score:.2f} is below the threshold "
                f"{self.threshold:.2f} ({summary})\n{table}",
                details=details,
                metrics=metrics,
            )
        tail = "" if alignment.score == 1.0 else f"\n{table}"
        return CheckResult.success(
            f"{self.prefix}: score {alignment.score:.2f} reaches the threshold "
            f"{self.threshold:.2f} ({summary}).{tail}",
            details=details,
            metrics=metrics,
        )

    async def _judge_arguments(
        self, calls: list[ActualCall], details: dict[str, Any], spent: list[JudgeCall]
    ) -> Verdicts:
        """The judge's verdict on every judged argument value that a pairing could use."""
        wanted: dict[_Key, Any] = {}
        for expected in self.expected:
            for name, matcher in expected.matchers.items():
                if matcher.kind != "judge":
                    continue
                for call in calls:
                    if call.tool == expected.tool and call.args is not None and name in call.args:
                        value = call.args[name]
                        wanted.setdefault((call.tool, name, matcher.value, value_key(value)), value)
        if not wanted:
            return {}
        outcomes = await asyncio.gather(
            *(self._ask(key, value, spent) for key, value in wanted.items()),
            return_exceptions=True,  # every request finishes (and is counted) first
        )
        answers: list[tuple[bool, str]] = []
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
            answers.append(outcome)
        details["judged"] = [
            {
                "tool": key[0],
                "argument": key[1],
                "criterion": key[2],
                "value": value,
                "passed": passed,
                "reason": reason,
            }
            for (key, value), (passed, reason) in zip(wanted.items(), answers, strict=True)
        ]
        return dict(zip(wanted, answers, strict=True))

    async def _ask(self, key: _Key, value: Any, spent: list[JudgeCall]) -> tuple[bool, str]:
        tool, argument, criterion, _ = key
        what = f"argument '{argument}' of tool '{tool}' ({criterion!r})"
        mocks = active_judge_mocks()
        if mocks is not None:  # a Veval TestClient's canned verdicts, never a billed call
            try:
                mocked = mocks.take(criterion)
            except LookupError as exc:
                raise _JudgeFailed(f"judging {what}: {exc}") from None
            return mocked.passed, mocked.reasoning
        variables = {"criterion": criterion, "tool": tool, "argument": argument, "value": value}
        try:
            template = builtin(_TEMPLATE)
            prompt = render(template, variables, source_name=f"{_TEMPLATE}.j2")
            judge = self.resolved_judge()
            call = await judge.verdict_call(
                template,
                variables,
                judge_messages(prompt),
                temperature=self.temperature,
                max_retries=self.max_retries,
            )
        except (ProviderError, PromptError) as exc:
            raise _JudgeFailed(f"judging {what}: {exc}") from None
        spent.append(call)
        if call.verdict is None:
            raise _JudgeFailed(
                f"the judge gave no valid verdict on {what} after {call.attempts} "
                f"attempt(s) ({call.problem})"
            )
        return call.verdict.passed, call.verdict.reason


def _total(values: list[Any]) -> Any:
    return None if any(v is None for v in values) else sum(values)


def _usage(calls: list[JudgeCall], details: dict[str, Any]) -> list[Metric]:
    """The judge's usage over every judged argument (unknown stays unknown)."""
    if not calls:
        return []
    usage = {
        "model": next((c.model for c in calls if c.model), None),
        "calls": sum(c.attempts for c in calls),
        "tokens_in": _total([c.tokens_in for c in calls]),
        "tokens_out": _total([c.tokens_out for c in calls]),
        "cost_usd": _total([c.cost_usd for c in calls]),
    }
    details["judge"] = usage
    metrics = [Metric(name="judge_calls", value=usage["calls"])]
    metrics += [
        Metric(name=f"judge_{key}", value=usage[key])
        for key in ("tokens_in", "tokens_out", "cost_usd")
        if usage[key] is not None
    ]
    return metrics
