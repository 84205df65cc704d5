"""An agent or an assertion that raises ``SystemExit`` or a ``CancelledError`` nothing asked
for fails its own item; the other items run and every item has a result."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from scenarist import ScenarioItem
from scenarist.store import MemoryStore
from scenarist.tracing import RunContext
from scenarist.veval.assertions import ITraceAssertion
from scenarist.veval.client import Client

pytestmark = pytest.mark.anyio


async def _agent(ctx: RunContext) -> str:
    if ctx.input == "cancel":
        raise asyncio.CancelledError()
    if ctx.input == "exit":
        sys.exit(3)
    return f"answer to {ctx.input}"


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_an_agent_that_exits_or_cancels_itself_fails_only_its_item(concurrency: int) -> None:
    store = MemoryStore()
    names = ["ok", "cancel", "exit", "also ok"]
    result = await Client(store=store).run_scenario_async(
        "strays",
        _agent,
        items=[ScenarioItem(name=n, input=n) for n in names],
        max_concurrency=concurrency,
    )
    assert [r.item.name for r in result.results] == names
    assert [r.passed for r in result.results] == [True, False, False, True]
    cancelled, exited = result.results[1].failures, result.results[2].failures
    assert any("CancelledError" in f and "nothing cancelled the run" in f for f in cancelled)
    assert any("SystemExit(3)" in f for f in exited)
    (summary,) = await store.list_scenario_runs("strays")
    assert summary.fail_count == 2


class ExitingAssertion(ITraceAssertion):
    """A Veval-style assertion (``evaluate_async``) that calls ``sys.exit``."""

    async def evaluate_async(self, ctx: Any) -> str | None:
        sys.exit(4)


async def test_an_assertion_that_exits_is_that_items_error() -> None:
    result = await Client(store=MemoryStore()).run_scenario_async(
        "assert-exit",
        _agent,
        scenario_assertions=[ExitingAssertion()],
        items=[ScenarioItem(name="a", input="a"), ScenarioItem(name="b", input="b")],
    )
    assert [r.passed for r in result.results] == [False, False]
    (failure,) = result.results[0].failures
    assert failure.startswith("[ERROR] ExitingAssertion raised AbortedCallError")
    assert "SystemExit(4)" in failure


async def test_a_cancellation_of_the_run_itself_still_propagates() -> None:
    started = asyncio.Event()

    async def slow(ctx: RunContext) -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    task = asyncio.ensure_future(
        Client(store=MemoryStore()).run_scenario_async(
            "cancelled-run", slow, items=[ScenarioItem(name="x", input="x")]
        )
    )
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
