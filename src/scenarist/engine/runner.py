"""The run loop: steps in order, checks after each step, early stop, repeated runs.

For each step: produce its interactions (extending the trace), run **all** its checks,
record a :class:`TestCaseResult`. If the step did not pass, stop: every later step is
reported as SKIP (one per declared check, or one synthetic SKIP for a step without
checks) and the system under test is not called for them.

With ``return_exception=False`` an exception raised by user code (a target, an outputs
function, a check) propagates unchanged. With ``True`` it becomes data: a step error
(phase ``input_generation`` or ``timeout``) or an ERROR check result carrying the
exception type and traceback.
"""

from __future__ import annotations

import inspect
import time
import traceback
from functools import lru_cache
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, SerializeAsAny

from scenarist._sync import run_sync
from scenarist.checks._spec import check_spec
from scenarist.checks.base import AnyCheck, Check, has_fresh_verdicts
from scenarist.engine._callables import Binding, bind
from scenarist.engine._user_code import stray_exit
from scenarist.engine.interactions import InteractionContext, ThreadBudget, recorded
from scenarist.engine.scenario import Scenario, Step, not_a_check
from scenarist.errors import StepTimeoutError
from scenarist.model._construct import construct, field_values
from scenarist.model._missing import MISSING
from scenarist.model.certificate import Certifying, ReplayCertificate
from scenarist.model.results import CheckResult, ScenarioResult, StepError, TestCaseResult
from scenarist.model.status import ScenarioStatus, TestCaseStatus, rollup
from scenarist.model.trace import InteractionLog, Trace, trace_type_from_annotations
from scenarist.tracing.http.capture import current_source

__all__ = [
    "ScenarioRunner",
    "TestCase",
    "TestCaseRunner",
    "bind_target",
    "get_runner",
    "get_test_case_runner",
    "run_check",
    "run_step",
]


class _Target(NamedTuple):
    """What a run needs to know about its target, looked up once per target."""

    binding: Binding
    trace_type: type[Trace[Any, Any]] | None


def _inspect_target(target: Any) -> _Target:
    return _Target(bind(target, "outputs"), trace_type_from_annotations(target))


_inspect_target_cached = lru_cache(maxsize=512)(_inspect_target)


def _look_up(target: Any) -> _Target | None:
    """The target's binding and the trace type its annotations ask for (cached per
    callable), or ``None`` without a target. The one look-up of a target."""
    if target is MISSING or target is None:
        return None
    try:
        return _inspect_target_cached(target)
    except TypeError as exc:
        if "unhashable" not in str(exc):
            raise
        return _inspect_target(target)


def bind_target(target: Any) -> Binding | None:
    """Bind a target callable once (cached per callable)."""
    found = _look_up(target)
    return None if found is None else found.binding


@lru_cache(maxsize=64)
def _empty_trace(trace_type: type[Trace[Any, Any]]) -> Trace[Any, Any]:
    """An empty trace of ``trace_type``; runs start from copies of it."""
    if trace_type is Trace:  # the common case needs no validation (nor a schema build)
        return construct(Trace, {"interactions": InteractionLog(), "annotations": {}})
    return trace_type()


#: Whether each check class's ``run`` is marked ``fresh_verdicts``, cached per class.
_FRESH: dict[type[Check], bool] = {}


def _stamp(
    result: CheckResult,
    check: Check | None,
    duration_ms: float | None,
    fresh: bool = False,
) -> CheckResult:
    """The verdict with the check's identity and timing: typed fields, and (as
    giskard-checks does) the same in ``details`` for code that reads them there, with the
    check's spec (one dict per check, shared by its verdicts: :func:`check_spec`).
    ``check=None``: the synthetic verdict of a step without checks (kind and name
    ``"step"``, no spec).

    ``fresh``: a verdict nothing else holds (see ``fresh_verdicts``): stamped in place
    (``_construct.field_values`` says what that buys), else copied."""
    took = None if duration_ms is None else round(duration_ms)
    kind: str | None
    name: str | None
    if check is None:
        kind = name = "step"
        description = spec = None
    else:
        kind, name, description = check.kind, check.name, check.description
        spec = check_spec(check)
    if fresh and type(result) is CheckResult:
        values = field_values(result)
        details = values["details"]
        details["duration_ms"] = took
        values["kind"] = kind
        values["name"] = name
        values["duration_ms"] = took
    else:
        details = dict(result.details)
        if took is not None:
            details["duration_ms"] = took
        result = construct(
            CheckResult,
            {
                "status": result.status,
                "message": result.message,
                "metrics": result.metrics,
                "details": details,
                "kind": kind,
                "name": name,
                "duration_ms": took,
                "vacuous": result.vacuous,
            },
        )
    details["check_kind"] = kind
    details["check_name"] = name
    details["check_description"] = description
    if spec is not None:
        details["check_spec"] = spec
    return result


