"""``Suite``: many scenarios run together, serially or concurrently, results in order.

Parallel runs use a fixed pool of ``max_concurrency`` workers pulling scenarios in order
(all at once when it is ``None``), so overhead stays flat however large the suite is.
Sync targets run in worker threads in parallel mode, so one blocking SDK call does not
stall every other scenario; the thread pool is bounded by ``max_concurrency`` too.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

import anyio
from pydantic import BaseModel, ConfigDict, Field

from scenarist._construct import construct
from scenarist._lanes import lane
from scenarist._missing import MISSING
from scenarist._progress import Progress
from scenarist._sync import run_sync
from scenarist.interactions import ThreadBudget
from scenarist.results import ScenarioResult, SuiteResult
from scenarist.runner import get_runner
from scenarist.scenario import Scenario

__all__ = ["Suite", "validate_max_concurrency"]


def validate_repeat(value: Any) -> int:
    """An int ≥ 1; ``TypeError``/``ValueError`` naming ``repeat`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"repeat must be an int >= 1, got {value!r}")
    if value < 1:
        raise ValueError(f"repeat must be at least 1, got {value!r}")
    return value


def validate_max_concurrency(value: Any) -> int | None:
    """``None`` or an int ≥ 1; ``TypeError``/``ValueError`` otherwise (checked even when serial)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"max_concurrency must be None or a positive integer, got {value!r}")
    if value < 1:
        raise ValueError(f"max_concurrency must be greater than 0, got {value!r}")
    return value


class Suite(BaseModel):
    """A named collection of scenarios, optionally with a shared target."""

    model_config = ConfigDict(defer_build=True, extra="forbid", arbitrary_types_allowed=True)

    name: str
    scenarios: list[Scenario] = Field(default_factory=list)
    target: Any = Field(default=MISSING, exclude=True, repr=False)

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
        chosen = [
            s
            for s in self.scenarios
            if (not wanted_tags or wanted_tags & set(s.tags))
            and (not wanted_names or s.name in wanted_names)
        ]
        return Suite(name=self.name, scenarios=chosen, target=self.target)

    async def _execute(
        self,
        sink: Callable[[int, ScenarioResult], Awaitable[None]],
        target: Any,
        return_exception: bool,
        parallel: bool,
        max_concurrency: int | None,
        timeout_s: float | None,
        repeat: int = 1,
    ) -> None:
        """Run every scenario, handing each ``(index, result)`` to ``sink`` as it finishes.

        With ``repeat=k`` each scenario runs ``k`` independent times; the result handed
        over is the first run that did not pass (else the last), carrying every run's
        status in ``repeat_statuses``.
        """
        target = target if target is not MISSING and target is not None else self.target
        runner = get_runner()

        async def run_one(scenario: Scenario, threads: ThreadBudget | None) -> ScenarioResult:
            with lane(f"scenario:{scenario.name}"):  # its cassette responses, in any order
                runs = [
                    await runner.run(
                        scenario, target, return_exception, timeout_s=timeout_s, threads=threads
                    )
                    for _ in range(repeat)
                ]
            if repeat == 1:
                return runs[0]
            chosen = next((r for r in runs if not r.passed), runs[-1])
            chosen.__dict__["repeat_statuses"] = [r.status for r in runs]
            return chosen

        if not parallel:
            for index, scenario in enumerate(self.scenarios):
                await sink(index, await run_one(scenario, None))
            return

        import asyncio  # here, not at import: `import scenarist` stays light

        workers = min(max_concurrency or len(self.scenarios), len(self.scenarios))
        threads = ThreadBudget(max_concurrency or 40)
        pending = iter(enumerate(self.scenarios))
        first_error: list[Exception] = []
        tasks: list[asyncio.Task[None]] = []

        async def worker() -> None:
            for index, scenario in pending:
                try:
                    result = await run_one(scenario, threads)
                except Exception as exc:  # the first one stops the run and is raised
                    if not first_error:
                        first_error.append(exc)
                        for task in tasks:
                            task.cancel()
                    return
                await sink(index, result)

        # asyncio's own task group: structured, cancels siblings, and costs no import.
        async with asyncio.TaskGroup() as group:
            tasks.extend(group.create_task(worker()) for _ in range(workers))
        if first_error:
            raise first_error[0]

    async def iter_results(
        self,
        target: Any = MISSING,
        return_exception: bool = False,
        parallel: bool = False,
        max_concurrency: int | None = None,
        *,
        timeout_s: float | None = None,
        repeat: int = 1,
    ) -> AsyncGenerator[tuple[int, ScenarioResult], None]:
        """Yield ``(index, result)`` as scenarios finish (in completion order when parallel).

        Results are handed over through a small buffer, so a consumer that writes them
        away (a run log, a database) keeps memory bounded however large the suite is.
        A consumer that may stop early (an exception in its loop) should close it in its
        own task: ``async with contextlib.aclosing(suite.iter_results(...)) as results``;
        left to the garbage collector, its task group is closed from another task.
        """
        max_concurrency = validate_max_concurrency(max_concurrency)
        repeat = validate_repeat(repeat)
        send, receive = anyio.create_memory_object_stream[tuple[int, ScenarioResult]](
            max_concurrency or 100
        )

        async def produce() -> None:
            async with send:
                await self._execute(
                    lambda i, r: send.send((i, r)),
                    target,
                    return_exception,
                    parallel,
                    max_concurrency,
                    timeout_s,
                    repeat,
                )

        async with anyio.create_task_group() as group, receive:
            group.start_soon(produce)
            async for item in receive:
                yield item

    async def run(
        self,
        target: Any = MISSING,
        return_exception: bool = False,
        parallel: bool = False,
        max_concurrency: int | None = None,
        verbose: bool = True,
        *,
        timeout_s: float | None = None,
        repeat: int = 1,
    ) -> SuiteResult:
        """Run every scenario; results come back in scenario order.

        ``target`` overrides the suite's target, which overrides each scenario's own.
        With ``return_exception=False`` the first exception stops the run and is raised.
        ``repeat=k`` runs every scenario ``k`` independent times (see
        :attr:`SuiteResult.flaky`, :attr:`SuiteResult.pass_at_k`); it is separate from a
        scenario's ``multiple_runs``.
        """
        max_concurrency = validate_max_concurrency(max_concurrency)
        repeat = validate_repeat(repeat)
        started_at = datetime.now(UTC)
        t0 = time.perf_counter()
        results: list[ScenarioResult | None] = [None] * len(self.scenarios)
        workers = (max_concurrency or len(self.scenarios)) if parallel else 1
        progress = Progress(self.scenarios, parallel=workers) if verbose else None

        async def store(index: int, result: ScenarioResult) -> None:
            results[index] = result
            if progress is not None:
                progress.advance(index, result)

        try:
            await self._execute(
                store, target, return_exception, parallel, max_concurrency, timeout_s, repeat
            )
        finally:
            if progress is not None:
                progress.close()
        return construct(
            SuiteResult,
            {
                "results": [r for r in results if r is not None],
                "duration_ms": round((time.perf_counter() - t0) * 1000),
                "suite_name": self.name,
                "started_at": started_at,
                "recommendation": None,
                "suite": self,
                "incomplete": False,
            },
        )

    def run_sync(
        self,
        target: Any = MISSING,
        return_exception: bool = False,
        parallel: bool = False,
        max_concurrency: int | None = None,
        verbose: bool = True,
        *,
        timeout_s: float | None = None,
        repeat: int = 1,
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
        )

    @classmethod
    def from_file(cls, path: str | Path) -> Suite:
        """Load a suite from a JSON or YAML file."""
        from scenarist._files import load_model

        return load_model(cls, path)
