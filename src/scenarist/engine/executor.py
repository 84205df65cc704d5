"""Where a suite's scenarios run: the ``Executor`` protocol and ``LocalExecutor``.

``Suite.run`` / ``Suite.iter_results`` decide *what* runs (which scenarios, which target,
how many at once, timeouts, repeats) and hand it to an executor as a :class:`RunPlan`;
the executor decides *where*. :class:`LocalExecutor` (the default) runs them in this
process on asyncio: serially, or with a fixed pool of workers pulling scenarios in order,
so overhead stays flat however large the suite is. ``RayExecutor``
(:mod:`scenarist.distributed.ray`, extra ``ray``) cuts the suite into batches and runs each
batch with a ``LocalExecutor`` on a Ray worker.

Whatever the executor, results reach the ``sink`` as ``(index, result)`` pairs, each
exactly once; the caller puts them back in scenario order.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence, Sized
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from scenarist.engine._lanes import lane
from scenarist.engine.interactions import ThreadBudget
from scenarist.engine.runner import get_runner
from scenarist.errors import ScenarioSourceError

if TYPE_CHECKING:
    from scenarist.engine.adaptive import AdaptiveConcurrency
    from scenarist.engine.budget import Budget
    from scenarist.engine.rate_limits import RateLimiter
    from scenarist.engine.scenario import Scenario
    from scenarist.model.results import ScenarioResult
    from scenarist.tracing.http._throttle import Limiter

__all__ = ["Executor", "LocalExecutor", "RunPlan", "ScenarioSink"]

ScenarioSink = Callable[[int, "ScenarioResult"], Awaitable[None]]
"""Receives each finished scenario as ``(index in the suite, result)``."""


@dataclass(frozen=True)
class RunPlan:
    """How to run a suite's scenarios, whatever runs them (validated by ``Suite``).

    ``concurrency`` is ``None`` (all at once) or an int when ``parallel``; an
    :class:`~scenarist.engine.adaptive.AdaptiveConcurrency` for ``max_concurrency="auto"``.
    ``limiter`` paces the agent's LLM calls (on a Ray worker: a handle on the run's
    limiter actor). ``indices`` are the scenarios' positions in the whole suite (a Ray batch runs a
    slice of it and reports the suite's own indices). ``budget``: the run's spending
    ledger (:mod:`scenarist.engine.budget`), consulted before each scenario starts.
    """

    target: Any
    return_exception: bool = False
    parallel: bool = False
    concurrency: int | AdaptiveConcurrency | None = None
    timeout_s: float | None = None
    repeat: int = 1
    limiter: RateLimiter | Limiter | None = field(default=None, compare=False)
    indices: Sequence[int] | None = field(default=None, compare=False)
    budget: Budget | None = field(default=None, compare=False)
    repeat_auto: bool = False
    """``repeat="auto"``: ``repeat`` is the cap, each scenario stops once decided."""
    min_pass_rate: float | None = None
    """The required pass rate for scenarios that declare none (see ``engine/_repeats.py``)."""

    @property
    def cap(self) -> int | None:
        """The most scenarios that may run at once (``None``: no bound)."""
        from scenarist.engine.adaptive import AdaptiveConcurrency

        if isinstance(self.concurrency, AdaptiveConcurrency):
            return self.concurrency.cap
        return self.concurrency


@runtime_checkable
class Executor(Protocol):
    """Runs a suite's scenarios somewhere and hands every result to ``sink``.

    The first exception of a run with ``return_exception=False`` is raised (the others
    are cancelled); with ``True`` every scenario yields a result, errors included.
    """

    async def run_scenarios(
        self, scenarios: Sequence[Scenario], plan: RunPlan, sink: ScenarioSink
    ) -> None: ...


class LocalExecutor:
    """This process, asyncio concurrency: what ``Suite.run`` always did (the default)."""

    def __repr__(self) -> str:
        return "LocalExecutor()"

    async def run_scenarios(
        self, scenarios: Iterable[Scenario], plan: RunPlan, sink: ScenarioSink
    ) -> None:
        """Run ``scenarios`` (a list, or any iterable: pulled lazily, one per free
        worker) and hand each result to ``sink``."""
        from scenarist.engine.adaptive import AdaptiveConcurrency

        adaptive = plan.concurrency if isinstance(plan.concurrency, AdaptiveConcurrency) else None
        if plan.limiter is None and adaptive is None:
            await self._run(scenarios, plan, sink, None)
            return
        from scenarist.tracing.http._throttle import Throttle, throttling

        with throttling(Throttle(plan.limiter, adaptive)):
            await self._run(scenarios, plan, sink, adaptive)

    async def _run(
        self,
        scenarios: Iterable[Scenario],
        plan: RunPlan,
        sink: ScenarioSink,
        adaptive: AdaptiveConcurrency | None,
    ) -> None:
        runner = get_runner()
        indices = list(plan.indices) if plan.indices is not None else ()
        repeat, target = plan.repeat, plan.target

        repeated = repeat != 1 or plan.repeat_auto

        async def run_one(scenario: Scenario, threads: ThreadBudget | None) -> ScenarioResult:
            with lane(f"scenario:{scenario.name}"):  # its cassette responses, in any order
                if repeated:  # engine/_repeats.py: the statistics stay off this path
                    from scenarist.engine._repeats import run_repeats

                    return await run_repeats(
                        lambda: runner.run(
                            scenario,
                            target,
                            plan.return_exception,
                            timeout_s=plan.timeout_s,
                            threads=threads,
                        ),
                        scenario,
                        plan,
                    )
                return await runner.run(
                    scenario,
                    target,
                    plan.return_exception,
                    timeout_s=plan.timeout_s,
                    threads=threads,
                )

        budget = plan.budget

        async def run_budgeted(scenario: Scenario, threads: ThreadBudget | None) -> ScenarioResult:
            """``run_one`` through the run's budget (or a ledger of the scenario's own
            budget): started only if it fits, every run's spend counted."""
            nonlocal budget
            if budget is None:
                from scenarist.engine.budget import Budget

                budget = Budget()  # no run limit: the scenarios' own budgets only

            async def start() -> tuple[ScenarioResult, list[ScenarioResult]]:
                runs: list[ScenarioResult] = []  # every run's spend counts

                async def one() -> ScenarioResult:
                    result = await runner.run(
                        scenario,
                        target,
                        plan.return_exception,
                        timeout_s=plan.timeout_s,
                        threads=threads,
                    )
                    runs.append(result)
                    return result

                async def all_runs() -> ScenarioResult:
                    with lane(f"scenario:{scenario.name}"):
                        if repeated:
                            from scenarist.engine._repeats import run_repeats

                            return await run_repeats(one, scenario, plan)
                        return await one()

                if adaptive is None:
                    chosen = await all_runs()
                else:
                    async with adaptive.slot():
                        chosen = await all_runs()
                return chosen, runs

            return await budget.run(scenario, repeat * scenario.multiple_runs, start)

        # Scenarios are pulled one at a time, when a worker is free: a streamed suite
        # (any iterable) is built lazily, and no finished scenario is kept alive here.
        pending: Iterator[tuple[int, Scenario]] = (
            enumerate(scenarios) if plan.indices is None else zip(indices, scenarios, strict=True)
        )
        first_error: list[Exception] = []
        source_error: list[ScenarioSourceError] = []
        tasks: list[Any] = []
        threads: ThreadBudget | None = None
        if not plan.parallel:
            adaptive = None  # one at a time: nothing to adapt
        pooled = True  # each worker pulls the next scenario when it is done with one

        def pull() -> tuple[int, Scenario] | None:
            """The next scenario, or ``None`` when there is none (or the source failed:
            the scenarios already running finish, then its error is raised)."""
            if source_error:
                return None
            try:
                return next(pending, None)
            except ScenarioSourceError as exc:
                source_error.append(exc)
                return None

        def stop(exc: Exception) -> None:
            """The first scenario error stops the run (it is raised at the end)."""
            if not first_error:
                first_error.append(exc)
                for task in tasks:
                    task.cancel()

        async def worker(item: tuple[int, Scenario] | None) -> None:
            """The one worker loop: run ``item``, hand its result to the sink, then (in a
            pool) pull the next, until none is left or a scenario fails."""
            while item is not None:
                index, scenario = item
                del item
                try:
                    if budget is not None or scenario.budget is not None:
                        result = await run_budgeted(scenario, threads)
                    elif adaptive is None:
                        result = await run_one(scenario, threads)
                    else:
                        async with adaptive.slot():
                            result = await run_one(scenario, threads)
                except Exception as exc:
                    stop(exc)
                    return
                del scenario  # not alive while the next one is built
                await sink(index, result)
                item = pull() if pooled else None

        if not plan.parallel:
            await worker(pull())
        else:
            import asyncio  # here, not at import: `import scenarist` stays light

            cap = plan.cap
            size = len(scenarios) if isinstance(scenarios, Sized) else None
            workers = min(cap, size) if cap and size is not None else cap
            threads = ThreadBudget(cap or 40)
            # asyncio's own task group: structured, cancels siblings, and costs no import.
            async with asyncio.TaskGroup() as group:
                if workers is None and size is None:  # all at once, as they come
                    pooled = False
                    while not first_error and (item := pull()) is not None:
                        tasks.append(group.create_task(worker(item)))
                        del item
                else:
                    count = workers if workers is not None else size
                    tasks.extend(group.create_task(worker(pull())) for _ in range(count or 0))
        if first_error:
            raise first_error[0]
        if source_error:
            raise source_error[0]
