"""Faults inside user code never lose results: a target that raises ``CancelledError`` or
``SystemExit`` is that scenario's ERROR and the run goes on; a blocking sync target stops
at ``timeout_s`` in serial and parallel runs; scenarist's own cancellations (a timeout,
Ctrl-C, the first exception of a parallel run) still cancel.

No test here measures time: blocking targets wait on an ``Event`` that is set only after
the verdict is in, so a verdict that waited for the target could never arrive."""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from scenarist import Equals, FnCheck, Scenario, Suite
from scenarist.errors import AbortedCallError

pytestmark = pytest.mark.anyio


async def _good(inputs: str) -> str:
    return "good"


async def _bad(inputs: str) -> str:
    return "bad"


async def _cancels_itself(inputs: str) -> str:
    raise asyncio.CancelledError()


def _cancels_itself_sync(inputs: str) -> str:
    raise asyncio.CancelledError()


async def _awaits_a_cancelled_task(inputs: str) -> str:
    """The usual way a stray cancellation reaches a target: awaiting a task someone else
    cancelled."""
    task = asyncio.ensure_future(asyncio.sleep(3600))
    task.cancel()
    return await task  # type: ignore[no-any-return]


async def _exits(inputs: str) -> str:
    raise SystemExit(3)


def _exits_sync(inputs: str) -> str:
    raise SystemExit(3)


def _scenario(name: str, target: Callable[[str], Any]) -> Scenario:
    return Scenario(name, target=target).interact("q").check(Equals(expected_value="good"))


def _suite(middle: Callable[[str], Any]) -> Suite:
    return Suite(
        name="faults",
        scenarios=[
            _scenario("ok_1", _good),
            _scenario("faulty", middle),
            _scenario("fails", _bad),
            _scenario("ok_2", _good),
        ],
    )


CANCELLING = [_cancels_itself, _cancels_itself_sync, _awaits_a_cancelled_task]


@pytest.mark.parametrize("parallel", [False, True], ids=["serial", "parallel"])
@pytest.mark.parametrize("target", CANCELLING, ids=lambda f: f.__name__)
async def test_a_target_raising_cancelled_error_is_that_scenarios_error(
    parallel: bool, target: Callable[[str], Any]
) -> None:
    result = await _suite(target).run(return_exception=True, parallel=parallel, max_concurrency=4)
    assert [(r.scenario_name, r.status) for r in result.results] == [
        ("ok_1", "pass"),
        ("faulty", "error"),
        ("fails", "fail"),
        ("ok_2", "pass"),
    ]
    error = result.results[1].steps[0].error
    assert error is not None and error.exception_type == "AbortedCallError"
    assert "raised asyncio.CancelledError" in error.message
    assert "nothing cancelled the run" in error.message
    assert (result.passed_count, result.failed_count, result.errored_count) == (2, 1, 1)


@pytest.mark.parametrize("parallel", [False, True], ids=["serial", "parallel"])
@pytest.mark.parametrize("target", [_exits, _exits_sync], ids=["async", "sync"])
async def test_a_target_raising_system_exit_is_that_scenarios_error(
    parallel: bool, target: Callable[[str], Any]
) -> None:
    result = await _suite(target).run(return_exception=True, parallel=parallel, max_concurrency=4)
    assert [r.status for r in result.results] == ["pass", "error", "fail", "pass"]
    error = result.results[1].steps[0].error
    assert error is not None and error.exception_type == "AbortedCallError"
    assert "SystemExit(3)" in error.message
    assert "a scenario cannot end the run" in error.message


@pytest.mark.parametrize("parallel", [False, True], ids=["serial", "parallel"])
async def test_a_stray_cancellation_is_raised_as_an_error_without_return_exception(
    parallel: bool,
) -> None:
    """Re-raised as ``CancelledError`` it would read as "the run was cancelled" to whoever
    awaits the suite, and a parallel run would drop the scenario silently."""
    with pytest.raises(AbortedCallError, match=r"raised asyncio\.CancelledError"):
        await _suite(_cancels_itself).run(parallel=parallel, max_concurrency=4)


def test_system_exit_still_exits_without_return_exception() -> None:
    """Without ``return_exception`` user code's exceptions propagate unchanged; a request
    to exit the process is honoured too."""
    with pytest.raises(SystemExit) as raised:
        _scenario("exits", _exits_sync).run_sync()
    assert raised.value.code == 3


