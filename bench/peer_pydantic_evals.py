"""pydantic-evals as a peer for ``scenario_overhead.py`` (``--impl peer_pydantic_evals``).

The harness drives every implementation through the same small API (``Scenario``,
``Equals``, ``StringMatching``, ``FnCheck``, ``Suite``). This module maps it onto
pydantic-evals, used as its documentation shows, black box: a scenario is a ``Case``
whose inputs are its interactions and whose evaluators are its checks; the task replays
the interactions into a trace (static outputs as given, the others from the suite's
async target) and returns it; each check is an ``Evaluator`` reading that trace, since
pydantic-evals' built-in evaluators compare a task's whole output and a multi-turn
check needs the turns. ``Scenario.run`` evaluates a one-case ``Dataset``;
``Suite.run`` evaluates one ``Dataset`` of every case with ``max_concurrency`` (1 when
serial), progress bar off. A result passes when the task did not fail and every
assertion is true.

pydantic-evals has no multi-turn scenario of its own, so the per-scenario sequential
figure includes a ``Dataset.evaluate`` per scenario; the ``Suite(parallel=False)`` row
is its per-case cost inside one evaluation. Lives in ``bench/`` and runs in its own venv
(``compare.py`` makes ``bench/.venv-pydantic-evals``); nothing of scenarist is imported,
and the trace the task builds is the floor's (``scenario_floor.Trace``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any

import scenario_floor as floor  # next to this file: its trace and suite are reused
from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import Evaluator, EvaluatorContext
from scenario_floor import Interaction, Trace

__version__ = version("pydantic-evals")

Target = Callable[[Any], Awaitable[Any]]
_NO_OUTPUT = object()


@dataclass
class Equals(Evaluator[Any, Trace, Any]):
    name: str
    expected_value: Any

    def evaluate(self, ctx: EvaluatorContext[Any, Trace, Any]) -> bool:
        return bool(ctx.output.last.outputs == self.expected_value)


@dataclass
class StringMatching(Evaluator[Any, Trace, Any]):
    name: str
    keyword: str

    def evaluate(self, ctx: EvaluatorContext[Any, Trace, Any]) -> bool:
        return self.keyword in str(ctx.output.last.outputs)


@dataclass
class FnCheck(Evaluator[Any, Trace, Any]):
    name: str
    fn: Callable[[Trace], bool]

    def evaluate(self, ctx: EvaluatorContext[Any, Trace, Any]) -> bool:
        return bool(self.fn(ctx.output))


class Result:
    """One scenario's outcome, as the harness reads it (``status.value``)."""

    class _Status:
        __slots__ = ("value",)

        def __init__(self, value: str) -> None:
            self.value = value

    def __init__(self, name: str, passed: bool) -> None:
        self.name = name
        self.status = Result._Status("pass" if passed else "fail")


class SuiteResult:
    def __init__(self, results: list[Result]) -> None:
        self.results = results


def _task(target: Target | None) -> Callable[[tuple[tuple[Any, Any], ...]], Awaitable[Trace]]:
    async def run(interactions: tuple[tuple[Any, Any], ...]) -> Trace:
        trace = Trace()
        for inputs, outputs in interactions:
            if outputs is _NO_OUTPUT:
                if target is None:
                    raise ValueError("an interaction without outputs needs a target")
                outputs = await target(inputs)
            trace.interactions.append(Interaction(inputs, outputs))
        return trace

    return run


async def _evaluate(
    cases: list[Case[Any, Any, Any]], target: Target | None, max_concurrency: int | None
) -> list[Result]:
    report = await Dataset(name="bench", cases=cases).evaluate(
        _task(target), max_concurrency=max_concurrency, progress=False
    )
    results = [
        Result(case.name, all(a.value is True for a in case.assertions.values()))
        for case in report.cases
    ]
    results += [Result(failure.name, False) for failure in report.failures]
    return results


class Scenario:
    def __init__(self, name: str) -> None:
        self.name = name
        self._interactions: list[tuple[Any, Any]] = []
        self._checks: list[Evaluator[Any, Any, Any]] = []

    def interact(self, inputs: Any, outputs: Any = _NO_OUTPUT) -> Scenario:
        self._interactions.append((inputs, outputs))
        return self

    def check(self, check: Evaluator[Any, Any, Any]) -> Scenario:
        self._checks.append(check)
        return self

    def case(self) -> Case[Any, Any, Any]:
        return Case(name=self.name, inputs=tuple(self._interactions), evaluators=self._checks)

    async def run(self, target: Target | None = None) -> Result:
        (result,) = await _evaluate([self.case()], target, 1)
        return result


class Suite(floor.Suite):
    """The floor's suite (name, target, scenarios), run as one pydantic-evals ``Dataset``."""

    async def run(  # type: ignore[override]
        self, *, parallel: bool = False, max_concurrency: int | None = None, verbose: bool = True
    ) -> SuiteResult:
        cases = [s.case() for s in self.scenarios]  # type: ignore[attr-defined]
        return SuiteResult(await _evaluate(cases, self.target, max_concurrency if parallel else 1))
