"""``Suite``: many scenarios run together, serially or concurrently, results in order.

The suite decides what runs (a :class:`~scenarist.engine.executor.RunPlan`: target, concurrency,
timeouts, repeats, rate limits); an executor decides where (``LocalExecutor``, the
default: this process; ``RayExecutor``: batches on a Ray cluster). Locally, parallel runs
use a fixed pool of ``max_concurrency`` workers pulling scenarios in order (all at once
when it is ``None``), so overhead stays flat however large the suite is. Sync targets run
in worker threads in parallel mode, so one blocking SDK call does not stall every other
scenario; the thread pool is bounded by ``max_concurrency`` too.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncGenerator, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from scenarist._sync import run_sync
from scenarist.engine._gc import FREEZE_EVERY, frozen_while_running
from scenarist.engine._progress import Progress
from scenarist.engine.adaptive import AUTO, AdaptiveConcurrency
from scenarist.engine.executor import Executor, LocalExecutor, RunPlan, ScenarioSink
from scenarist.engine.scenario import Scenario, budgets_seen, tags_error
from scenarist.errors import ScenarioSourceError, UserError
from scenarist.model._construct import construct
from scenarist.model._missing import MISSING
from scenarist.model.certificate import run_certificate
from scenarist.model.results import ScenarioResult, SuiteResult

if TYPE_CHECKING:
    from scenarist.engine.budget import Budget
    from scenarist.engine.rate_limits import RateLimiter

__all__ = ["Suite", "validate_concurrency", "validate_max_concurrency"]


def validate_repeat(value: Any) -> int:
    """An int ≥ 1; ``TypeError``/``ValueError`` naming ``repeat`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"repeat must be an int >= 1, got {value!r}")
    if value < 1:
        raise ValueError(f"repeat must be at least 1, got {value!r}")
    return value


def _repeat_plan(value: Any) -> tuple[int, bool]:
    """``repeat``: ``k`` (an int ≥ 1) → ``(k, False)``; ``"auto"`` / ``"auto:N"`` →
    ``(cap, True)`` (see :func:`scenarist.engine._repeats.parse_auto`)."""
    if isinstance(value, str):
        from scenarist.engine._repeats import parse_auto

        return parse_auto(value, source="repeat"), True
    return validate_repeat(value), False


def _validate_rate(value: Any, source: str) -> float | None:
    """``None`` or a number from 0 to 1 (a required pass rate)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(f"{source} must be a pass rate from 0 to 1 (0.9 for 90%), got {value!r}")
    return float(value)


def validate_max_concurrency(value: Any) -> int | None:
    """``None`` or an int ≥ 1; ``TypeError``/``ValueError`` otherwise (checked even when serial)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"max_concurrency must be None or a positive integer, got {value!r}")
    if value < 1:
        raise ValueError(f"max_concurrency must be greater than 0, got {value!r}")
    return value


def validate_concurrency(value: Any) -> int | AdaptiveConcurrency | None:
    """``max_concurrency``: ``None``, an int ≥ 1, ``"auto"`` or an ``AdaptiveConcurrency``."""
    if value == AUTO and isinstance(value, str):
        return AdaptiveConcurrency()
    if isinstance(value, AdaptiveConcurrency):
        return value
    if isinstance(value, str):
        raise TypeError(
            f"max_concurrency must be None or a positive integer (or 'auto'), got {value!r}"
        )
    return validate_max_concurrency(value)


def _nothing() -> None:
    return None


_RATE_LIMITS_ENV = "SCENARIST_RATE_LIMITS"  # scenarist.engine.rate_limits.RATE_LIMITS_ENV


def _limiter(rate_limits: Any) -> RateLimiter | None:
    """The run's limiter: ``rate_limits`` itself (a limiter of your own: its clock, its
    budget), the budgets it spells, else those of ``$SCENARIST_RATE_LIMITS``."""
    from scenarist.engine.rate_limits import RateLimiter, parse_rate_limits, rate_limits_from_env

    if isinstance(rate_limits, RateLimiter):
        return rate_limits
    limits = rate_limits_from_env() if rate_limits is None else parse_rate_limits(rate_limits)
    return RateLimiter(limits) if limits else None


def _limiter_stats(plan: RunPlan) -> Any:
    """What the run's limiter did (for the report), when it had one."""
    if plan.limiter is None:
        return None
    from scenarist.engine.rate_limits import RateLimiter

    return plan.limiter.snapshot() if isinstance(plan.limiter, RateLimiter) else None


def _budget(value: Any, suite: Suite, repeat: int) -> Budget | None:
    """The run's ledger for ``budget=`` (a number of USD, text such as ``"5usd"``, or a
    :class:`~scenarist.engine.budget.Budget`), with its estimate made before the run
    (unless the caller made it, as the CLI does from history and cassettes)."""
    from scenarist.engine.budget import parse_budget

    ledger = parse_budget(value, source="budget")
    if ledger is not None and not ledger.report.estimated_from and not suite.streamed:
        ledger.estimate_run(suite.scenarios, repeat)
    return ledger


def _is_stream(value: Any) -> bool:
    """An iterable of scenarios to pull lazily (a generator, an iterator, ``map``...),
    as opposed to the list (or tuple) that ``scenarios`` validates."""
    return isinstance(value, Iterable) and not isinstance(value, list | tuple | str | bytes | dict)


class Suite(BaseModel):
    """A named collection of scenarios, optionally with a shared target."""

    model_config = ConfigDict(defer_build=True, extra="forbid", arbitrary_types_allowed=True)

    name: str
    scenarios: list[Scenario] = Field(default_factory=list)
    target: Any = Field(default=MISSING, exclude=True, repr=False)
    min_pass_rate: float | None = Field(default=None, ge=0, le=1, exclude_if=lambda v: v is None)
    """The pass rate repeated runs must show, for the scenarios that declare none."""

    _stream: Iterable[Scenario] | None = PrivateAttr(None)

    @field_validator("min_pass_rate", mode="before")
    @classmethod
    def _check_rate(cls, value: Any) -> Any:
        return _validate_rate(value, "min_pass_rate")

    _stream_used: bool = PrivateAttr(False)

    def __init__(self, /, **data: Any) -> None:
        """``scenarios`` is a list, or any other iterable (a generator): then the suite is
        *streamed*: each scenario is built when a worker is free to run it, so a run holds
        about ``max_concurrency`` definitions at once however long the stream is (see
        ``docs/streaming.md``). A stream can be run once; ``suite.scenarios`` holds only
        the scenarios given as a list or appended, which run first."""
        stream = data.get("scenarios")
        if _is_stream(stream):
            data = {**data, "scenarios": []}
        super().__init__(**data)
        if _is_stream(stream):
            self._stream = stream

    @property
    def streamed(self) -> bool:
        """Whether this suite pulls (some of) its scenarios from an iterable."""
        return self._stream is not None or self._stream_used

    def _source(self) -> Iterable[Scenario]:
        """What a run iterates: the list, then the stream (consumed by this run)."""
        if self._stream is None:
            if self._stream_used:
                raise UserError(
                    f"suite {self.name!r} streams its scenarios from an iterable that an "
                    "earlier run consumed; build the suite again (Suite(name=..., "
                    "scenarios=make_scenarios())) to run it again"
                )
            return self.scenarios
        stream, self._stream, self._stream_used = self._stream, None, True
        return self._pull(stream)

    def _pull(self, stream: Iterable[Scenario]) -> Iterator[Scenario]:
        yield from self.scenarios
        given = len(self.scenarios)
        source = iter(stream)
        while True:
            try:
                scenario = next(source)
            except StopIteration:
                return
            except ScenarioSourceError:  # a stream of a stream (``select``) failed
                raise
            except Exception as exc:
                raise ScenarioSourceError(
                    f"suite {self.name!r}: its scenario source raised "
                    f"{type(exc).__name__} after {given} scenarios: {exc}",
                    index=given,
                ) from exc
            if not isinstance(scenario, Scenario):
                raise ScenarioSourceError(
                    f"suite {self.name!r}: its scenario source yielded "
                    f"{type(scenario).__name__} at index {given}; it must yield Scenario "
                    "objects",
                    index=given,
                )
            yield scenario
            scenario = None  # type: ignore[assignment]  # not alive while the next is built
            given += 1

    def append(self, scenario: Scenario) -> Self:
        if not isinstance(scenario, Scenario):
            raise TypeError(f"Suite.append expects a Scenario, got {type(scenario).__name__}")
        self.scenarios.append(scenario)
        return self

    def extend(self, *scenarios: Scenario) -> Self:
        for scenario in scenarios:
            self.append(scenario)
        return self

    def select(
        self, *, tags: Iterable[str] | None = None, names: Iterable[str] | None = None
    ) -> Suite:
        """A suite of the scenarios carrying any of ``tags`` and/or named in ``names``."""
        wanted_tags = set(tags or ())
        wanted_names = set(names or ())

        def wanted(s: Scenario) -> bool:
            return (not wanted_tags or bool(wanted_tags & set(s.tags))) and (
                not wanted_names or s.name in wanted_names
            )

        if self.streamed:  # filtered as it streams (this suite's stream moves there)
            return Suite(
                name=self.name, scenarios=filter(wanted, self._source()), target=self.target
            )
        return Suite(
            name=self.name, scenarios=[s for s in self.scenarios if wanted(s)], target=self.target
        )

    def _plan(
        self,
        target: Any,
        return_exception: bool,
        parallel: bool,
        max_concurrency: Any,
        timeout_s: float | None,
        repeat: Any,
        rate_limits: Any,
        budget: Any = None,
        min_pass_rate: Any = None,
    ) -> RunPlan:
        """The plan of one run, every argument validated (``max_concurrency`` as
        :func:`validate_concurrency` says)."""
        concurrency = validate_concurrency(max_concurrency)
        count, auto = _repeat_plan(repeat)
        rate = _validate_rate(min_pass_rate, "min_pass_rate")
        if rate is None:
            rate = self.min_pass_rate
        limiter: RateLimiter | None = None
        if rate_limits is not None or os.environ.get(_RATE_LIMITS_ENV):
            limiter = _limiter(rate_limits)  # (no budgets: the module is not even imported)
        ledger: Budget | None = None
        if budget is not None:
            ledger = _budget(budget, self, count)
        elif (
            budgets_seen()
            and not self.streamed
            and any(s.budget is not None for s in self.scenarios)
        ):
            from scenarist.engine.budget import Budget

            ledger = _budget(Budget(), self, count)  # no run limit: the scenarios' own
        if auto and not self.streamed:  # every scenario needs a required rate, before a run
            from scenarist.engine._repeats import check_rates

            check_rates(self.scenarios, rate)
        return RunPlan(
            target=target if target is not MISSING and target is not None else self.target,
            return_exception=return_exception,
            parallel=parallel,
            concurrency=concurrency,
            timeout_s=timeout_s,
            repeat=count,
            limiter=limiter,
            budget=ledger,
            repeat_auto=auto,
            min_pass_rate=rate,
        )

    async def _execute(
        self,
        sink: ScenarioSink,
        plan: RunPlan,
        executor: Executor | None,
    ) -> None:
        """Run every scenario through ``executor``, handing each ``(index, result)`` to
        ``sink`` as it finishes.

        With ``repeat=k`` each scenario runs ``k`` independent times; the result handed
        over is the first run that did not pass (else the last), carrying every run's
        status in ``repeat_statuses``.
        """
        chosen = executor if executor is not None else LocalExecutor()
        if not isinstance(chosen, Executor):
            raise TypeError(
                f"executor must be an Executor (LocalExecutor(), RayExecutor(...)), "
                f"got {type(chosen).__name__}"
            )
        if plan.budget is not None and not isinstance(chosen, LocalExecutor):
            raise UserError(
                f"budget= works with the LocalExecutor only (got {chosen!r}): its ledger "
                "must see every scenario start; run without the budget, or locally"
            )
        source = self._source()
        if not isinstance(chosen, LocalExecutor) and not isinstance(source, list):
            source = list(source)  # other executors cut a list into batches
        await chosen.run_scenarios(source, plan, sink)  # type: ignore[arg-type]

    async def iter_results(
        self,
        target: Any = MISSING,
        return_exception: bool = False,
        parallel: bool = False,
        max_concurrency: int | str | AdaptiveConcurrency | None = None,
        *,
        timeout_s: float | None = None,
        repeat: int | str = 1,
        executor: Executor | None = None,
        rate_limits: Any = None,
        budget: Budget | float | str | None = None,
        min_pass_rate: float | None = None,
    ) -> AsyncGenerator[tuple[int, ScenarioResult], None]:
        """Yield ``(index, result)`` as scenarios finish (in completion order when parallel).

        Results are handed over through a small buffer, so a consumer that writes them
        away (a run log, a database) keeps memory bounded however large the suite is.
        A consumer that may stop early (an exception in its loop) should close it in its
        own task: ``async with contextlib.aclosing(suite.iter_results(...)) as results``;
        left to the garbage collector, its task group is closed from another task.
        ``budget``: as for :meth:`run`; pass a :class:`~scenarist.engine.budget.Budget` to
        read what it did (``budget.report``) after the run.
        """
        import anyio  # on first use: Suite.run does not need it
        import anyio.lowlevel

        plan = self._plan(
            target,
            return_exception,
            parallel,
            max_concurrency,
            timeout_s,
            repeat,
            rate_limits,
            budget,
            min_pass_rate,
        )
        send, receive = anyio.create_memory_object_stream[tuple[int, ScenarioResult]](
            plan.cap or 100
        )

        failed: list[ScenarioSourceError] = []

        async def sink(index: int, result: ScenarioResult) -> None:
            await send.send((index, result))
            if not plan.parallel:
                # the consumer takes it before the next scenario starts: run serially, a
                # sync target blocks the loop, and a result not yet taken (a run log line)
                # waited for that scenario, or was lost to a Ctrl-C during it (parallel
                # runs call sync targets in threads: the loop stays free)
                await anyio.lowlevel.checkpoint()

        async def produce() -> None:
            async with send:
                try:
                    await self._execute(sink, plan, executor)
                except ScenarioSourceError as exc:  # raised below, after the results so far
                    failed.append(exc)

        async with anyio.create_task_group() as group, receive:
            group.start_soon(produce)
            async for item in receive:
                yield item
        if failed:
            raise failed[0]

    async def each_result(
        self,
        sink: ScenarioSink,
        target: Any = MISSING,
        return_exception: bool = False,
        parallel: bool = False,
        max_concurrency: int | str | AdaptiveConcurrency | None = None,
        *,
        timeout_s: float | None = None,
        repeat: int | str = 1,
        executor: Executor | None = None,
        rate_limits: Any = None,
        budget: Budget | float | str | None = None,
        min_pass_rate: float | None = None,
    ) -> None:
        """As :meth:`iter_results`, but each ``(index, result)`` is handed to ``await
        sink(index, result)`` as it finishes, in the task that ran it: no buffer and no
        consumer task in between, so a sink that writes each result away at once (the
        CLI's run log) costs no task switch a scenario. A scenario source that fails
        raises after the scenarios already running have been handed over.
        """
        plan = self._plan(
            target,
            return_exception,
            parallel,
            max_concurrency,
            timeout_s,
            repeat,
            rate_limits,
            budget,
            min_pass_rate,
        )
        await self._execute(sink, plan, executor)

    async def run(
        self,
        target: Any = MISSING,
        return_exception: bool = False,
        parallel: bool = False,
        max_concurrency: int | str | AdaptiveConcurrency | None = None,
        verbose: bool = True,
        *,
        timeout_s: float | None = None,
        repeat: int | str = 1,
        executor: Executor | None = None,
        rate_limits: Any = None,
        budget: Budget | float | str | None = None,
        min_pass_rate: float | None = None,
    ) -> SuiteResult:
        """Run every scenario; results come back in scenario order.

        ``target`` overrides the suite's target, which overrides each scenario's own.
        With ``return_exception=False`` the first exception stops the run and is raised.
        ``repeat=k`` runs every scenario ``k`` independent times (see
        :attr:`SuiteResult.flaky`, :attr:`SuiteResult.pass_at_k`); it is separate from a
        scenario's ``multiple_runs``. Each repeated scenario's ``repeat_stats`` holds its
        pass rate with a Wilson 95% interval; against a required rate (the scenario's
        ``min_pass_rate``, else the suite's, else ``min_pass_rate`` here) it carries a
        PASS / FAIL / INCONCLUSIVE verdict. ``repeat="auto"`` (cap 100) or ``"auto:N"``
        repeats each scenario only until a sequential test decides it (see
        ``docs/statistics.md``).

        ``max_concurrency="auto"`` (or an :class:`~scenarist.engine.adaptive.AdaptiveConcurrency`
        with its own cap) adapts the level to the agent's LLM calls (AIMD).
        ``rate_limits`` (``{"openai/gpt-4o-mini": "500rpm, 200000tpm"}``, default
        ``$SCENARIST_RATE_LIMITS``) paces the agent's own LLM calls across every scenario
        (see :mod:`scenarist.engine.rate_limits`). ``executor`` says where scenarios run:
        :class:`~scenarist.engine.executor.LocalExecutor` (default) or ``RayExecutor(...)``.

        ``budget`` (USD as a number, ``"5usd"``, ``"2Mtokens"``, or a
        :class:`~scenarist.engine.budget.Budget`) fails closed: a scenario whose estimate
        would take the run over it is not started and is reported BUDGET (an ERROR with a
        message naming the budget for giskard-checks code), and so is every later one;
        :attr:`SuiteResult.budget` says what was estimated, spent and stopped.
        """
        plan = self._plan(
            target,
            return_exception,
            parallel,
            max_concurrency,
            timeout_s,
            repeat,
            rate_limits,
            budget,
            min_pass_rate,
        )
        if not self.streamed:
            # giskard-checks refuses such tags when it builds the result, after the run
            bad_tags = tags_error(self.scenarios)
            if bad_tags is not None:
                raise bad_tags
        started_at = datetime.now(UTC)
        t0 = time.perf_counter()
        streamed = self.streamed
        results: list[ScenarioResult | None] = [] if streamed else [None] * len(self.scenarios)
        adaptive: AdaptiveConcurrency | None = None
        cap = plan.concurrency
        if isinstance(cap, AdaptiveConcurrency):
            adaptive, cap = cap, cap.cap
        workers = (cap or len(self.scenarios)) if parallel else 1
        progress = (  # a stream has no known length: no progress bar
            Progress(self.scenarios, parallel=workers, concurrency=adaptive)
            if verbose and not streamed
            else None
        )

        from scenarist.engine.runner import active_cassette

        tape = active_cassette()  # a run inside a cassette is certified
        tally = tape.certificate() if tape is not None else None
        kept = 0
        freeze = _nothing

        async def store(index: int, result: ScenarioResult) -> None:
            nonlocal kept
            if index >= len(results):  # a streamed suite grows as it runs
                results.extend([None] * (index + 1 - len(results)))
            results[index] = result
            kept += 1
            if kept % FREEZE_EVERY == 0:
                freeze()  # the results so far: kept to the end, not traversed again
            if progress is not None:
                progress.advance(index, result)

        def outcome(incomplete: bool) -> SuiteResult:
            finished = [r for r in results if r is not None]
            certificate = None
            if tape is not None and tally is not None:
                seen = tape.certificate().since(tally)  # its calls outside the scenarios too
                certificate = run_certificate(finished, [seen], tape.guarantee)
            return construct(
                SuiteResult,
                {
                    "results": finished,
                    "duration_ms": round((time.perf_counter() - t0) * 1000),
                    "suite_name": self.name,
                    "started_at": started_at,
                    "recommendation": None,
                    "suite": self,
                    "incomplete": incomplete,
                    "rate_limits": _limiter_stats(plan),
                    "budget": None if plan.budget is None else plan.budget.report,
                    "certificate": certificate,
                },
            )

        try:
            with frozen_while_running() as freeze:
                await self._execute(store, plan, executor)
        except ScenarioSourceError as exc:
            exc.result = outcome(incomplete=True)  # the scenarios that ran, in order
            raise
        finally:
            if progress is not None:
                progress.close()
        return outcome(incomplete=False)

    def run_sync(
        self,
        target: Any = MISSING,
        return_exception: bool = False,
        parallel: bool = False,
        max_concurrency: int | str | AdaptiveConcurrency | None = None,
        verbose: bool = True,
        *,
        timeout_s: float | None = None,
        repeat: int | str = 1,
        executor: Executor | None = None,
        rate_limits: Any = None,
        budget: Budget | float | str | None = None,
        min_pass_rate: float | None = None,
    ) -> SuiteResult:
        """:meth:`run` from sync code (safe inside a running event loop)."""
        return run_sync(
            self.run,
            target,
            return_exception,
            parallel,
            max_concurrency,
            verbose,
            timeout_s=timeout_s,
            repeat=repeat,
            executor=executor,
            rate_limits=rate_limits,
            budget=budget,
            min_pass_rate=min_pass_rate,
        )

    @classmethod
    def from_file(cls, path: str | Path) -> Suite:
        """Load a suite from a JSON or YAML file."""
        from scenarist.formats.files import load_model

        return load_model(cls, path)
