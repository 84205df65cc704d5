"""The plain-Python floor for ``scenario_overhead.py`` (``--impl scenario_floor``).

The same logical work as a scenario library, and nothing else: a scenario keeps its
interactions and checks; a run records each interaction (inputs, outputs) in a trace, runs
each check against that trace into a result (name, passed, message) and folds the results
into the scenario's status; a suite runs its scenarios one after another or under a
semaphore, calling its async target for interactions without outputs. No validation, no
timing, no spans, no error handling: the time it takes is what any implementation of the
workloads must at least spend in CPython, so ``compare.py`` reports scenarist as a
multiple of it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from enum import Enum
from typing import Any

__version__ = "floor"


class Status(Enum):
    PASS = "pass"
    FAIL = "fail"


class Interaction:
    __slots__ = ("inputs", "outputs")

    def __init__(self, inputs: Any, outputs: Any) -> None:
        self.inputs = inputs
        self.outputs = outputs


class Trace:
    __slots__ = ("interactions",)

    def __init__(self) -> None:
        self.interactions: list[Interaction] = []

    @property
    def last(self) -> Interaction:
        return self.interactions[-1]


class CheckResult:
    __slots__ = ("message", "name", "passed")

    def __init__(self, name: str, passed: bool, message: str | None) -> None:
        self.name = name
        self.passed = passed
        self.message = message


class Equals:
    def __init__(self, *, name: str, expected_value: Any) -> None:
        self.name = name
        self.expected_value = expected_value

    def run(self, trace: Trace) -> CheckResult:
        actual = trace.last.outputs
        ok = actual == self.expected_value
        return CheckResult(self.name, ok, None if ok else f"{actual!r} != {self.expected_value!r}")


class StringMatching:
    def __init__(self, *, name: str, keyword: str) -> None:
        self.name = name
        self.keyword = keyword

    def run(self, trace: Trace) -> CheckResult:
        ok = self.keyword in str(trace.last.outputs)
        return CheckResult(self.name, ok, None if ok else f"{self.keyword!r} not found")


class FnCheck:
    def __init__(self, *, name: str, fn: Callable[[Trace], bool]) -> None:
        self.name = name
        self.fn = fn

    def run(self, trace: Trace) -> CheckResult:
        ok = bool(self.fn(trace))
        return CheckResult(self.name, ok, None if ok else "returned False")


class ScenarioResult:
    __slots__ = ("name", "results", "status", "trace")

    def __init__(self, name: str, trace: Trace, results: list[CheckResult]) -> None:
        self.name = name
        self.trace = trace
        self.results = results
        self.status = Status.PASS if all(r.passed for r in results) else Status.FAIL


_NO_OUTPUT = object()
Target = Callable[[Any], Awaitable[Any]]


class Scenario:
    def __init__(self, name: str) -> None:
        self.name = name
        self.interactions: list[tuple[Any, Any]] = []
        self.checks: list[Any] = []

    def interact(self, inputs: Any, outputs: Any = _NO_OUTPUT) -> Scenario:
        self.interactions.append((inputs, outputs))
        return self

    def check(self, check: Any) -> Scenario:
        self.checks.append(check)
        return self

    async def run(self, target: Target | None = None) -> ScenarioResult:
        trace = Trace()
        for inputs, outputs in self.interactions:
            if outputs is _NO_OUTPUT:
                if target is None:
                    raise ValueError(f"scenario {self.name!r}: an interaction needs a target")
                outputs = await target(inputs)
            trace.interactions.append(Interaction(inputs, outputs))
        return ScenarioResult(self.name, trace, [c.run(trace) for c in self.checks])


class SuiteResult:
    __slots__ = ("results",)

    def __init__(self, results: list[ScenarioResult]) -> None:
        self.results = results


class Suite:
    def __init__(self, *, name: str, target: Target | None = None) -> None:
        self.name = name
        self.target = target
        self.scenarios: list[Scenario] = []

    def append(self, scenario: Scenario) -> None:
        self.scenarios.append(scenario)

    async def run(
        self, *, parallel: bool = False, max_concurrency: int | None = None, verbose: bool = True
    ) -> SuiteResult:
        if not parallel:
            return SuiteResult([await s.run(self.target) for s in self.scenarios])
        if max_concurrency is None:
            runs = [s.run(self.target) for s in self.scenarios]
            return SuiteResult(list(await asyncio.gather(*runs)))
        limit = asyncio.Semaphore(max_concurrency)

        async def bounded(scenario: Scenario) -> ScenarioResult:
            async with limit:
                return await scenario.run(self.target)

        return SuiteResult(list(await asyncio.gather(*(bounded(s) for s in self.scenarios))))
