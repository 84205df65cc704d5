"""Trace assertions over spans: steps, errors, cost, tokens, duration, output.

These are the checks :class:`~scenarist.veval.trace_assert.TraceAssert` builds (Veval's
``TraceAssert``, as ordinary registered checks). Each looks at every span of the trace,
nested ones included, in pre-order, unless ``interaction`` narrows it to one interaction
(``-1`` is the last). Failure messages start with the check's name followed by a colon
(``MaxCost: ...``), the stable prefixes Veval users grep their logs for; where Veval has a
message, the wording is Veval's.

The defaults are Veval's: ``NoErrors`` looks at steps only, ``MaxCost`` adds step costs as
floats and counts an unknown cost as zero, ``MaxDuration`` adds step durations,
``OutputContains`` searches step outputs. Our stricter readings are options:
``agent_errors=True``, ``exact=True`` and ``unknown_cost="error"`` (an ``llm`` span without a
cost is an ERROR rather than a guess), ``measure="wall"`` (the run's wall-clock time),
``where="final"`` (the agent's final output).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from pydantic import Field, StrictInt, model_validator

from scenarist.checks._values import optional
from scenarist.checks.base import Check
from scenarist.model.results import CheckResult, Metric
from scenarist.model.trace import Interaction, Span, SpanError, Trace
from scenarist.model.usage import (
    RECORDED_COST_KEY,
    cost_spans,
    declared_cost,
    error_spans,
    llm_call_spans,
    step_spans,
    token_spans,
)

__all__ = [
    "MaxCost",
    "MaxDuration",
    "MaxLlmCalls",
    "MaxSteps",
    "MaxTokens",
    "MinSteps",
    "NoErrors",
    "OutputContains",
    "SpanCheck",
    "StepDuration",
    "StepExists",
]

Count = StrictInt
"""A whole number; ``True`` or ``"3"`` are rejected rather than read as 1 or 3."""


@dataclass(frozen=True, slots=True)
class Scope:
    """What a trace assertion looks at: interactions (with their indexes) and their spans."""

    interactions: Sequence[tuple[int, Interaction[Any, Any]]]
    spans: Sequence[Span]
    roots: Sequence[Span] = ()
    """The top-level spans in scope (the counting rule of ``_usage`` reads the tree)."""


class SpanCheck(Check):
    """Base of the trace assertions: narrows the trace, then calls :meth:`evaluate`.

    ``interaction`` picks one interaction by index (negative counts from the end); by
    default every interaction counts. An index out of range is an ERROR.
    """

    interaction: StrictInt | None = optional()

    @property
    def prefix(self) -> str:
        """The stable message prefix: the class name (``MaxSteps``)."""
        return type(self).__name__

    def scope(self, trace: Trace[Any, Any]) -> Scope | CheckResult:
        """The interactions and spans in scope, or an ERROR for a bad ``interaction``."""
        log = trace.interactions
        if self.interaction is None:
            pairs = list(enumerate(log))
        else:
            n, index = len(log), self.interaction
            if not -n <= index < n:
                return CheckResult.error(
                    f"{self.prefix}: no interaction at index {index}; "
                    f"the trace has {n} interaction(s).",
                    details={"interaction": index, "interactions": n},
                )
            pairs = [(index % n, log[index])]
        roots = [root for _, i in pairs for root in i.spans]
        return Scope(pairs, [span for root in roots for span in root.walk()], roots)

    def run(self, trace: Trace[Any, Any]) -> CheckResult:
        """Narrow the trace, then evaluate the assertion on what is in scope."""
        scope = self.scope(trace)
        if isinstance(scope, CheckResult):
            return scope
        result = self.evaluate(scope)
        if self.interaction is None:
            return result
        return result.model_copy(
            update={"details": {**result.details, "interaction": self.interaction}}
        )

    def evaluate(self, scope: Scope) -> CheckResult:
        """The verdict on the spans and interactions in ``scope``."""
        raise NotImplementedError(f"{type(self).__name__} must implement evaluate(scope)")


# -- helpers ---------------------------------------------------------------------------


def number(value: float | Decimal) -> str:
    """A number as messages show it: no exponent, no trailing zeros (``731.25``, ``50``)."""
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def names(spans: Sequence[Span]) -> str:
    """Span names for a message: ``a, b``."""
    return ", ".join(span.name for span in spans)


def span_duration_ms(span: Span) -> float | None:
    """``duration_ms``, else the time between ``started_at`` and ``ended_at``, else ``None``."""
    if span.duration_ms is not None:
        return span.duration_ms
    if span.started_at is not None and span.ended_at is not None:
        return (span.ended_at - span.started_at).total_seconds() * 1000
    return None


def as_text(value: Any) -> str:
    """An output as text, as Veval reads it: strings as they are, anything else ``str()``."""
    return value if isinstance(value, str) else str(value)


def describe_error(error: SpanError) -> str:
    return f"{error.type}: {error.message}" if error.type else error.message


# -- steps and errors ------------------------------------------------------------------


@Check.register("trace_no_errors")
class NoErrors(SpanCheck):
    """No span has status ``error`` (Veval's rule: the steps only).

    A failed LLM call the capture recorded inside a tracked step is that step's to report
    (:mod:`scenarist.model.usage`): it failed as well, or it handled the error. Veval only
    looks at steps, so an exception the agent raised outside any step passes;
    ``agent_errors=True`` counts the interaction's own ``error`` too (unless it is the
    error of a failed step that escaped the agent: that one is counted once, as the step's).
    """

    agent_errors: bool = Field(default=False, exclude_if=lambda v: v is False)

    def evaluate(self, scope: Scope) -> CheckResult:
        failed = error_spans(scope.roots)
        # An exception that escaped a failed step is that step's error, already counted.
        escaped = {(s.error.message, s.error.type) for s in failed if s.error is not None}
        run_errors = [
            (n, i.error)
            for n, i in scope.interactions
            if self.agent_errors
            and i.error is not None
            and (i.error.message, i.error.type) not in escaped
        ]
        details: dict[str, Any] = {
            "steps": len(scope.spans),
            "error_steps": [
                {"name": s.name, "span_id": s.span_id, "error": s.error and s.error.message}
                for s in failed
            ],
            "agent_errors": [
                {"interaction": n, "type": e.type, "message": e.message} for n, e in run_errors
            ],
        }
        problems = []
        if failed:
            problems.append(f"found {len(failed)} step(s) with error status: {names(failed)}")
        if run_errors:
            problems.append(
                f"found {len(run_errors)} agent error(s): "
                + "; ".join(describe_error(e) for _, e in run_errors)
            )
        if problems:
            return CheckResult.failure(f"{self.prefix}: " + "; ".join(problems), details=details)
        return CheckResult.success(
            f"{self.prefix}: no errors in {len(scope.spans)} step(s).", details=details
        )


@Check.register("trace_max_steps")
class MaxSteps(SpanCheck):
    """At most ``max_steps`` tracked steps (nested ones count; captured LLM calls do not,
    see :mod:`scenarist.model.usage`)."""

    max_steps: Count = Field(ge=0)

    def evaluate(self, scope: Scope) -> CheckResult:
        steps = step_spans(scope.roots)
        got = len(steps)
        details = {"max_steps": self.max_steps, "steps": [s.name for s in steps]}
        metrics = [Metric(name="steps", value=got)]
        if got > self.max_steps:
            return CheckResult.failure(
                f"{self.prefix}: expected at most {self.max_steps} steps, got {got}",
                details=details,
                metrics=metrics,
            )
        return CheckResult.success(
            f"{self.prefix}: {got} step(s), at most {self.max_steps}.",
            details=details,
            metrics=metrics,
        )


@Check.register("trace_min_steps")
class MinSteps(SpanCheck):
    """At least ``min_steps`` tracked steps (nested ones count; captured LLM calls do not)."""

    min_steps: Count = Field(ge=0)

    def evaluate(self, scope: Scope) -> CheckResult:
        steps = step_spans(scope.roots)
        got = len(steps)
        details = {"min_steps": self.min_steps, "steps": [s.name for s in steps]}
        metrics = [Metric(name="steps", value=got)]
        if got < self.min_steps:
            return CheckResult.failure(
                f"{self.prefix}: expected at least {self.min_steps} steps, got {got}",
                details=details,
                metrics=metrics,
            )
        return CheckResult.success(
            f"{self.prefix}: {got} step(s), at least {self.min_steps}.",
            details=details,
            metrics=metrics,
        )


@Check.register("trace_step_exists")
class StepExists(SpanCheck):
    """A span named exactly ``step_name`` exists (any kind, any depth, any status)."""

    step_name: str

    def evaluate(self, scope: Scope) -> CheckResult:
        found = [s for s in scope.spans if s.name == self.step_name]
        details = {"step_name": self.step_name, "steps": [s.name for s in scope.spans]}
        if not found:
            return CheckResult.failure(
                f"{self.prefix}: step '{self.step_name}' not found", details=details
            )
        return CheckResult.success(
            f"{self.prefix}: step '{self.step_name}' found {len(found)} time(s).",
            details=details,
        )


@Check.register("trace_max_llm_calls")
class MaxLlmCalls(SpanCheck):
    """At most ``max_calls`` LLM calls: captured calls, plus ``llm`` steps with no captured
    call inside (see :mod:`scenarist.model.usage`)."""

    max_calls: Count = Field(ge=0)

    def evaluate(self, scope: Scope) -> CheckResult:
        calls = llm_call_spans(scope.roots)
        details = {"max_calls": self.max_calls, "llm_calls": [s.name for s in calls]}
        metrics = [Metric(name="llm_calls", value=len(calls))]
        if len(calls) > self.max_calls:
            return CheckResult.failure(
                f"{self.prefix}: expected at most {self.max_calls} LLM calls, got {len(calls)}",
                details=details,
                metrics=metrics,
            )
        return CheckResult.success(
            f"{self.prefix}: {len(calls)} LLM call(s), at most {self.max_calls}.",
            details=details,
            metrics=metrics,
        )


# -- cost and tokens -------------------------------------------------------------------


def _span_cost(span: Span) -> Decimal | None:
    """The span's cost: the recorded one (replay) when present, else ``cost_usd``.

    Floats go through ``repr`` so ``0.1`` is ``Decimal("0.1")``, not its binary value.
    Raises ``ValueError`` for a recorded cost that is not a finite number.
    """
    value = declared_cost(span)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal | str):
        raise ValueError(f"step '{span.name}' has a cost that is not a number: {value!r}")
    try:
        cost = Decimal(repr(value) if isinstance(value, float) else value)
    except InvalidOperation:
        raise ValueError(f"step '{span.name}' has a cost that is not a number: {value!r}") from None
    if not cost.is_finite():
        raise ValueError(f"step '{span.name}' has a cost that is not finite: {value!r}")
    return cost


@Check.register("trace_max_cost")
class MaxCost(SpanCheck):
    """The spans' cost adds up to at most ``max_cost_usd``.

    By default the sum is Veval's: floats added in step order, a step without a cost
    counting as zero, so ``0.1 + 0.2`` is ``0.30000000000000004`` and exceeds
    ``max_cost(0.3)``. ``exact=True`` adds in ``Decimal`` arithmetic instead (``0.1 + 0.2``
    is ``0.3``). ``unknown_cost="error"`` makes an ``llm`` span whose cost is unknown (a
    model missing from the price table) an ERROR, since the total is then unknown; when the
    known spans alone already exceed the budget, the verdict is FAIL regardless.

    A span replay served from a recording carries the original cost in
    ``metadata["recorded_cost_usd"]``, which is used instead of its own (zero) cost, so a
    budget checked on a replayed trace means what it meant on the recorded run.
    """

    max_cost_usd: Decimal = Field(ge=0, allow_inf_nan=False)
    unknown_cost: Literal["error", "ignore"] = "ignore"
    exact: bool = Field(default=False, exclude_if=lambda v: v is False)

    def evaluate(self, scope: Scope) -> CheckResult:
        exact_total = Decimal(0)
        float_total: float = 0  # Veval's sum(cost or 0 ...): an int until a cost adds
        costs: list[dict[str, Any]] = []
        unknown: list[Span] = []
        calls = {id(s) for s in llm_call_spans(scope.roots)}
        for span in cost_spans(scope.roots):
            try:
                cost = _span_cost(span)
            except ValueError as exc:
                return CheckResult.error(f"{self.prefix}: {exc}", details={"costs": costs})
            if cost is None:
                if id(span) in calls:
                    unknown.append(span)
                continue
            exact_total += cost
            float_total = float_total + (float(cost) or 0)
            recorded = span.metadata.get(RECORDED_COST_KEY) is not None
            costs.append({"step": span.name, "cost_usd": float(cost), "recorded": recorded})
        limit = self.max_cost_usd
        if self.exact:
            total, over, shown = float(exact_total), exact_total > limit, f"{exact_total:f}"
        else:
            total, over, shown = float(float_total), float_total > float(limit), str(float_total)
        details = {
            "max_cost_usd": float(limit),
            "cost_usd": total,
            "costs": costs,
            "unknown_cost_steps": [s.name for s in unknown],
        }
        metrics = [Metric(name="cost_usd", value=total)]
        if over:
            return CheckResult.failure(
                f"{self.prefix}: expected at most {limit:f}, got {shown}",
                details=details,
                metrics=metrics,
            )
        if unknown and self.unknown_cost == "error":
            return CheckResult.error(
                f"{self.prefix}: cost unknown for {len(unknown)} llm step(s): {names(unknown)}; "
                "record their cost_usd, or pass unknown_cost='ignore' to count them as zero",
                details=details,
                metrics=metrics,
            )
        return CheckResult.success(
            f"{self.prefix}: cost {shown}, at most {limit:f}.", details=details, metrics=metrics
        )


@Check.register("trace_max_tokens")
class MaxTokens(SpanCheck):
    """Input plus output tokens over the spans add up to at most ``max_tokens``.

    As with cost, an ``llm`` span without any token count is an ERROR unless
    ``unknown_tokens="ignore"``; other spans without usage count as zero.
    """

    max_tokens: Count = Field(ge=0)
    unknown_tokens: Literal["error", "ignore"] = "error"

    def evaluate(self, scope: Scope) -> CheckResult:
        counted = token_spans(scope.roots)
        tokens_in = sum(s.tokens_in or 0 for s in counted)
        tokens_out = sum(s.tokens_out or 0 for s in counted)
        total = tokens_in + tokens_out
        calls = {id(s) for s in llm_call_spans(scope.roots)}
        unknown = [
            s for s in counted if id(s) in calls and s.tokens_in is None and s.tokens_out is None
        ]
        details = {
            "max_tokens": self.max_tokens,
            "tokens_in": tokens_in,
            "tokens_out": tokens_out,
            "tokens": total,
            "unknown_token_steps": [s.name for s in unknown],
        }
        metrics = [
            Metric(name="tokens", value=total),
            Metric(name="tokens_in", value=tokens_in),
            Metric(name="tokens_out", value=tokens_out),
        ]
        if total > self.max_tokens:
            return CheckResult.failure(
                f"{self.prefix}: expected at most {self.max_tokens} tokens, got {total}",
                details=details,
                metrics=metrics,
            )
        if unknown and self.unknown_tokens == "error":
            return CheckResult.error(
                f"{self.prefix}: token usage unknown for {len(unknown)} llm step(s): "
                f"{names(unknown)}; record tokens_in/tokens_out, or pass "
                "unknown_tokens='ignore' to count them as zero",
                details=details,
                metrics=metrics,
            )
        return CheckResult.success(
            f"{self.prefix}: {total} token(s), at most {self.max_tokens}.",
            details=details,
            metrics=metrics,
        )


# -- time ------------------------------------------------------------------------------


@Check.register("trace_max_duration")
class MaxDuration(SpanCheck):
    """The steps' durations add up to at most ``max_ms`` (Veval's rule), or, with
    ``measure="wall"``, the agent's wall-clock time does, queued time left out.

    Veval adds the tracked steps' ``duration_ms`` (nested ones too; a step without one
    counts as zero), which counts parallel steps twice and misses time spent outside any
    step. ``measure="wall"`` reads the sum of the interactions' ``duration_ms`` (they run
    one after another) instead; an interaction without a duration is then an ERROR.

    In wall mode, time its LLM calls spent waiting for the server (``queue_ms``, recorded
    for streamed responses: see :mod:`scenarist.tracing.http._llm_call`) is subtracted,
    overlaps counted once, so the same budget holds with ``--parallel 1`` or ``8`` against
    a single-worker model server; ``exclude_queued=False`` checks raw wall-clock time.
    Details keep all three (``counted_ms``, ``wall_ms``, ``queued_ms``).
    """

    max_ms: float = Field(ge=0, allow_inf_nan=False)
    measure: Literal["steps", "wall"] = Field(default="steps", exclude_if=lambda v: v == "steps")
    exclude_queued: bool = Field(default=True, exclude_if=lambda v: v is True)

    def evaluate(self, scope: Scope) -> CheckResult:
        if self.measure == "steps":
            return self._steps(scope)
        return self._wall(scope)

    def _steps(self, scope: Scope) -> CheckResult:
        steps = step_spans(scope.roots)
        total = sum(s.duration_ms or 0 for s in steps)
        details: dict[str, Any] = {
            "max_ms": self.max_ms,
            "measure": "steps",
            "steps": [{"name": s.name, "duration_ms": s.duration_ms} for s in steps],
            "duration_ms": total,
            "counted_ms": total,
        }
        metrics = [Metric(name="duration_ms", value=total)]
        if total > self.max_ms:
            return CheckResult.failure(
                f"{self.prefix}: expected at most {number(self.max_ms)}ms, got {number(total)}ms",
                details=details,
                metrics=metrics,
            )
        return CheckResult.success(
            f"{self.prefix}: steps took {number(total)}ms, at most {number(self.max_ms)}ms.",
            details=details,
            metrics=metrics,
        )

    def _wall(self, scope: Scope) -> CheckResult:
        if not scope.interactions:
            return CheckResult.error(
                f"{self.prefix}: the trace has no interactions, so there is no duration to check"
            )
        durations = {n: i.duration_ms for n, i in scope.interactions}
        queued = {n: _queued_ms(i.spans) for n, i in scope.interactions}
        details: dict[str, Any] = {
            "max_ms": self.max_ms,
            "interactions": [
                {"interaction": n, "duration_ms": ms, "queued_ms": queued[n]}
                for n, ms in durations.items()
            ],
        }
        missing = [str(n) for n, ms in durations.items() if ms is None]
        if missing:
            return CheckResult.error(
                f"{self.prefix}: wall-clock duration unknown: interaction(s) "
                f"{', '.join(missing)} recorded no duration_ms",
                details=details,
            )
        wall = sum(ms for ms in durations.values() if ms is not None)
        waited = sum(min(queued[n], ms or 0.0) for n, ms in durations.items())
        total = wall - waited if self.exclude_queued else wall
        # "counted_ms": the runner stamps details["duration_ms"] with the check's own time
        details.update(duration_ms=total, counted_ms=total, wall_ms=wall, queued_ms=waited)
        metrics = [Metric(name="duration_ms", value=total)]
        if waited:
            metrics.append(Metric(name="queued_ms", value=waited))
        note = f" ({number(waited)}ms queued left out)" if waited and self.exclude_queued else ""
        if total > self.max_ms:
            return CheckResult.failure(
                f"{self.prefix}: expected at most {number(self.max_ms)}ms, got "
                f"{number(total)}ms{note}",
                details=details,
                metrics=metrics,
            )
        return CheckResult.success(
            f"{self.prefix}: {number(total)}ms, at most {number(self.max_ms)}ms{note}.",
            details=details,
            metrics=metrics,
        )


def _queued_ms(spans: Iterable[Span]) -> float:
    """How long an interaction's LLM calls waited for their server, overlaps once: the
    union of ``[started_at, started_at + queue_ms]`` (a span without a start: its wait
    added as is)."""
    intervals: list[tuple[float, float]] = []
    loose = 0.0
    for root in spans:
        for span in root.walk():
            wait = span.metadata.get("queue_ms") if span.kind == "llm" else None
            if not isinstance(wait, int | float) or isinstance(wait, bool) or wait <= 0:
                continue
            if span.started_at is None:
                loose += float(wait)
                continue
            start = span.started_at.timestamp() * 1000
            intervals.append((start, start + float(wait)))
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total + loose


@Check.register("trace_step_duration")
class StepDuration(SpanCheck):
    """Every span named ``step_name`` took at most ``max_ms``.

    No such span is a FAIL; a span with neither ``duration_ms`` nor both timestamps is an
    ERROR.
    """

    step_name: str
    max_ms: float = Field(ge=0, allow_inf_nan=False)

    def evaluate(self, scope: Scope) -> CheckResult:
        found = [s for s in scope.spans if s.name == self.step_name]
        if not found:
            return CheckResult.failure(
                f"{self.prefix}: step '{self.step_name}' not found",
                details={"step_name": self.step_name, "steps": [s.name for s in scope.spans]},
            )
        durations = [span_duration_ms(s) for s in found]
        details: dict[str, Any] = {
            "step_name": self.step_name,
            "max_ms": self.max_ms,
            "durations_ms": durations,
        }
        known = [ms for ms in durations if ms is not None]
        if len(known) < len(durations):
            return CheckResult.error(
                f"{self.prefix}: duration unknown for {len(durations) - len(known)} of "
                f"{len(durations)} step(s) named '{self.step_name}'",
                details=details,
            )
        slowest = max(known)
        metrics = [Metric(name="duration_ms", value=slowest)]
        if slowest > self.max_ms:
            return CheckResult.failure(
                f"{self.prefix}: expected step '{self.step_name}' to take at most "
                f"{number(self.max_ms)}ms, got {number(slowest)}ms",
                details=details,
                metrics=metrics,
            )
        return CheckResult.success(
            f"{self.prefix}: step '{self.step_name}' took at most {number(slowest)}ms.",
            details=details,
            metrics=metrics,
        )


# -- output ----------------------------------------------------------------------------


@Check.register("trace_output_contains")
class OutputContains(SpanCheck):
    """Some step's output contains ``expected`` (Veval's rule), or, with
    ``where="final"``, the agent's final output does (case-sensitive substring).

    Veval searches the outputs of the steps (nested ones too), read as text (strings as
    they are, anything else through ``str()``), skipping steps whose output is ``None``.
    ``where="final"`` reads the last interaction's ``outputs`` (in scope) instead,
    ``None`` as empty. The older ``steps=True`` / ``steps=False`` spell ``where="steps"``
    / ``where="final"``.
    """

    expected: str
    where: Literal["steps", "final"] = "steps"

    @model_validator(mode="before")
    @classmethod
    def _older_steps_flag(cls, data: Any) -> Any:
        if isinstance(data, dict) and "steps" in data:
            data = dict(data)
            steps = data.pop("steps")
            if not isinstance(steps, bool):
                raise ValueError(f"steps must be true or false, got {steps!r}; prefer where=")
            if "where" in data:
                raise ValueError("give where= only (steps= is its older spelling)")
            data["where"] = "steps" if steps else "final"
        return data

    def evaluate(self, scope: Scope) -> CheckResult:
        if self.where == "steps":
            return self._in_steps(step_spans(scope.roots))
        if not scope.interactions:
            return CheckResult.error(
                f"{self.prefix}: the trace has no interactions, so there is no final output"
            )
        output = scope.interactions[-1][1].outputs
        text = "" if output is None else as_text(output)
        details = {"expected": self.expected, "output": output}
        if self.expected in text:
            return CheckResult.success(
                f"{self.prefix}: the final output contains '{self.expected}'.", details=details
            )
        return CheckResult.failure(
            f"{self.prefix}: the final output does not contain '{self.expected}'",
            details=details,
        )

    def _in_steps(self, spans: Sequence[Span]) -> CheckResult:
        details: dict[str, Any] = {"expected": self.expected, "steps": [s.name for s in spans]}
        for span in spans:
            if span.output is not None and self.expected in as_text(span.output):
                details["matched_step"] = span.name
                return CheckResult.success(
                    f"{self.prefix}: step '{span.name}' output contains '{self.expected}'.",
                    details=details,
                )
        return CheckResult.failure(
            f"{self.prefix}: no step output contains '{self.expected}'", details=details
        )
