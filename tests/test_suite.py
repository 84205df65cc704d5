from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from typing import Any

import pytest
from tests.helpers.limits import HANG_S

from scenarist import Equals, FnCheck, GroupStats, Scenario, Suite, SuiteResult

pytestmark = pytest.mark.anyio


def _echo_suite(n: int, **kw: Any) -> Suite:
    suite = Suite(name="echo", **kw)
    for i in range(n):
        suite.append(Scenario(f"s{i}").interact(f"q{i}").check(Equals(expected_value=f"echo q{i}")))
    return suite


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (True, TypeError, "max_concurrency must be None or a positive integer"),
        (1.5, TypeError, "max_concurrency must be None or a positive integer"),
        ("3", TypeError, "max_concurrency must be None or a positive integer"),
        (0, ValueError, "max_concurrency must be greater than 0"),
        (-1, ValueError, "max_concurrency must be greater than 0"),
    ],
)
async def test_suite_max_concurrency_is_validated_even_when_serial(
    parallel: bool, value: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        await _echo_suite(1).run(
            target=lambda inputs: inputs, parallel=parallel, max_concurrency=value
        )


async def test_suite_parallel_keeps_results_in_scenario_order() -> None:
    async def agent(inputs: str) -> str:
        await asyncio.sleep(0.001 * (10 - int(inputs[1:]) % 10))  # later ones finish first
        return f"echo {inputs}"

    result = await _echo_suite(30).run(
        target=agent, parallel=True, max_concurrency=7, verbose=False
    )
    assert [r.scenario_name for r in result.results] == [f"s{i}" for i in range(30)]
    assert result.passed_count == 30 and result.pass_rate == 1.0


async def test_suite_parallel_bounds_concurrency() -> None:
    in_flight = peak = 0

    async def agent(inputs: str) -> str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.005)
        in_flight -= 1
        return f"echo {inputs}"

    await _echo_suite(40).run(target=agent, parallel=True, max_concurrency=5, verbose=False)
    assert peak == 5


async def test_suite_parallel_runs_sync_targets_in_worker_threads() -> None:
    threads: set[str] = set()
    main = threading.current_thread().name

    # Ten calls meet at a barrier: only calls that overlap can pass it (one after another,
    # the first would wait for the others until the barrier's timeout, and fail).
    meeting = threading.Barrier(10, timeout=HANG_S)

    def blocking_agent(inputs: str) -> str:
        threads.add(threading.current_thread().name)
        meeting.wait()
        return f"echo {inputs}"

    result = await _echo_suite(20).run(
        target=blocking_agent, parallel=True, max_concurrency=10, verbose=False
    )
    assert result.passed_count == 20
    assert main not in threads


async def test_suite_serial_runs_in_order() -> None:
    order: list[str] = []

    def agent(inputs: str) -> str:
        order.append(inputs)
        return f"echo {inputs}"

    await _echo_suite(5).run(target=agent, verbose=False)
    assert order == [f"q{i}" for i in range(5)]


async def test_suite_target_precedence_run_over_suite_over_scenario() -> None:
    suite = Suite(name="p", target=lambda inputs: "suite")
    suite.append(Scenario("own", target=lambda inputs: "scenario").interact("x"))
    from_suite = await suite.run(verbose=False)
    from_run = await suite.run(target=lambda inputs: "run", verbose=False)
    assert from_suite.results[0].final_trace.last.outputs == "suite"  # type: ignore[union-attr]
    assert from_run.results[0].final_trace.last.outputs == "run"  # type: ignore[union-attr]
    alone = await Suite(
        name="q", scenarios=[Scenario("own", target=lambda inputs: "scenario").interact("x")]
    ).run(verbose=False)
    assert alone.results[0].final_trace.last.outputs == "scenario"  # type: ignore[union-attr]


@pytest.mark.parametrize("parallel", [False, True])
async def test_suite_first_exception_is_raised_unwrapped(parallel: bool) -> None:
    def agent(inputs: str) -> str:
        raise KeyError(inputs)

    with pytest.raises(KeyError):
        await _echo_suite(20).run(target=agent, parallel=parallel, max_concurrency=4, verbose=False)


async def test_suite_return_exception_records_errors_and_keeps_going() -> None:
    def agent(inputs: str) -> str:
        if inputs == "q1":
            raise KeyError(inputs)
        return f"echo {inputs}"

    result = await _echo_suite(3).run(
        target=agent, return_exception=True, parallel=True, verbose=False
    )
    assert [r.status for r in result.results] == ["pass", "error", "pass"]
    assert (result.passed_count, result.errored_count) == (2, 1)


def _result(statuses: list[str], tags: list[list[str]] | None = None) -> SuiteResult:
    suite = Suite(name="mixed")
    for i, status in enumerate(statuses):
        scenario = Scenario(f"s{i}", tags=(tags or [[]] * len(statuses))[i]).interact("a", "b")
        if status == "fail":
            scenario.check(Equals(expected_value="x"))
        elif status == "error":
            scenario.check(FnCheck(fn=lambda t: 1 / 0))
        elif status == "skip":
            scenario.check(FnCheck(fn=lambda t: __import__("scenarist").CheckResult.skip("n/a")))
        suite.append(scenario)
    return suite.run_sync(return_exception=True, verbose=False)


