"""A ``Suite`` fed by an iterable or a generator: scenarios are built as they run.

What a user streaming 100,000 scenarios relies on: the source is pulled only when a
worker is free (so a run holds about ``max_concurrency`` definitions, not all of them),
results come back in the source's order, a source that fails mid-way says so clearly
and keeps what ran, and a consumed stream is not silently run as an empty suite.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scenarist import Equals, FnCheck, Scenario, Suite, Trace
from scenarist.errors import ScenarioSourceError, UserError
from scenarist.formats.runlog import (
    ScenarioRecord,
    read_jsonl,
    run_log_from_suite_result,
    write_jsonl,
)


class CountingSource:
    """Yields ``n`` scenarios, recording at each pull how many were built but not finished.

    A scenario is finished when its check has run (the check is its last act), so
    ``most_at_once`` is how many definitions the run held at the same time.
    """

    def __init__(self, n: int, *, fail_at: int | None = None, steps_of_delay: int = 0) -> None:
        self.n = n
        self.fail_at = fail_at
        self.steps_of_delay = steps_of_delay
        self.built = 0
        self.finished = 0
        self.most_at_once = 0

    def _done(self, trace: Trace[Any, Any]) -> bool:
        self.finished += 1
        return True

    def __iter__(self) -> Iterator[Scenario]:
        for i in range(self.n):
            if i == self.fail_at:
                raise ConnectionError("the scenario table went away")
            self.built += 1
            self.most_at_once = max(self.most_at_once, self.built - self.finished)
            yield (
                Scenario(f"s{i}")
                .interact(f"q{i}")
                .check(Equals(name="echo", expected_value=f"echo q{i}"))
                .check(FnCheck(name="done", fn=self._done))
            )


def target_for(source: CountingSource) -> Any:
    async def target(inputs: str) -> str:
        # Later scenarios answer sooner (fewer event-loop turns), so completion order
        # differs from the source's order.
        index = int(inputs[1:])
        for _ in range((source.n - index) % 7 if source.steps_of_delay else 0):
            await asyncio.sleep(0)
        return f"echo {inputs}"

    return target


def test_the_source_is_not_consumed_before_the_run() -> None:
    source = CountingSource(50)
    suite = Suite(name="lazy", scenarios=iter(source))
    assert source.built == 0
    assert suite.streamed
    assert suite.scenarios == []


@pytest.mark.parametrize(("parallel", "cap"), [(False, None), (True, 1), (True, 8), (True, 25)])
def test_a_streamed_run_holds_at_most_max_concurrency_definitions(
    parallel: bool, cap: int | None
) -> None:
    source = CountingSource(200, steps_of_delay=1)
    suite = Suite(name="stream", scenarios=iter(source), target=target_for(source))
    result = suite.run_sync(parallel=parallel, max_concurrency=cap, verbose=False)
    assert source.built == source.finished == 200
    assert source.most_at_once == (cap or 1)
    assert [r.scenario_name for r in result.results] == [f"s{i}" for i in range(200)]
    assert result.passed_count == 200 and not result.incomplete


def test_unbounded_concurrency_takes_the_whole_stream_in_order() -> None:
    source = CountingSource(120, steps_of_delay=1)
    suite = Suite(name="all", scenarios=iter(source), target=target_for(source))
    result = suite.run_sync(parallel=True, max_concurrency=None, verbose=False)
    assert [r.scenario_name for r in result.results] == [f"s{i}" for i in range(120)]
    assert result.passed_count == 120


def test_listed_scenarios_run_before_the_stream() -> None:
    source = CountingSource(3)
    suite = Suite(name="both", scenarios=iter(source), target=target_for(source))
    suite.append(Scenario("first").interact("q", "a").check(Equals(expected_value="a")))
    result = suite.run_sync(verbose=False)
    assert [r.scenario_name for r in result.results] == ["first", "s0", "s1", "s2"]


def test_a_source_that_raises_mid_way_keeps_the_results_so_far() -> None:
    source = CountingSource(30, fail_at=12)
    suite = Suite(name="flaky-table", scenarios=iter(source), target=target_for(source))
    with pytest.raises(ScenarioSourceError) as caught:
        suite.run_sync(parallel=True, max_concurrency=5, verbose=False)
    error = caught.value
    assert str(error) == (
        "suite 'flaky-table': its scenario source raised ConnectionError after 12 "
        "scenarios: the scenario table went away"
    )
    assert isinstance(error.__cause__, ConnectionError)
    assert error.index == 12
    partial = error.result
    assert partial.incomplete
    assert [r.scenario_name for r in partial.results] == [f"s{i}" for i in range(12)]
    assert partial.passed_count == 12
    # Its run log has no footer: it reads back as an interrupted run.
    log = run_log_from_suite_result(partial)
    assert log.footer is None and len(log.scenarios) == 12


def test_iter_results_yields_what_ran_then_raises_so_a_run_log_keeps_it(tmp_path: Path) -> None:
    source = CountingSource(10, fail_at=6)
    suite = Suite(name="logged", scenarios=iter(source), target=target_for(source))
    path = tmp_path / "run.jsonl"
    header = run_log_from_suite_result(Suite(name="logged").run_sync(verbose=False)).header
    write_jsonl([header], path)

    async def consume() -> None:
        async for index, result in suite.iter_results(parallel=True, max_concurrency=3):
            write_jsonl([ScenarioRecord.from_result(index, result)], path, append=True)

    with pytest.raises(ScenarioSourceError, match="after 6 scenarios"):
        asyncio.run(consume())
    log = read_jsonl(path)
    assert sorted(record.result.scenario_name for record in log.scenarios) == [
        f"s{i}" for i in range(6)
    ]
    assert log.footer is None  # an interrupted run


def test_a_source_yielding_something_else_names_it_and_its_index() -> None:
    def source() -> Iterator[Any]:
        yield Scenario("ok").interact("q", "a").check(Equals(expected_value="a"))
        yield {"name": "not a scenario"}

    suite = Suite(name="mixed", scenarios=source())
    with pytest.raises(ScenarioSourceError) as caught:
        suite.run_sync(verbose=False)
    assert str(caught.value) == (
        "suite 'mixed': its scenario source yielded dict at index 1; it must yield Scenario objects"
    )
    assert [r.scenario_name for r in caught.value.result.results] == ["ok"]


def test_a_consumed_stream_is_not_run_again_as_an_empty_suite() -> None:
    source = CountingSource(4)
    suite = Suite(name="once", scenarios=iter(source), target=target_for(source))
    assert len(suite.run_sync(verbose=False).results) == 4
    with pytest.raises(UserError, match="an earlier run consumed; build the suite again"):
        suite.run_sync(verbose=False)


def test_select_filters_a_stream_as_it_runs() -> None:
    source = CountingSource(10)
    suite = Suite(name="some", scenarios=iter(source), target=target_for(source))
    chosen = suite.select(names=["s2", "s7"])
    assert source.built == 0
    result = chosen.run_sync(verbose=False)
    assert [r.scenario_name for r in result.results] == ["s2", "s7"]
    assert source.built == 10


def test_each_result_hands_every_result_to_the_sink_in_the_task_that_ran_it() -> None:
    source = CountingSource(40, steps_of_delay=1)
    suite = Suite(name="sunk", scenarios=list(source), target=target_for(source))
    seen: list[tuple[int, str, str]] = []
    runners: set[Any] = set()

    async def sink(index: int, result: Any) -> None:
        seen.append((index, result.scenario_name, result.status.value))
        runners.add(asyncio.current_task())

    async def consume() -> set[Any]:
        await suite.each_result(sink, parallel=True, max_concurrency=4)
        return {asyncio.current_task()}

    consumer = asyncio.run(consume())
    assert sorted(seen) == [(i, f"s{i}", "pass") for i in range(40)]
    assert [i for i, _, _ in seen] != list(range(40))  # in completion order
    assert len(runners) == 4 and not runners & consumer  # the 4 workers, no consumer task


def test_each_result_hands_over_what_ran_then_raises_the_source_error() -> None:
    source = CountingSource(10, fail_at=6)
    suite = Suite(name="sunk", scenarios=iter(source), target=target_for(source))
    names: list[str] = []

    async def sink(index: int, result: Any) -> None:
        names.append(result.scenario_name)

    with pytest.raises(ScenarioSourceError, match="after 6 scenarios"):
        asyncio.run(suite.each_result(sink, parallel=True, max_concurrency=3))
    assert sorted(names) == [f"s{i}" for i in range(6)]
