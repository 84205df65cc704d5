"""The item runner stores each item's trace while the next item runs, and still never
returns before every trace is stored; a trace that cannot be stored fails its item."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from scenarist import ScenarioItem, TraceAssert
from scenarist.store import MemoryStore, SqlStore
from scenarist.tracing import RunContext, TraceRecord
from scenarist.veval.client import Client

pytestmark = pytest.mark.anyio


class RefusingStore(MemoryStore):
    """A store that cannot keep the run of one input (a full disk, a lost connection)."""

    async def save_trace(self, record: TraceRecord) -> None:
        if record.input == "refused":
            raise OSError("disk full")
        await super().save_trace(record)


async def test_a_trace_that_cannot_be_stored_fails_only_its_item() -> None:
    store = RefusingStore()
    client = Client(store=store)
    items = [ScenarioItem(name=name, input=name) for name in ("ok", "refused", "also ok")]
    result = await client.run_scenario_async(
        "storage",
        lambda ctx: f"answer to {ctx.input}",
        scenario_assertions=[TraceAssert.no_errors()],
        items=items,
        max_concurrency=3,
    )
    assert [r.passed for r in result.results] == [True, False, True]
    assert result.results[1].failures == ["The run's trace could not be stored: OSError: disk full"]
    (summary,) = await store.list_scenario_runs("storage")
    assert not summary.passed and summary.fail_count == 1


async def test_every_trace_is_stored_before_the_run_returns(tmp_path: Path) -> None:
    async def agent(ctx: RunContext) -> str:
        await asyncio.sleep(0.001 * (int(ctx.input) % 3))  # finish out of order
        return f"echo {ctx.input}"

    client = Client(store=SqlStore(tmp_path / "scenarist.db"))
    items = [ScenarioItem(name=str(i), input=str(i)) for i in range(30)]
    result = await client.run_scenario_async("durable", agent, items=items, max_concurrency=7)
    assert result.pass_count == 30
    fresh = SqlStore(tmp_path / "scenarist.db")
    for item_result in result.results:
        stored = await fresh.get_trace(item_result.trace_id or "")
        assert stored is not None and stored.output == f"echo {item_result.item.input}"


async def test_a_run_the_agent_makes_itself_is_stored_before_it_returns(tmp_path: Path) -> None:
    client = Client(store=SqlStore(tmp_path / "scenarist.db"))
    seen: list[Any] = []

    async def inner(ctx: RunContext) -> str:
        return "inner output"

    async def agent(ctx: RunContext) -> str:
        await client.run_async("inner", inner, input="x")
        (summary,) = (await client.store.search_traces(agent_name="inner")).items  # type: ignore[attr-defined]
        seen.append(await client.get_trace_async(summary.trace_id))
        return "outer"

    result = await client.run_scenario_async(
        "nested", agent, items=[ScenarioItem(name="one", input="q")]
    )
    assert result.pass_count == 1
    assert seen[0] is not None and seen[0].output == "inner output"