def _as_error(caught: BaseException, who: str, return_exception: bool) -> BaseException:
    """What to record for an exception user code raised, or re-raise it.

    ``SystemExit`` and a cancellation nobody asked for become an ``AbortedCallError``
    (recorded, or raised with ``return_exception=False``, except ``SystemExit``, which
    then exits as asked); anything else that is not an ``Exception`` (Ctrl-C, the run's
    own cancellation) always propagates.
    """
    aborted = stray_exit(caught, who)
    if aborted is None and not isinstance(caught, Exception):
        raise caught
    if not return_exception:
        if aborted is None or isinstance(caught, SystemExit):
            raise caught
        raise aborted from caught
    return aborted if aborted is not None else caught


def _not_a_result(check: Check, outcome: object) -> TypeError:
    return TypeError(
        f"{type(check).__name__}.run returned {type(outcome).__name__}; "
        "a check must return a CheckResult"
    )


def _errored(check: Check, caught: BaseException, return_exception: bool) -> CheckResult:
    exc = _as_error(caught, f"check {check.label!r}", return_exception)
    return CheckResult.error(
        f"Check '{check.label}' failed with error: {exc}",
        details={
            "exception_type": type(exc).__name__,
            "traceback": "".join(traceback.format_exception(exc)),
        },
    )


async def run_check(check: Check, trace: Trace[Any, Any], return_exception: bool) -> CheckResult:
    """Run one check; stamp its details with timing and identity; errors become data if asked."""
    results, _ = await _run_checks([check], trace, return_exception, time.perf_counter())
    return results[0]


async def _run_checks(
    checks: list[AnyCheck], trace: Trace[Any, Any], return_exception: bool, t0: float
) -> tuple[list[CheckResult], float]:
    """Every check in order, from ``t0``; the verdicts and when the last one ended.

    The one path that runs a check. A sync ``run`` costs no coroutine and one clock read
    (its start is the previous check's end); an ``async def run``, or a sync one that
    returns an awaitable, is awaited. A built-in verdict given directly keeps its
    ``details`` dict (see ``fresh_verdicts``)."""
    results: list[CheckResult] = []
    for check in checks:
        check_type = type(check)
        fresh = _FRESH.get(check_type)
        if fresh is None:
            if not isinstance(check, Check):  # added with .check(), as giskard allows
                raise not_a_check(checks.index(check), check)
            fresh = _FRESH[check_type] = has_fresh_verdicts(check_type)
        try:
            outcome = check.run(trace)
            if type(outcome) is not CheckResult and not isinstance(outcome, CheckResult):
                fresh = False  # awaited, or an error of ours: copied like any other
                if not inspect.isawaitable(outcome):
                    raise _not_a_result(check, outcome)
                outcome = await outcome
                if not isinstance(outcome, CheckResult):
                    raise _not_a_result(check, outcome)
        except BaseException as caught:
            outcome = _errored(check, caught, return_exception)
            fresh = False
        now = time.perf_counter()
        results.append(_stamp(outcome, check, (now - t0) * 1000, fresh))
        t0 = now
    return results, t0


def _test_case_result(
    results: list[CheckResult],
    t0: float,
    end: float,
    trace: Trace[Any, Any] | None,
    error: StepError | None,
    empty_generators: tuple[str, ...] = (),
) -> TestCaseResult:
    """A step's result; ``trace`` is the step's (None for a lone :class:`TestCase`, whose
    trace no step produced: no ``last_interaction_index``, as in giskard-checks)."""
    n = 0 if trace is None else len(trace.interactions)
    return construct(
        TestCaseResult,
        {
            "results": results,
            "duration_ms": round((end - t0) * 1000),
            "last_interaction_index": n - 1 if n else None,
            "error": error,
            "empty_generators": empty_generators,
        },
    )


