"""The Executor protocol: LocalExecutor is the default, any executor plugs in, bad ones fail."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from scenarist import Scenario, Suite
from scenarist.checks import StringMatching
from scenarist.engine.executor import Executor, LocalExecutor, RunPlan, ScenarioSink

pytestmark = pytest.mark.anyio


def suite_of(count: int) -> Suite:
    return Suite(
        name="s",
        scenarios=[
            Scenario(f"s{i}").interact(f"q{i}").check(StringMatching(keyword=f"q{i}"))
            for i in range(count)
        ],
    )


class Halves:
    """An executor of our own: two batches, the second first, each on a LocalExecutor."""

    def __init__(self) -> None:
        self.plans: list[RunPlan] = []

    async def run_scenarios(
        self, scenarios: Sequence[Scenario], plan: RunPlan, sink: ScenarioSink
    ) -> None:
        self.plans.append(plan)
        middle = len(scenarios) // 2
        for part in (range(middle, len(scenarios)), range(middle)):
            batch = RunPlan(
                plan.target, plan.return_exception, plan.parallel, plan.concurrency,
                plan.timeout_s, plan.repeat, indices=list(part),
            )  # fmt: skip
            await LocalExecutor().run_scenarios([scenarios[i] for i in part], batch, sink)


async def test_a_custom_executor_gets_the_plan_and_results_keep_scenario_order() -> None:
    executor = Halves()
    assert isinstance(executor, Executor)
    seen: list[int] = []
    async for index, _ in suite_of(6).iter_results(
        lambda x: f"echo {x}", parallel=True, max_concurrency=2, executor=executor, timeout_s=5
    ):
        seen.append(index)
    assert sorted(seen[:3]) == [3, 4, 5]  # the second half ran first
    assert sorted(seen) == list(range(6))
    (plan,) = executor.plans
    assert (plan.parallel, plan.concurrency, plan.timeout_s, plan.repeat) == (True, 2, 5, 1)

    result = await suite_of(6).run(lambda x: f"echo {x}", executor=Halves(), verbose=False)
    assert [r.scenario_name for r in result.results] == [f"s{i}" for i in range(6)]
    assert result.passed_count == 6


async def test_something_else_as_executor_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match=r"executor must be an Executor .* got str"):
        await suite_of(1).run(lambda x: x, executor="ray", verbose=False)  # type: ignore[arg-type]
