"""Results: what a run produced, as plain data.

``CheckResult`` → ``TestCaseResult`` (one per scenario step) → ``ScenarioResult`` →
``SuiteResult``; ``SuiteResult.group_by`` gives a ``GroupedSuiteResult``. Every level
rolls statuses up the same way (:func:`scenarist.model.status.rollup`). The models hold no
presentation code: ``print_report`` and Rich rendering live in :mod:`scenarist.report`.
"""

from __future__ import annotations

import traceback as _traceback
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Self

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, computed_field

from scenarist.model._construct import construct
from scenarist.model._ready import Ready
from scenarist.model.budget import BUDGET, BUDGET_PHASE, BudgetReport
from scenarist.model.certificate import ReplayCertificate
from scenarist.model.stats import (
    interval_verdict,
    pass_at_k,
    pass_hat_k,
    sequential_verdict,
    wilson_interval,
)
from scenarist.model.status import (
    DECIDED,
    FAILING,
    CheckStatus,
    RateVerdict,
    ScenarioStatus,
    TestCaseStatus,
    format_rate,
    pass_rate,
    rollup,
    summary_line,
)
from scenarist.model.trace import Trace

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

    from scenarist.model.comparison import RunComparison
    from scenarist.model.error_origin import ErrorOrigin

__all__ = [
    "CheckResult",
    "CheckStatus",
    "GroupStats",
    "GroupedSuiteResult",
    "Metric",
    "RepeatStats",
    "ScenarioResult",
    "ScenarioStatus",
    "StepError",
    "SuiteResult",
    "TestCaseResult",
    "TestCaseStatus",
    "split_tag",
]


def report(name: str) -> Any:
    """The function ``name`` of :mod:`scenarist.report`, the one renderer.

    The results' giskard-checks methods render themselves, so the model reaches up to the
    report layer here, and only here (an exception named in the layering test); the
    import waits for the first report, so ``import scenarist`` never loads Rich.
    """
    from scenarist import report as renderer

    return getattr(renderer, name)


class _Renderable(BaseModel):
    """Results render themselves through the one renderer in :mod:`scenarist.report`."""

    model_config = ConfigDict(defer_build=True)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from report("render")(self)

    def print_report(self, console: Console | None = None) -> None:
        """Print this result with Rich (to stdout unless ``console`` is given)."""
        report("print_report")(self, console)


