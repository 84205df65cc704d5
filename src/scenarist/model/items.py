"""Veval-style scenarios: named sets of items run through an agent, with assertions.

A :class:`ScenarioItem` is either **synthetic** (an ``input``: the agent runs live) or
**trace-backed** (a ``trace_id`` or inline ``trace``: a recorded run replayed with mocked
LLM responses). Each item's run becomes a :class:`ItemRunResult`; the whole run a
:class:`ScenarioRunResult`, whose serialisable summary (:class:`ScenarioRunRecord`) is
always stored, whatever happened to the items.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_serializer,
    field_validator,
    model_validator,
)

from scenarist.checks.base import Check
from scenarist.errors import SerializationError
from scenarist.model._construct import construct
from scenarist.model._positional import Positional
from scenarist.model.record import TraceRecord
from scenarist.veval.assertions import ITraceAssertion

if TYPE_CHECKING:
    from scenarist.tracing.context import RunContext

__all__ = ["ItemRunResult", "ItemSummary", "ScenarioItem", "ScenarioRunRecord", "ScenarioRunResult"]

NO_INPUT_MESSAGE = "ScenarioItem must have either trace_id or input"


class ScenarioItem(Positional):
    """One case of a Veval-style scenario.

    ``input`` runs the agent live (``""`` counts as an input). ``trace_id`` (or an inline
    ``trace``: a :class:`TraceRecord`, its JSON, or a path to a JSON file) replays a
    recorded run; it wins over ``input``. ``assertions`` apply to this item only, after
    the scenario-level ones. ``mock_model_steps`` is Veval's field, accepted so Veval
    items load, and has no effect: a trace-backed item is always mocked unless
    ``live_model_steps=True`` runs its recorded ``llm`` steps live.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)
    __positional__ = ("name", "trace_id", "input", "assertions", "mock_model_steps")

    name: str | None = None
    input: Any = None
    trace_id: str | None = None
    trace: TraceRecord | Path | None = None
    assertions: list[Any] = Field(default_factory=list)
    mock_model_steps: bool = False
    live_model_steps: bool = False
    expected_output: Any = None
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("assertions", mode="before")
    @classmethod
    def _assertions_are_checks(cls, assertions: Any) -> list[Any]:
        checked: list[Any] = []
        for assertion in assertions or []:
            if isinstance(assertion, dict):  # a stored item: rebuild the check by kind
                assertion = Check.model_validate(assertion)
            if not isinstance(assertion, Check | ITraceAssertion):
                raise ValueError(
                    "assertions must be checks such as TraceAssert.max_cost(0.05) or "
                    f"ITraceAssertion objects, got {type(assertion).__name__}"
                )
            checked.append(assertion)
        return checked

    @field_serializer("assertions")
    def _dump_assertions(self, assertions: list[Any]) -> list[Any]:
        dumped: list[Any] = []
        for assertion in assertions:
            if not isinstance(assertion, Check):
                raise SerializationError(
                    f"item {self.label!r}: the assertion {type(assertion).__name__} is code "
                    "(an ITraceAssertion) and cannot be stored; store built-in checks only"
                )
            dumped.append(assertion.model_dump(mode="json"))
        return dumped

    @property
    def is_trace_backed(self) -> bool:
        return self.trace_id is not None or self.trace is not None

    @property
    def label(self) -> str:
        """The item's name, else a short form of its input or trace id."""
        if self.name:
            return self.name
        if self.is_trace_backed:
            return f"trace {self.trace_id or 'inline'}"
        text = str(self.input)
        return text if len(text) <= 40 else text[:39] + "…"


