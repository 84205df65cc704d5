"""The Veval documentation examples (the seed page), on scenarist.

The Python snippets run as written; only the client construction differs, as the compat
contract allows (``veval = Client(...)`` instead of ``VevalSdk(VevalOptions(...))``).
"""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from typing import Any

import pytest

from scenarist import Client, ITraceAssertion, RunContext, ScenarioItem, TraceAssert, TraceRecord
from scenarist.store import MemoryStore

pytestmark = pytest.mark.anyio


class Service:
    """A stand-in agent with a classify step and an answer step."""

    async def execute_async(self, ctx: RunContext) -> str:
        def classify(handle: Any) -> str:
            handle.set_meta("type", "llm")
            handle.set_meta("model", "gpt-4o-mini")
            handle.set_meta("cost_usd", 0.002)
            return "definition"

        kind = await ctx.track_step_async("classify", ctx.input, classify)
        return await ctx.track_step_async("answer", kind, lambda: f"{kind}: {ctx.input}")


@pytest.fixture
def veval() -> Client:
    return Client(store=MemoryStore())


async def test_seed_run_scenario_async_example(veval: Client) -> None:
    service = Service()
    result = await veval.run_scenario_async(
        scenario_name="my-scenario",
        agent=service.execute_async,
        scenario_assertions=[
            TraceAssert.no_errors(),
            TraceAssert.max_cost(0.10),
            TraceAssert.step_exists("classify"),
        ],
        items=[
            ScenarioItem(name="question 1", input="What is prompt caching?"),
            ScenarioItem(name="question 2", input="What is tool use?"),
        ],
    )
    out = io.StringIO()
    with redirect_stdout(out):
        print(f"{result.pass_count}/{len(result.results)} passed")

        for item in result.results:
            print(f"{'✓' if item.passed else '✗'} {item.item.name}")
            for failure in item.failures:
                print(f"  → {failure}")
    assert out.getvalue() == "2/2 passed\n✓ question 1\n✓ question 2\n"
    assert result.passed


async def test_seed_per_item_assertion_fails_only_that_item(veval: Client) -> None:
    service = Service()
    result = await veval.run_scenario_async(
        scenario_name="budget",
        agent=service.execute_async,
        scenario_assertions=[TraceAssert.no_errors()],
        items=[
            ScenarioItem(
                name="expensive question",
                input="Write me a novel.",
                assertions=[TraceAssert.max_cost(0.001)],  # only for this item
            ),
            ScenarioItem(name="cheap question", input="Hi"),
        ],
    )
    assert [r.passed for r in result.results] == [False, True]
    assert result.results[0].failures == ["MaxCost: expected at most 0.001, got 0.002"]


async def test_seed_items_fetched_from_the_store_when_items_is_none(veval: Client) -> None:
    await veval.store.save_items(
        "my-scenario", [ScenarioItem(name="stored", input="What is prompt caching?")]
    )
    service = Service()
    # items: None → fetched by scenario_name
    result = await veval.run_scenario_async(
        scenario_name="my-scenario",
        agent=service.execute_async,
        scenario_assertions=[TraceAssert.no_errors()],
    )
    assert [r.item.name for r in result.results] == ["stored"]
    assert result.passed


async def test_seed_trace_backed_item_never_calls_the_live_agent(veval: Client) -> None:
    await veval.store.save_trace(TraceRecord(trace_id="tr_4ec4e79c5d03", input="q", output="a"))
    calls: list[Any] = []

    async def agent(ctx: RunContext) -> str:
        calls.append(ctx)
        return "live"

    result = await veval.run_scenario_async(
        scenario_name="replays",
        agent=agent,
        scenario_assertions=[],
        items=[
            ScenarioItem(
                name="production trace replay",
                trace_id="tr_4ec4e79c5d03",
                assertions=[TraceAssert.max_cost(0.05)],  # per-item assertion
            )
        ],
    )
    assert calls == []
    assert not result.passed
    assert result.results[0].failures[0].startswith("Replay trace 'tr_4ec4e79c5d03' has no steps.")


class MentionsCaching(ITraceAssertion):
    async def evaluate_async(self, ctx: Any) -> str | None:
        return None if "caching" in str(ctx.output) else "Custom: the answer never mentions caching"


class Broken(ITraceAssertion):
    def evaluate(self, ctx: Any) -> str | None:
        raise RuntimeError("assertion bug")


async def test_veval_style_custom_assertion_classes_get_the_run_context(veval: Client) -> None:
    result = await veval.run_scenario_async(
        "custom",
        Service().execute_async,
        [MentionsCaching()],
        items=[
            ScenarioItem(name="yes", input="What is prompt caching?"),
            ScenarioItem(name="no", input="What is tool use?"),
            ScenarioItem(name="broken", input="x", assertions=[Broken()]),
        ],
    )
    assert [r.passed for r in result.results] == [True, False, False]
    assert result.results[1].failures == ["Custom: the answer never mentions caching"]
    assert result.results[2].failures[-1] == "[ERROR] Broken raised RuntimeError: assertion bug"


async def test_no_errors_sees_an_agent_error_raised_outside_any_step(veval: Client) -> None:
    """Veval's no_errors looks at steps only (the item still fails on the agent's
    exception); agent_errors=True names it too."""

    async def agent(ctx: RunContext) -> str:
        await ctx.track_step_async("fine", None, lambda: "ok")
        raise ValueError("crashed after the steps")

    result = await veval.run_scenario_async(
        "errors",
        agent,
        [TraceAssert.no_errors(), TraceAssert.no_errors(agent_errors=True)],
        items=[ScenarioItem(input="q")],
    )
    failures = result.results[0].failures
    assert failures[0] == "Agent threw exception: crashed after the steps"
    assert len(failures) == 2
    assert failures[1].startswith("NoErrors:")
    assert "crashed after the steps" in failures[1]