class Metric(BaseModel):
    """A named number a check measured (a similarity, a score, an agreement rate)."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    name: str
    value: float


def _unset(value: object) -> bool:
    return value is None


def _false(value: object) -> bool:
    return value is False


def _empty(value: object) -> bool:
    return not value


class CheckResult(Ready, _Renderable):
    """The verdict of one check: a status, a message, metrics and details.

    The runner also stamps which check it was: ``kind`` (its registered kind), ``name``
    and ``duration_ms``. These are ours, typed, keyword-only and ``None`` by default, and
    left out of ``model_dump()`` while ``None``, so a ``CheckResult(...)`` built by hand
    constructs and dumps exactly as in giskard-checks. Like giskard-checks, the runner
    also writes them into ``details`` (``check_kind``, ``check_name``, ``duration_ms``,
    ``check_description``), where giskard code reads them. See ``docs/design/giskard-compat.md``.
    """

    # Ready (scenarist.model._ready): built-in checks answer at once, and both
    # ``await check.run(trace)`` and ``asyncio.run(check.run(trace))`` give the verdict.

    model_config = ConfigDict(defer_build=True, frozen=True)

    status: CheckStatus
    message: str | None = None
    metrics: list[Metric] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)
    kind: str | None = Field(default=None, kw_only=True, exclude_if=_unset)
    """The check's registered kind (``"equals"``, ``"fn"``...), stamped by the runner."""
    name: str | None = Field(default=None, kw_only=True, exclude_if=_unset)
    """The check's ``name``, stamped by the runner."""
    duration_ms: int | None = Field(default=None, kw_only=True, exclude_if=_unset)
    """How long the check took, stamped by the runner."""
    vacuous: bool = Field(default=False, kw_only=True, exclude_if=_false)
    """A PASS that asserted nothing (an ``AllOf`` with no checks passes, as in
    giskard-checks): reports flag it. Left out of dumps while ``False``."""

    @classmethod
    def _make(
        cls,
        status: CheckStatus,
        message: str | None,
        details: dict[str, Any] | None,
        metrics: Iterable[Metric] | None,
    ) -> Self:
        return construct(
            cls,
            {
                "status": status,
                "message": message,
                "metrics": list(metrics) if metrics else [],
                "details": details or {},
                "kind": None,
                "name": None,
                "duration_ms": None,
                "vacuous": False,
            },
        )

    @classmethod
    def success(
        cls,
        message: str | None = None,
        details: dict[str, Any] | None = None,
        metrics: Iterable[Metric] | None = None,
    ) -> Self:
        """A PASS verdict."""
        return cls._make(CheckStatus.PASS, message, details, metrics)

    @classmethod
    def failure(
        cls,
        message: str | None = None,
        details: dict[str, Any] | None = None,
        metrics: Iterable[Metric] | None = None,
    ) -> Self:
        """A FAIL verdict: the check ran and the system did not meet it."""
        return cls._make(CheckStatus.FAIL, message, details, metrics)

    @classmethod
    def skip(
        cls,
        message: str | None = None,
        details: dict[str, Any] | None = None,
        metrics: Iterable[Metric] | None = None,
    ) -> Self:
        """A SKIP verdict: the check was not evaluated."""
        return cls._make(CheckStatus.SKIP, message, details, metrics)

    @classmethod
    def error(
        cls,
        message: str | None = None,
        details: dict[str, Any] | None = None,
        metrics: Iterable[Metric] | None = None,
    ) -> Self:
        """An ERROR verdict: the check could not be evaluated (bad key, exception...)."""
        return cls._make(CheckStatus.ERROR, message, details, metrics)

    def __hash__(self) -> int:
        # Consistent with ``==`` (which compares every field); see ``scenarist.model._ready``.
        return hash((self.status, self.message))

    @property
    def passed(self) -> bool:
        return self.status is CheckStatus.PASS

    @property
    def failed(self) -> bool:
        return self.status is CheckStatus.FAIL

    @property
    def errored(self) -> bool:
        return self.status is CheckStatus.ERROR

    @property
    def skipped(self) -> bool:
        return self.status is CheckStatus.SKIP

    @property
    def label(self) -> str:
        """The check's display name: its ``name``, else its kind, else ``"check"``."""
        return str(
            self.name
            or self.kind
            or self.details.get("check_name")
            or self.details.get("check_kind")
            or "check"
        )


class StepError(BaseModel):
    """An exception raised while a step's inputs or outputs were produced.

    Also importable as ``TestCaseError`` (giskard-checks' name for this object).
    """

    __test__ = False  # not a pytest test class (under its ``TestCaseError`` name)

    model_config = ConfigDict(defer_build=True, frozen=True)

    message: str
    exception_type: str
    traceback: str | None = None
    phase: str = "outputs"

    @classmethod
    def from_exception(cls, exc: BaseException, phase: str) -> Self:
        from scenarist.redaction import redact_text  # an error only: not on every step

        return cls(  # an HTTP client's error quotes its URL, key and all: redacted
            message=redact_text(str(exc) or type(exc).__name__),
            exception_type=type(exc).__name__,
            traceback=redact_text("".join(_traceback.format_exception(exc))),
            phase=phase,
        )

    def origin(self) -> ErrorOrigin:
        """Which part raised (the agent call, the input generator...) and the user's own
        frame, read from the stored traceback (:mod:`scenarist.model.error_origin`)."""
        from scenarist.model.error_origin import origin_of_traceback

        return origin_of_traceback(self.traceback, self.phase)

    def describe(self) -> str:
        """The error for people: the exception and message, what raised it (the agent
        call, the input generator...) and, on a second line, the user's own frame.
        giskard's :meth:`summary` says ``during input_generation`` for every one of them."""
        origin = self.origin()
        where = f"\n  at {origin.location}" if origin.location else ""
        if origin.what is None:  # the traceback does not say: giskard's words
            return f"{self.summary()}{where}"
        return f"{self.exception_type} in {origin.what}: {self.message}{where}"

    def summary(self) -> str:
        """One line: ``<ExceptionType> during <phase>: <message>`` (as giskard-checks)."""
        phase = f" during {self.phase}" if self.phase else ""
        return f"{self.exception_type}{phase}: {self.message}"


TestCaseError = StepError
"""giskard-checks' name for a step error (a model carried on results, not an exception)."""

_PAST_TENSE = {"pass": "PASSED", "fail": "FAILED", "error": "ERRORED", "skip": "SKIPPED"}