class ItemRunResult(Positional):
    """How one item went: passed, the failure messages, and the run it produced.

    Built as Veval builds it (``ItemRunResult(item, failures, context)``), ``passed``
    defaults to having no failures.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)
    __positional__ = ("item", "failures", "context")

    item: ScenarioItem
    passed: bool
    failures: list[str] = Field(default_factory=list)
    trace_id: str | None = None
    output: Any = None
    duration_ms: float = 0.0
    cost_usd: float | None = None
    context: Any = Field(default=None, exclude=True, repr=False)
    record: TraceRecord | None = Field(default=None, repr=False)
    replay: Any = Field(default=None, repr=False)
    """For a trace-backed item, its :class:`~scenarist.replay.step_replay.ReplayResult`."""

    @model_validator(mode="before")
    @classmethod
    def _passed_from_failures(cls, data: Any) -> Any:
        if isinstance(data, dict) and "passed" not in data:
            return {**data, "passed": not data.get("failures")}
        return data

    @property
    def ctx(self) -> RunContext | None:
        return self.context  # type: ignore[no-any-return]


class ItemSummary(BaseModel):
    """The stored line for one item of a scenario run."""

    name: str
    passed: bool
    failures: list[str] = Field(default_factory=list)
    trace_id: str | None = None
    duration_ms: float = 0.0
    cost_usd: float | None = None
    trace_backed: bool = False


class ScenarioRunRecord(BaseModel):
    """The stored summary of a scenario run: always written, even when items fail."""

    run_id: str
    scenario_name: str
    started_at: datetime
    ended_at: datetime
    duration_ms: float
    passed: bool
    pass_count: int
    fail_count: int
    cost_usd: float | None = None
    error: str | None = None
    items: list[ItemSummary] = Field(default_factory=list)


class ScenarioRunResult(Positional):
    """All items' results, in item order. ``passed`` needs at least one item, all passed.

    ``ScenarioRunResult(results)`` (Veval's construction) names the run ``""`` with a
    fresh ``run_id`` started now.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)
    __positional__ = ("results",)

    scenario_name: str = ""
    run_id: str = Field(default_factory=lambda: "run_" + secrets.token_hex(8))
    results: list[ItemRunResult] = Field(default_factory=list)
    started_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    duration_ms: float = 0.0
    error: str | None = None

    @property
    def pass_count(self) -> int:
        return sum(1 for r in self.results if r.passed)

    @property
    def fail_count(self) -> int:
        return len(self.results) - self.pass_count

    @property
    def passed(self) -> bool:
        """True only when there were items and every one passed (zero items is no pass)."""
        return bool(self.results) and self.error is None and self.fail_count == 0

    @property
    def cost_usd(self) -> float | None:
        costs = [r.cost_usd for r in self.results if r.cost_usd is not None]
        return sum(costs) if costs else None

    @property
    def verdict(self) -> str:
        """``PASSED``, ``FAILED``, ``ERROR`` (the run itself failed) or ``EMPTY`` (no items)."""
        if self.error is not None:
            return "ERROR"
        if not self.results:
            return "EMPTY"
        return "PASSED" if self.passed else "FAILED"

    def __repr__(self) -> str:
        return (
            f"ScenarioRunResult({self.scenario_name!r}: {self.verdict}, "
            f"{self.pass_count}/{len(self.results)} items passed, run_id={self.run_id!r})"
        )

    def report_lines(self) -> list[str]:
        """The report as plain lines: the verdict, then each item (failures under it)."""
        cost = f", ${self.cost_usd:.6f}" if self.cost_usd is not None else ""
        lines = [
            f"{self.scenario_name or 'scenario run'}: {self.verdict} | "
            f"{self.pass_count} passed, {self.fail_count} failed of {len(self.results)} "
            f"item(s) | {self.duration_ms:.0f} ms{cost} | run {self.run_id}"
        ]
        if self.error is not None:
            lines.append(f"  error: {self.error}")
        for number, result in enumerate(self.results, start=1):
            mark = "PASS" if result.passed else "FAIL"
            trace = f" (trace {result.trace_id})" if result.trace_id else ""
            lines.append(f"  {mark}  {number}. {result.item.label}{trace}")
            lines.extend(f"          - {failure}" for failure in result.failures)
        return lines

    def print_report(self, console: Any = None) -> None:
        """Print :meth:`report_lines` (to a ``rich`` console if given, else stdout)."""
        text = "\n".join(self.report_lines())
        if console is None:
            print(text)
        else:
            console.print(text, highlight=False, markup=False, soft_wrap=True)

    def to_record(self, ended_at: datetime) -> ScenarioRunRecord:
        """The stored summary (built from valid values, so without re-validation)."""
        return construct(
            ScenarioRunRecord,
            {
                "run_id": self.run_id,
                "scenario_name": self.scenario_name,
                "started_at": self.started_at,
                "ended_at": ended_at,
                "duration_ms": self.duration_ms,
                "passed": self.passed,
                "pass_count": self.pass_count,
                "fail_count": self.fail_count,
                "cost_usd": self.cost_usd,
                "error": self.error,
                "items": [
                    construct(
                        ItemSummary,
                        {
                            "name": r.item.label,
                            "passed": r.passed,
                            "failures": r.failures,
                            "trace_id": r.trace_id,
                            "duration_ms": r.duration_ms,
                            "cost_usd": r.cost_usd,
                            "trace_backed": r.item.is_trace_backed,
                        },
                    )
                    for r in self.results
                ],
            },
        )

    def assert_passed(self) -> None:
        """Raise ``AssertionError`` listing every failing item unless the run passed."""
        if self.passed:
            return
        lines = [f"scenario {self.scenario_name!r}: {self.pass_count}/{len(self.results)} passed"]
        if self.error:
            lines.append(self.error)
        for r in self.results:
            if not r.passed:
                lines.append(f"- {r.item.label}")
                lines.extend(f"    {f}" for f in r.failures)
        raise AssertionError("\n".join(lines))