def test_pass_rate_counts_errors_and_ignores_skips() -> None:
    result = _result(["pass", "fail", "error", "skip", "pass"])
    assert (
        result.passed_count,
        result.failed_count,
        result.errored_count,
        result.skipped_count,
    ) == (2, 1, 1, 1)
    assert result.pass_rate == pytest.approx(2 / 4)


def test_pass_rate_is_none_when_nothing_was_evaluated() -> None:
    assert Suite(name="empty").run_sync(verbose=False).pass_rate is None
    assert _result(["skip", "skip"]).pass_rate is None


def test_group_by_puts_a_scenario_in_every_bucket_it_carries() -> None:
    result = _result(
        ["pass", "fail", "pass", "error"],
        [["lang:en", "lang:fr"], ["lang:en"], ["smoke"], ["lang", "lang:"]],
    )
    groups = result.group_by("lang").groups
    assert groups["en"] == GroupStats(name="en", passed=1, failed=1, errored=0)
    assert groups["fr"] == GroupStats(name="fr", passed=1, failed=0, errored=0)
    assert groups[None] == GroupStats(name=None, passed=1, failed=0, errored=0)
    # a bare "lang" tag and an empty "lang:" value share one bucket, shown as "true"
    assert groups[""].errored == 1 and groups[""].display_name == "true"
    assert groups[None].display_name == "(untagged)"
    assert sum(g.total for g in groups.values()) == 5  # more than the 4 scenarios


def test_group_stats_pass_rate_is_none_when_everything_skipped() -> None:
    assert GroupStats(name="x", passed=0, failed=0, errored=0, skipped=2).pass_rate is None
    assert GroupStats(
        name="x", passed=1, failed=1, errored=1, skipped=1
    ).pass_rate == pytest.approx(1 / 3)


def test_suite_result_json_round_trip_drops_the_suite() -> None:
    result = _result(["pass", "fail"], [["a:1"], ["a:2"]])
    assert result.suite is not None
    again = SuiteResult.model_validate_json(result.model_dump_json())
    assert again.suite is None
    assert [r.status for r in again.results] == ["pass", "fail"]
    assert again.pass_rate == result.pass_rate
    assert (
        again.results[1].steps[0].results[0].message
        == result.results[1].steps[0].results[0].message
    )


def test_suite_assert_passed_names_the_bad_scenarios() -> None:
    with pytest.raises(AssertionError, match=r"(?s)1 of 2 scenarios did not pass.*s1 \[fail\]"):
        _result(["pass", "fail"]).assert_passed()


def test_suite_select_by_tag_and_name() -> None:
    suite = Suite(name="sel")
    suite.extend(
        Scenario("a", tags=["smoke"]), Scenario("b", tags=["slow"]), Scenario("c", tags=["smoke"])
    )
    assert [s.name for s in suite.select(tags=["smoke"]).scenarios] == ["a", "c"]
    assert [s.name for s in suite.select(names=["b"]).scenarios] == ["b"]


async def test_suite_iter_results_streams_every_result() -> None:
    seen = sorted(
        [
            i
            async for i, _ in _echo_suite(12).iter_results(
                target=lambda inputs: f"echo {inputs}", parallel=True, max_concurrency=3
            )
        ]
    )
    assert seen == list(range(12))


def test_suite_verbose_without_a_tty_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    _echo_suite(3).run_sync(target=lambda inputs: f"echo {inputs}", verbose=True)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_run_sync_never_formats_the_result_it_returns() -> None:
    """On CPython 3.11, ``asyncio.run`` in the main thread formats its task, and so the
    task's result, with ``repr`` before returning (its SIGINT handler check): a suite's
    whole result, every trace built to print it. ``run_sync`` must return the result
    without it, from the main thread as a script calls it."""
    code = (
        "from scenarist import Equals, Scenario, Suite\n"
        "from scenarist.model.results import SuiteResult\n"
        "calls = []\n"
        "def spy(self):\n"
        "    calls.append(1)\n"
        "    return 'SuiteResult(...)'\n"
        "SuiteResult.__repr__ = spy\n"
        "suite = Suite(name='s', scenarios=[Scenario('a').interact('q', 'r')"
        ".check(Equals(expected_value='r'))])\n"
        "result = suite.run_sync(verbose=False)\n"
        "assert result.results[0].passed\n"
        "print('repr calls', len(calls))\n"
        "import sys\n"  # and a run without budgets never loads the rate limiter
        "print('rate limiter loaded', 'scenarist.engine.rate_limits' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=HANG_S
    )
    assert out.stdout.split("\n")[:2] == ["repr calls 0", "rate limiter loaded False"], (
        out.stdout + out.stderr
    )