class TestCaseResult(_Renderable):
    """The result of one scenario step: its check results, timing and any error."""

    __test__ = False  # not a pytest test class

    results: list[CheckResult] = Field(default_factory=list)
    duration_ms: int = 0
    last_interaction_index: int | None = None
    error: StepError | None = None
    empty_generators: tuple[str, ...] = Field(default=(), kw_only=True, exclude_if=_empty)
    """The input generators of this step that yielded no input (their kind or name): the
    step's checks judged only what earlier steps produced, so the scenario's pass is
    ``vacuous``. Ours; left out of dumps while empty."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def status(self) -> TestCaseStatus:
        if self.error is not None:
            return TestCaseStatus.ERROR
        return rollup((r.status for r in self.results), TestCaseStatus)

    @property
    def passed(self) -> bool:
        return self.status is TestCaseStatus.PASS

    @property
    def failed(self) -> bool:
        return self.status is TestCaseStatus.FAIL

    @property
    def errored(self) -> bool:
        return self.status is TestCaseStatus.ERROR

    @property
    def skipped(self) -> bool:
        return self.status is TestCaseStatus.SKIP

    @property
    def failures_and_errors(self) -> list[CheckResult]:
        """The check results that failed or errored, in order."""
        return [r for r in self.results if r.status in FAILING]

    def format_failures(self) -> list[str]:
        """One line per check that did not pass (SKIP included), after the step error if any.

        As giskard-checks: ``"<check name or kind> FAILED: <message>"``.
        """
        lines: list[str] = []
        if self.error is not None:
            lines.append(f"Test case ERRORED: {self.error.summary()}")
        for r in self.results:
            if r.status is CheckStatus.PASS:
                continue
            label = r.name or r.details.get("check_name") or r.kind
            label = label or r.details.get("check_kind") or "Unknown check"
            message = r.message or "No specific error message provided"
            lines.append(f"{label} {_PAST_TENSE[r.status.value]}: {message}")
        return lines

    def assert_passed(self) -> None:
        """Raise ``AssertionError`` listing what did not pass unless the step passed."""
        if self.status is not TestCaseStatus.PASS:
            raise AssertionError(
                "Test case failed with the following errors:\n" + "\n".join(self.format_failures())
            )


class RepeatStats(BaseModel):
    """What a scenario's repeated runs say about its pass rate (``Suite.run(repeat=...)``).

    ``runs`` counts the repeats that were decided (PASS, FAIL or ERROR: an ERROR counts
    against the rate, as in every pass rate; a SKIP does not count). ``ci_low`` /
    ``ci_high`` bound the pass rate with a Wilson 95% interval. With a required rate
    (``min_pass_rate``), ``verdict`` says whether the rate is shown to reach it
    (:class:`~scenarist.model.status.RateVerdict`; ``method`` ``"wilson"`` for a fixed
    number of repeats, ``"sequential"`` for ``repeat="auto"``, see
    :mod:`scenarist.model.stats`). Ours: giskard-checks has no such object.
    """

    model_config = ConfigDict(defer_build=True, frozen=True)

    runs: int
    passed: int
    pass_rate: float | None
    ci_low: float
    ci_high: float
    confidence: float = 0.95
    flaky: bool = False
    min_pass_rate: float | None = None
    verdict: RateVerdict | None = None
    method: str = "wilson"
    cap: int | None = None
    """The most repeats ``repeat="auto"`` could make (``None``: a fixed number)."""

    @classmethod
    def of(
        cls,
        statuses: Iterable[str],
        min_pass_rate: float | None = None,
        *,
        sequential: bool = False,
        cap: int | None = None,
    ) -> RepeatStats:
        """The statistics of some repeats' statuses, judged against ``min_pass_rate``."""
        listed = [s for s in statuses if s in DECIDED]
        runs = len(listed)
        passed = sum(1 for s in listed if s == CheckStatus.PASS)
        low, high = wilson_interval(runs, passed)
        verdict: RateVerdict | None = None
        if min_pass_rate is not None:
            judge = sequential_verdict if sequential else interval_verdict
            verdict = judge(runs, passed, min_pass_rate)
        return cls(
            runs=runs,
            passed=passed,
            pass_rate=pass_rate(passed, runs),
            ci_low=low,
            ci_high=high,
            flaky=0 < passed < runs,
            min_pass_rate=min_pass_rate,
            verdict=verdict,
            method="sequential" if sequential else "wilson",
            cap=cap,
        )

    @property
    def gate_passed(self) -> bool:
        """The required rate is shown to be met (a PASS verdict)."""
        return self.verdict is RateVerdict.PASS

    def describe(self) -> str:
        """``9/10 passed, 90.0% (95% CI 59.6%–98.2%) | min 80.0%: INCONCLUSIVE``."""
        text = (
            f"{self.passed}/{self.runs} passed, {format_rate(self.pass_rate)} "
            f"(95% CI {format_rate(self.ci_low)}–{format_rate(self.ci_high)})"
        )
        if self.verdict is not None and self.min_pass_rate is not None:
            how = " sequential" if self.method == "sequential" else ""
            text += f" | min {format_rate(self.min_pass_rate)}:{how} {self.verdict.name}"
        if self.flaky:
            text += " | FLAKY"
        return text