async def run_step(
    step: Step, context: InteractionContext, return_exception: bool
) -> TestCaseResult:
    """Produce the step's interactions into ``context``, then run all its checks."""
    t0 = time.perf_counter()
    error: StepError | None = None
    # Interactions that only need recording (static inputs and outputs) go into the trace
    # together, as one record built when read (trace.py), before the next spec that runs
    # code and at the end: each one's inputs and outputs, and a copy of its metadata.
    values: list[Any] = []
    metadata: list[Any] | None = None  # one copy (or None) per recorded spec, if any has some
    ran_code = False  # else the checks start when the step did (nothing ran in between)
    for spec in step.interacts:
        interact = recorded(spec)
        if interact is not None:
            values += (interact.inputs, interact.outputs)
            if interact.metadata:
                if metadata is None:
                    metadata = [None] * (len(values) // 2 - 1)
                metadata.append(dict(interact.metadata))
            elif metadata is not None:
                metadata.append(None)
            continue
        if values:
            context.record(values, metadata)
            values, metadata = [], None
        ran_code = True
        try:
            await spec.run(context)
        except BaseException as caught:
            exc = _as_error(caught, "user code", return_exception)
            phase = "timeout" if isinstance(exc, StepTimeoutError) else "input_generation"
            error = StepError.from_exception(exc, phase)
            break
    if values:
        context.record(values, metadata)
    trace = context.trace
    empty: tuple[str, ...] = ()
    if context.empty_generators is not None:  # an input generator yielded no input
        empty, context.empty_generators = tuple(context.empty_generators), None
    if error is None:
        start = time.perf_counter() if ran_code else t0
        results, end = await _run_checks(step.checks, trace, return_exception, start)
    else:
        reason = f"Checks were skipped due to {error.phase.replace('_', ' ')} failure"
        results = _skipped_checks(step, reason)
        end = time.perf_counter()
    return _test_case_result(results, t0, end, trace, error, empty)


class TestCase(BaseModel):
    """Checks over a trace you already have (a recorded conversation, a production log)."""

    __test__ = False  # not a pytest test class
    model_config = ConfigDict(defer_build=True, arbitrary_types_allowed=True)

    name: str | None = None
    trace: SerializeAsAny[Trace]  # type: ignore[type-arg]
    checks: list[AnyCheck]

    async def run(self, return_exception: bool = False) -> TestCaseResult:
        return await TestCaseRunner().run(self, return_exception)

    def run_sync(self, return_exception: bool = False) -> TestCaseResult:
        return run_sync(self.run, return_exception)

    async def assert_passed(self, return_exception: bool = False) -> TestCaseResult:
        """Run, then raise ``AssertionError`` listing the failures unless every check passed."""
        result = await self.run(return_exception)
        result.assert_passed()
        return result


class TestCaseRunner:
    """Runs a :class:`TestCase`: every check against its trace, in order."""

    __test__ = False  # not a pytest test class

    async def run(self, test_case: TestCase, return_exception: bool = False) -> TestCaseResult:
        t0 = time.perf_counter()
        results, end = await _run_checks(test_case.checks, test_case.trace, return_exception, t0)
        return _test_case_result(results, t0, end, None, None)


def _checks_of(step: Step) -> list[Check]:
    """The step's checks, for verdicts that do not run them (a ``ValidationError`` if one
    is not a check, as when running them)."""
    for index, check in enumerate(step.checks):
        if not isinstance(check, Check):
            raise not_a_check(index, check)
    return step.checks


def _skipped_checks(step: Step, message: str) -> list[CheckResult]:
    """A SKIP per check of a step that did not get to its checks; a step with no checks
    gets one SKIP named ``step``, as in giskard-checks (a step that never ran must not
    look like one that passed)."""
    if step.checks:
        return [_stamp(CheckResult.skip(message), c, None) for c in _checks_of(step)]
    return [_stamp(CheckResult.skip(message), None, None)]


def _skipped_step(index: int, step: Step, last_index: int | None) -> TestCaseResult:
    results = _skipped_checks(step, f"Step {index + 1} was skipped due to previous failure")
    return construct(
        TestCaseResult,
        {
            "results": results,
            "duration_ms": 0,
            "last_interaction_index": last_index,
            "error": None,
            "empty_generators": (),
        },
    )


def _validate_multiple_runs(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"multiple_runs must be an integer >= 1, got {value!r}")
    if value < 1:
        raise ValueError(f"multiple_runs must be greater than or equal to 1, got {value!r}")
    return value


_CERTIFYING: dict[type, bool] = {}
"""Whether a source class certifies its calls, by class: a protocol's ``isinstance``
looks every member up (7 µs, paid by each scenario of a replay), and both members are
the class's own (a property and a method)."""


def active_cassette() -> Certifying | None:
    """The cassette serving this context's LLM calls (one that certifies them), if any."""
    source = current_source()
    if source is None:
        return None
    kind = type(source)
    certifies = _CERTIFYING.get(kind)
    if certifies is None:
        certifies = _CERTIFYING[kind] = isinstance(source, Certifying)
    return source if certifies else None  # type: ignore[return-value]


def cassette_certificate(trace: Trace[Any, Any]) -> ReplayCertificate | None:
    """The certificate of a scenario's calls when it ran inside a cassette (under the
    cassette's guarantee), else ``None``."""
    tape = active_cassette()
    if tape is None:
        return None
    return ReplayCertificate.from_spans(trace.spans, tape.guarantee)


class ScenarioRunner:
    """Runs scenarios. ``Scenario.run`` uses the process-wide one from :func:`get_runner`."""

    async def run(
        self,
        scenario: Scenario,
        target: Any = MISSING,
        return_exception: bool = False,
        multiple_runs: int | None = None,
        *,
        timeout_s: float | None = None,
        stop_on_failure: bool = True,
        threads: ThreadBudget | None = None,
    ) -> ScenarioResult:
        """Run ``scenario``; ``target`` overrides the scenario's own target for this run."""
        runs = scenario.multiple_runs if multiple_runs is None else multiple_runs
        if type(runs) is not int or runs < 1:
            runs = _validate_multiple_runs(runs)
        if target is MISSING or target is None:
            target = scenario.target
        found = _look_up(target)
        binding = None if found is None else found.binding
        trace_type = scenario.trace_type or (found and found.trace_type) or Trace
        timeout = timeout_s if timeout_s is not None else scenario.timeout_s
        t0 = time.perf_counter()
        statuses: list[ScenarioStatus] = []
        steps: list[TestCaseResult] = []
        empty = _empty_trace(trace_type)
        trace = empty
        for _ in range(runs):
            context = InteractionContext(
                empty,
                binding,
                timeout_s=timeout,
                threads=threads,
                annotations=dict(scenario.annotations),
            )
            steps, status = await self._run_once(
                scenario, context, return_exception, stop_on_failure
            )
            trace = context.trace
            statuses.append(status)
            if status is not ScenarioStatus.PASS:
                break
        return construct(
            ScenarioResult,
            {
                "scenario_name": scenario.name,
                "steps": steps,
                "final_trace": trace,
                "duration_ms": round((time.perf_counter() - t0) * 1000),
                "multiple_runs": runs,
                "runs_executed": len(statuses),
                "run_statuses": statuses,
                "repeat_statuses": [],
                "tags": list(scenario.tags),
                "certificate": cassette_certificate(trace),
                "repeat_stats": None,
            },
        )

    async def _run_once(
        self,
        scenario: Scenario,
        context: InteractionContext,
        return_exception: bool,
        stop_on_failure: bool,
    ) -> tuple[list[TestCaseResult], ScenarioStatus]:
        """One run's step results and its status (each step's status is read once)."""
        results: list[TestCaseResult] = []
        statuses: list[TestCaseStatus] = []
        stopped = False
        for index, step in enumerate(scenario.steps):
            if stopped:
                last = results[-1].last_interaction_index if results else None
                skipped = _skipped_step(index, step, last)
                results.append(skipped)
                statuses.append(skipped.status)
                continue
            result = await run_step(step, context, return_exception)
            results.append(result)
            status = result.status
            statuses.append(status)
            if stop_on_failure and status is not TestCaseStatus.PASS:
                stopped = True
        return results, rollup(statuses, ScenarioStatus)


_default_runner = ScenarioRunner()


def get_runner() -> ScenarioRunner:
    """The process-wide default :class:`ScenarioRunner`."""
    return _default_runner


_default_test_case_runner = TestCaseRunner()


def get_test_case_runner() -> TestCaseRunner:
    """The process-wide default :class:`TestCaseRunner` (giskard-checks'
    ``testing.runner.get_runner``)."""
    return _default_test_case_runner