async def test_a_check_raising_cancelled_error_is_that_checks_error() -> None:
    def cancels(trace: Any) -> bool:
        raise asyncio.CancelledError()

    scenario = (
        Scenario("check_cancels", target=_good)
        .interact("q")
        .check(FnCheck(fn=cancels, name="cancels"))
        .check(Equals(expected_value="good"))
    )
    result = await scenario.run(return_exception=True)
    statuses = [c.status for c in result.steps[0].results]
    assert statuses == ["error", "pass"]
    assert "raised asyncio.CancelledError" in (result.steps[0].results[0].message or "")


async def test_stop_on_failure_skips_the_steps_after_a_stray_cancellation() -> None:
    calls: list[str] = []

    async def target(inputs: str) -> str:
        calls.append(inputs)
        if inputs == "first":
            raise asyncio.CancelledError()
        return "good"

    scenario = (
        Scenario("two_steps", target=target)
        .interact("first")
        .check(Equals(expected_value="good"))
        .interact("second")
        .check(Equals(expected_value="good"))
    )
    result = await scenario.run(return_exception=True)
    assert [s.status for s in result.steps] == ["error", "skip"]
    assert calls == ["first"]


# --- scenarist's own cancellations keep cancelling ---------------------------------------


async def test_the_first_exception_of_a_parallel_run_still_cancels_the_others() -> None:
    """The siblings cancelled by the first failure are our cancellation: the failure is
    raised as is, not an ``AbortedCallError`` from a sibling."""
    started = asyncio.Event()

    async def waits(inputs: str) -> str:
        started.set()
        await asyncio.Event().wait()  # until cancelled
        return "never"

    async def fails(inputs: str) -> str:
        await started.wait()
        raise RuntimeError("model down")

    suite = Suite(name="s", scenarios=[_scenario("waits", waits), _scenario("fails", fails)])
    with pytest.raises(RuntimeError, match="model down"):
        await suite.run(parallel=True)


def test_ctrl_c_stops_the_run_and_later_scenarios_never_start() -> None:
    calls: list[str] = []

    async def interrupts(inputs: str) -> str:
        calls.append("interrupts")
        signal.raise_signal(signal.SIGINT)
        await asyncio.Event().wait()  # until the run is cancelled
        return "never"

    async def later(inputs: str) -> str:
        calls.append("later")
        return "good"

    suite = Suite(
        name="s", scenarios=[_scenario("interrupts", interrupts), _scenario("later", later)]
    )
    with pytest.raises(KeyboardInterrupt):
        suite.run_sync(return_exception=True)
    assert calls == ["interrupts"]


# --- timeout_s holds for blocking sync targets -------------------------------------------


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """What a blocking target waits on; set after the test, so no thread outlives it."""
    event = threading.Event()
    yield event
    event.set()


@pytest.mark.parametrize("parallel", [False, True], ids=["serial", "parallel"])
async def test_timeout_stops_a_blocking_sync_target(
    parallel: bool, release: threading.Event
) -> None:
    def blocks(inputs: str) -> str:
        release.wait()
        return "good"

    suite = Suite(
        name="s",
        scenarios=[
            Scenario("blocks", target=blocks, timeout_s=0.05)
            .interact("q")
            .check(Equals(expected_value="good")),
            _scenario("after", _good),
        ],
    )
    result = await suite.run(return_exception=True, parallel=parallel)
    assert not release.is_set()  # the verdict came while the target still blocked
    assert [r.status for r in result.results] == ["error", "pass"]
    error = result.results[0].steps[0].error
    assert error is not None and error.phase == "timeout"
    assert "did not finish within timeout_s=0.05" in error.message


def test_timeout_stops_a_blocking_sync_target_from_run_sync(release: threading.Event) -> None:
    def blocks(inputs: str) -> str:
        release.wait()
        return "good"

    result = (
        Scenario("blocks", timeout_s=0.05)
        .interact("q")
        .check(Equals(expected_value="good"))
        .run_sync(target=blocks, return_exception=True)
    )
    assert not release.is_set()
    assert result.status == "error"
    assert result.steps[0].error is not None and result.steps[0].error.phase == "timeout"


def test_a_timed_sync_target_still_records_its_steps() -> None:
    """The worker thread runs in the run's context: steps the target opens land in the
    interaction's spans, as they do when it runs inline."""
    from scenarist import step

    threads: list[str] = []

    def target(inputs: str) -> str:
        threads.append(threading.current_thread().name)
        with step("lookup", input=inputs, kind="tool"):
            return "good"

    result = (
        Scenario("traced", timeout_s=30)
        .interact("q")
        .check(Equals(expected_value="good"))
        .run_sync(target=target)
    )
    assert result.status == "pass"
    assert threads != [threading.main_thread().name]  # it did run in a worker thread
    last = result.final_trace.last
    assert last is not None and [(s.name, s.input) for s in last.spans] == [("lookup", "q")]