class ScenarioResult(_Renderable):
    """The result of running one scenario: its steps, final trace and timing.

    ``ScenarioResult[TraceType]`` subscripts as in giskard-checks (typing only).
    """

    scenario_name: str
    steps: list[TestCaseResult] = Field(default_factory=list)
    final_trace: SerializeAsAny[Trace] = Field(default_factory=Trace)  # type: ignore[type-arg]
    duration_ms: int = 0
    multiple_runs: int = 1
    runs_executed: int = 1
    run_statuses: list[ScenarioStatus] = Field(default_factory=list)
    repeat_statuses: list[ScenarioStatus] = Field(default_factory=list)
    """With ``Suite.run(repeat=k)``: the status of each of the ``k`` independent runs
    (this result shows the first one that did not pass, else the last)."""
    tags: list[str] = Field(default_factory=list)
    certificate: ReplayCertificate | None = Field(default=None, exclude=True, repr=False)
    """The replay certificate of its LLM calls when it ran inside a cassette (guarantee
    ``none`` when recording) or replayed a trace as an item; ``None`` otherwise. Ours
    (giskard-checks has none): left out of dumps, kept by the run log's record."""
    repeat_stats: RepeatStats | None = Field(default=None, kw_only=True, exclude_if=_unset)
    """With repeats: the pass rate, its interval and, with ``min_pass_rate``, the
    statistical verdict. Ours; left out of dumps while ``None`` (the giskard-compatible
    ``status`` stays that of the run shown)."""

    def __class_getitem__(cls, params: Any) -> Any:
        return cls

    @computed_field  # type: ignore[prop-decorator]
    @property
    def status(self) -> ScenarioStatus:
        return rollup((s.status for s in self.steps), ScenarioStatus)

    @property
    def passed(self) -> bool:
        return self.status is ScenarioStatus.PASS

    @property
    def failed(self) -> bool:
        return self.status is ScenarioStatus.FAIL

    @property
    def errored(self) -> bool:
        return self.status is ScenarioStatus.ERROR

    @property
    def skipped(self) -> bool:
        return self.status is ScenarioStatus.SKIP

    @property
    def budget_stopped(self) -> bool:
        """The run's budget did not start this scenario (its status is ERROR for
        giskard-checks code; :attr:`outcome` says ``"budget"``)."""
        steps = self.steps
        error = steps[0].error if steps else None
        return error is not None and error.phase == BUDGET_PHASE

    @property
    def outcome(self) -> str:
        """The outcome scenarist shows: ``"budget"`` for a scenario the budget did not
        start, else the status's value (``"pass"``, ``"fail"``, ``"error"``, ``"skip"``)."""
        return BUDGET if self.budget_stopped else self.status.value

    @property
    def repeats_passed(self) -> int:
        """How many of the repeated runs passed (0 without ``repeat``)."""
        return sum(1 for s in self.repeat_statuses if s == ScenarioStatus.PASS)

    @property
    def flaky(self) -> bool:
        """Repeated runs disagreed: at least one passed and at least one did not."""
        passed = self.repeats_passed
        return 0 < passed < len(self.repeat_statuses)

    @property
    def gate_passed(self) -> bool:
        """Passed: its rate verdict is PASS when it has one (a required rate over
        repeats), else its status is PASS. What the CLI's exit code and JUnit count."""
        stats = self.repeat_stats
        if stats is not None and stats.verdict is not None:
            return stats.verdict is RateVerdict.PASS
        return self.status is ScenarioStatus.PASS

    @property
    def rate_verdict(self) -> RateVerdict | None:
        """The statistical verdict against ``min_pass_rate`` (``None`` without one)."""
        stats = self.repeat_stats
        return stats.verdict if stats is not None else None

    @property
    def replay_verdict(self) -> dict[str, int] | None:
        """LLM calls ``replayed`` / ``missed`` / ``refused`` by the network guard / made
        ``live`` (captured calls only; a refused call never counts as live); ``None`` when
        nothing was replayed, missed or refused (an ordinary live run)."""
        found = ReplayCertificate.from_spans(self.final_trace.spans)
        counts = found.model_dump(include={"replayed", "missed", "refused", "live"})
        return counts if found.replayed or found.missed or found.refused else None

    @property
    def vacuous(self) -> bool:
        """Passed with an empty final trace (no interaction happened, so the checks, if
        any, judged nothing), or with a step whose input generator yielded no input. Still
        a PASS, as in giskard-checks, but flagged in every report; ``--fail-on-vacuous``
        makes it a failure."""
        # the trace first: rolling the status up costs more, and a trace with
        # interactions and no empty generator (the usual pass) needs no status
        return (
            not self.final_trace.interactions or any(s.empty_generators for s in self.steps)
        ) and self.passed

    @property
    def vacuous_reason(self) -> str | None:
        """Why the pass is :attr:`vacuous`, as reports say it (``None`` when it is not)."""
        if not self.vacuous:
            return None
        for index, step in enumerate(self.steps, start=1):
            for label in step.empty_generators:
                return f"the input generator {label!r} of step {index} yielded no input"
        return "no interaction in its trace"

    @property
    def check_count(self) -> int:
        """How many check verdicts the scenario produced (0 flags an untested pass)."""
        return sum(len(s.results) for s in self.steps)

    @property
    def has_checks(self) -> bool:
        """False for a scenario that passed only because it checked nothing."""
        return self.check_count > 0

    @property
    def cost_usd(self) -> float | None:
        return self.final_trace.cost_usd

    @property
    def tokens_in(self) -> int:
        return self.final_trace.tokens_in

    @property
    def tokens_out(self) -> int:
        return self.final_trace.tokens_out

    @property
    def failures_and_errors(self) -> list[TestCaseResult]:
        """The steps that failed or errored (giskard-checks' meaning)."""
        return [step for step in self.steps if step.status in FAILING]

    def format_failures(self) -> str:
        """One line per check that did not pass, over the failing steps."""
        return "\n".join(line for s in self.failures_and_errors for line in s.format_failures())

    def assert_passed(self) -> None:
        """Raise ``AssertionError`` listing every failed check unless the scenario passed
        (with a required pass rate over repeats: unless its rate verdict is PASS)."""
        if (stats := self.repeat_stats) is not None and stats.verdict is not None:
            if stats.verdict is not RateVerdict.PASS:
                raise AssertionError(
                    f"scenario {self.scenario_name!r} pass rate not shown to reach "
                    f"{format_rate(stats.min_pass_rate)}: {stats.describe()}\n"
                    f"{self.format_failures()}"
                )
            return
        if self.status is not ScenarioStatus.PASS:
            raise AssertionError(
                f"scenario {self.scenario_name!r} {self.status.value}:\n{self.format_failures()}"
            )


