"""How a Veval-style scenario run went: one :class:`ItemRunResult` per item, and the
:class:`ScenarioRunResult` of the whole run, whose stored summary is a
:class:`~scenarist.model.items.ScenarioRunRecord`. Results hold the live run (its
``RunContext``); the records they become hold only data.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field, model_validator

from scenarist.model._construct import construct
from scenarist.model._positional import Positional
from scenarist.model.certificate import ReplayCertificate
from scenarist.model.items import ItemSummary, ScenarioItem, ScenarioRunRecord
from scenarist.model.record import TraceRecord

if TYPE_CHECKING:
    from scenarist.model.results import ScenarioResult
    from scenarist.tracing.context import RunContext

__all__ = ["ItemRunResult", "ScenarioRunResult"]


class ItemRunResult(Positional):
    """How one item went: passed, the failure messages, and the run it produced.

    Built as Veval builds it (``ItemRunResult(item, failures, context)``, every argument
    optional: ``item`` defaults to an empty ``ScenarioItem()``), ``passed`` defaults to
    having no failures.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)
    __positional__ = ("item", "failures", "context")

    item: ScenarioItem = Field(default_factory=ScenarioItem)
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

    @property
    def certificate(self) -> ReplayCertificate | None:
        """The item's replay certificate: its replay's (a trace-backed item), else the
        captured calls of its run (guarantee ``none``: a synthetic item runs live)."""
        if self.replay is not None and self.replay.certificate is not None:
            return self.replay.certificate  # type: ignore[no-any-return]
        if self.record is None:
            return None
        return ReplayCertificate.from_spans(self.record.steps, "none")


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
    inline_items: bool = False
    """The items were passed as ``items=[...]`` (not fetched from the store)."""

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
        if (certificate := self.certificate) is not None:
            lines.append(f"  {certificate.line()}")
        for number, result in enumerate(self.results, start=1):
            mark = "PASS" if result.passed else "FAIL"
            trace = f" (trace {result.trace_id})" if result.trace_id else ""
            if result.replay is not None and (mine := result.certificate) is not None:
                trace += f" [{mine.summary()}]"
            lines.append(f"  {mark}  {number}. {result.item.label}{trace}")
            lines.extend(f"          - {failure}" for failure in result.failures)
        return lines

    @property
    def certificate(self) -> ReplayCertificate | None:
        """The run's replay certificate when an item replayed a trace: the items' counts,
        under the weakest guarantee among them (``None``: no item replayed)."""
        if not any(r.replay is not None for r in self.results):
            return None
        parts = [c for r in self.results if (c := r.certificate) is not None]
        return ReplayCertificate.combine(parts)

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
                "inline_items": self.inline_items,
                "certificate": self.certificate,
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
                            "replay_of": r.item.trace_id if r.item.is_trace_backed else None,
                            "certificate": r.certificate if r.replay is not None else None,
                        },
                    )
                    for r in self.results
                ],
            },
        )

    def to_scenario_results(self) -> list[ScenarioResult]:
        """The run as scenario results, one per item (``<scenario> / <item>``), so
        ``scenarist run`` reports, counts and writes to JUnit the items a file ran as it
        does scenarios. An item's failures are its failed checks; a run that failed as a
        whole (no items, a fetch that raised) is one errored result."""
        from scenarist.model.results import (
            CheckResult,
            CheckStatus,
            ScenarioResult,
            StepError,
            TestCaseResult,
        )
        from scenarist.model.trace import Interaction, Trace

        name = self.scenario_name or "scenario run"
        if self.error is not None or not self.results:
            error = StepError(
                message=self.error or "no items ran",
                exception_type="ScenarioRunError",
                phase="items",
            )
            return [ScenarioResult(scenario_name=name, steps=[TestCaseResult(error=error)])]
        from scenarist.model.budget import BUDGET_ERROR, BUDGET_PHASE

        converted = []
        for r in self.results:
            label = r.item.label
            if _budget_stopped(r):  # BUDGET for scenarist's reports, an ERROR for giskard's
                message = r.failures[0].removeprefix("BUDGET: ")
                error = StepError(message=message, exception_type=BUDGET_ERROR, phase=BUDGET_PHASE)
                skip = CheckResult(
                    status=CheckStatus.SKIP, message=message, kind="item", name=label
                )
                converted.append(
                    ScenarioResult(
                        scenario_name=f"{name} / {label}",
                        steps=[TestCaseResult(results=[skip], error=error)],
                        runs_executed=0,
                        tags=["item", *r.item.tags],
                    )
                )
                continue
            if r.passed:
                checks = [
                    CheckResult(
                        status=CheckStatus.PASS,
                        message=f"passed ({len(r.item.assertions)} item assertion(s))",
                        kind="item",
                        name=label,
                    )
                ]
            else:
                checks = [
                    CheckResult(status=CheckStatus.FAIL, message=f, kind="item", name=label)
                    for f in r.failures or ["failed"]
                ]
            if r.record is not None:
                trace = r.record.to_trace()
            else:
                trace = Trace(interactions=[Interaction(inputs=r.item.input, outputs=r.output)])
            kind = "trace-backed" if r.item.is_trace_backed else "synthetic"
            converted.append(
                ScenarioResult(
                    scenario_name=f"{name} / {label}",
                    steps=[TestCaseResult(results=checks, duration_ms=round(r.duration_ms))],
                    final_trace=trace,
                    duration_ms=round(r.duration_ms),
                    tags=["item", kind, *r.item.tags],
                    certificate=r.certificate if r.replay is not None else None,
                )
            )
        return converted

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


def _budget_stopped(result: ItemRunResult) -> bool:
    """An item the run's budget did not start (see ``veval/item_runner.py``)."""
    return (
        result.record is None
        and len(result.failures) == 1
        and result.failures[0].startswith("BUDGET: not started")
    )