def split_tag(tag: str) -> tuple[str, str | None]:
    """``"Key:Value"`` → ``("Key", "Value")``; a bare label → ``(label, None)``."""
    key, sep, value = tag.partition(":")
    return (key, value) if sep else (tag, None)


class GroupStats(BaseModel):
    """Pass/fail counts for one tag value."""

    model_config = ConfigDict(defer_build=True)

    name: str | None
    passed: int
    failed: int
    errored: int
    skipped: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total(self) -> int:
        return self.passed + self.failed + self.errored + self.skipped

    @computed_field  # type: ignore[prop-decorator]
    @property
    def non_skipped(self) -> int:
        return self.total - self.skipped

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pass_rate(self) -> float | None:
        return pass_rate(self.passed, self.non_skipped)

    @property
    def display_name(self) -> str:
        """``(untagged)`` for the ``None`` bucket, ``true`` for a bare or empty value."""
        if self.name is None:
            return "(untagged)"
        return self.name or "true"


def _rate(counts: dict[ScenarioStatus, int]) -> float | None:
    passed = counts[ScenarioStatus.PASS]
    return pass_rate(passed, passed + counts[ScenarioStatus.FAIL] + counts[ScenarioStatus.ERROR])


class SuiteResult(_Renderable):
    """The results of a suite run, in scenario order."""

    results: list[ScenarioResult] = Field(default_factory=list)
    duration_ms: int = 0
    suite_name: str | None = None
    started_at: datetime | None = None
    recommendation: str | None = None
    suite: Any = Field(default=None, exclude=True, repr=False)
    incomplete: bool = Field(default=False, kw_only=True, exclude_if=lambda value: not value)
    """The run did not finish: read back from a run log without its end record (an
    interrupted run), so the counts cover only the scenarios that finished. Reports say
    ``INCOMPLETE``; left out of dumps while ``False`` (giskard-checks has no such field)."""
    rate_limits: Any = Field(default=None, kw_only=True, exclude=True, repr=False)
    """What the run's rate limiter did (a ``LimiterStats``), when it had one: the report
    shows it (not part of the run log)."""
    budget: BudgetReport | None = Field(default=None, kw_only=True, exclude_if=_unset)
    """What the run's budget did (``Suite.run(budget=...)``), when it had one; left out of
    dumps while ``None`` (giskard-checks has no such field)."""
    certificate: ReplayCertificate | None = Field(
        default=None, kw_only=True, exclude=True, repr=False
    )
    """The run's replay certificate when it ran inside a cassette (its scenarios' calls,
    raised to what the cassette saw outside them; see
    :func:`scenarist.model.certificate.run_certificate`); ``None`` otherwise. Reports,
    JUnit and the run log show it; left out of dumps (giskard-checks has no such field)."""

    def _tally(self) -> dict[ScenarioStatus, int]:
        """How many scenarios ended in each status, every status present (one pass over
        the results: each scenario's status is rolled up from its steps once)."""
        counts = dict.fromkeys(ScenarioStatus, 0)
        for r in self.results:
            counts[r.status] += 1
        return counts

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed_count(self) -> int:
        return self._tally()[ScenarioStatus.PASS]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def failed_count(self) -> int:
        return self._tally()[ScenarioStatus.FAIL]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def errored_count(self) -> int:
        return self._tally()[ScenarioStatus.ERROR]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def skipped_count(self) -> int:
        return self._tally()[ScenarioStatus.SKIP]

    @property
    def budget_count(self) -> int:
        """Scenarios the budget did not start (counted in ``errored_count`` too)."""
        return sum(1 for r in self.results if r.budget_stopped)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pass_rate(self) -> float | None:
        """Passed / non-skipped scenarios (ERROR counts); ``None`` when nothing was evaluated."""
        return _rate(self._tally())

    @property
    def failures_and_errors(self) -> list[ScenarioResult]:
        """The scenarios that failed or errored (giskard-checks' meaning)."""
        return [r for r in self.results if r.status in FAILING]

    def summary_line(self) -> str:
        """``4 scenarios: 2 passed, 2 failed, 0 errored, 0 skipped | pass rate 50.0%``: the
        line the CLI, the pytest plugin and the dashboard show for a run (prefixed
        ``INCOMPLETE run (no end record):`` for a run that did not finish)."""
        counts = self._tally()
        budget = self.budget_count
        line = summary_line(
            len(self.results),
            counts[ScenarioStatus.PASS],
            counts[ScenarioStatus.FAIL],
            counts[ScenarioStatus.ERROR] - budget,
            counts[ScenarioStatus.SKIP],
            _rate(counts),
            budget=budget,
        )
        return f"INCOMPLETE run (no end record): {line}" if self.incomplete else line

    @property
    def status(self) -> ScenarioStatus:
        return rollup((r.status for r in self.results), ScenarioStatus)

    @property
    def repeat(self) -> int:
        """How many times each scenario ran (``Suite.run(repeat=k)``), 1 by default."""
        return max((len(r.repeat_statuses) for r in self.results), default=0) or 1

    @property
    def flaky(self) -> list[ScenarioResult]:
        """Scenarios whose repeated runs both passed and failed."""
        return [r for r in self.results if r.flaky]

    @property
    def rate_verdicts(self) -> dict[str, int]:
        """How many scenarios got each statistical verdict (``{}`` without a required rate)."""
        counts: dict[str, int] = {}
        for r in self.results:
            if (verdict := r.rate_verdict) is not None:
                counts[verdict.value] = counts.get(verdict.value, 0) + 1
        return counts

    @property
    def pass_at_k(self) -> float | None:
        """Mean over scenarios of pass@k, ``k = repeat`` (``None`` without repeats)."""
        return self._repeat_mean(pass_at_k)

    @property
    def pass_hat_k(self) -> float | None:
        """Mean over scenarios of pass^k, ``k = repeat`` (``None`` without repeats)."""
        return self._repeat_mean(pass_hat_k)

    def _repeat_mean(self, estimator: Callable[[int, int, int], float]) -> float | None:
        rows = [r for r in self.results if len(r.repeat_statuses) > 1]
        if not rows:
            return None
        values = [
            estimator(len(r.repeat_statuses), r.repeats_passed, len(r.repeat_statuses))
            for r in rows
        ]
        return sum(values) / len(values)

    def compare(self, baseline: SuiteResult, *, alpha: float = 0.05) -> RunComparison:
        """What changed since ``baseline``: fixed, broken, still failing, new, removed;
        ``regressed``: pass rates that dropped significantly at level ``alpha`` (a
        one-sided Fisher exact test on each scenario's repeats)."""
        from scenarist.model.comparison import compare_runs

        return compare_runs(baseline, self, alpha=alpha)

    @property
    def cost_usd(self) -> float | None:
        costs = [c for r in self.results if (c := r.cost_usd) is not None]
        return sum(costs) if costs else None

    @property
    def tokens_in(self) -> int:
        return sum(r.tokens_in for r in self.results)

    @property
    def tokens_out(self) -> int:
        return sum(r.tokens_out for r in self.results)

    def group_by(self, key: str) -> GroupedSuiteResult:
        """Bucket scenarios by the value of their ``key:value`` tags.

        A scenario lands in every bucket whose value it carries (so totals may exceed the
        number of scenarios); a bare ``key`` tag counts as the value ``""`` (shown as
        ``true``); scenarios without the key go to the ``None`` bucket.
        """
        counts: dict[str | None, dict[str, int]] = {}
        for result in self.results:
            values: list[str | None] = []
            for tag in result.tags:
                tag_key, value = split_tag(tag)
                if tag_key == key and (value or "") not in values:
                    values.append(value or "")
            for value in values or [None]:
                bucket = counts.setdefault(
                    value, dict.fromkeys(("pass", "fail", "error", "skip"), 0)
                )
                bucket[result.status.value] += 1
        groups = {
            value: GroupStats(
                name=value,
                passed=c["pass"],
                failed=c["fail"],
                errored=c["error"],
                skipped=c["skip"],
            )
            for value, c in counts.items()
        }
        return GroupedSuiteResult(suite_result=self, key=key, groups=groups)

    def print_report(self, console: Console | None = None, group_by: str | None = None) -> None:
        """Print the suite report; with ``group_by``, add a pass-rate table per tag value."""
        report("print_report")(self.group_by(group_by) if group_by else self, console)

    def to_hub_format(self) -> dict[str, Any]:
        """A JSON-serialisable payload in the shape the Giskard Hub accepts."""
        payload: dict[str, Any] = report("to_hub_format")(self)
        return payload

    def to_junit_xml(self, path: str | Any | None = None, **options: Any) -> str:
        """The run as JUnit XML; with ``path``, also write it there (parents created).
        ``options``: ours (``system_out``, ``name_exceptions``, ``xml_declaration``), see
        :func:`scenarist.report.junit.to_junit_xml`."""
        xml: str = report("to_junit_xml")(self, path, **options)
        return xml

    def assert_passed(self) -> None:
        """Raise ``AssertionError`` naming every scenario that did not pass."""
        bad = [r for r in self.results if not r.gate_passed]
        if bad:
            lines = [f"{len(bad)} of {len(self.results)} scenarios did not pass:"]
            for r in bad:
                stats = r.repeat_stats
                if stats is not None and stats.verdict is not None:
                    lines.append(f"- {r.scenario_name} [rate {stats.describe()}]")
                else:
                    lines.append(f"- {r.scenario_name} [{r.status.value}]")
                lines.extend(f"    {line}" for line in r.format_failures().splitlines())
            raise AssertionError("\n".join(lines))


class GroupedSuiteResult(_Renderable):
    """A suite result bucketed by one tag key, with per-bucket stats."""

    suite_result: SuiteResult
    key: str
    groups: dict[str | None, GroupStats]
