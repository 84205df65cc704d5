"""Property: for any recorded agent, every trace assertion gives its replay the verdict it
gave the live run (steps, LLM calls, tokens and cost counted by one rule)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.replay.cassette_support import ConnectionCounter
from tests.replay.sdk_agents import ask, ask_sync

from scenarist import Client, RunContext, TraceAssert
from scenarist.replay.step_replay import ReplayOptions
from scenarist.store import MemoryStore
from scenarist.testing import FakeLLMServer, FakeRequest, Reply, ScriptedLLM

MOCKED = ReplayOptions(mock_llm_responses=True)  # Veval's default replays live


@dataclass(frozen=True)
class StepPlan:
    name: str
    calls: tuple[bool, ...]  # one SDK call each: True = async client, False = sync client
    declare: frozenset[str]  # of "type", "cost", "tokens"
    child: StepPlan | None = None


@dataclass(frozen=True)
class AgentPlan:
    steps: tuple[StepPlan, ...]
    bare_calls: int  # SDK calls made outside any step


def _steps(depth: int) -> st.SearchStrategy[StepPlan]:
    child = st.none() if depth == 0 else st.none() | _steps(depth - 1)
    return st.builds(
        StepPlan,
        name=st.sampled_from(["classify", "lookup", "answer"]),
        calls=st.lists(st.booleans(), max_size=2).map(tuple),
        declare=st.frozensets(st.sampled_from(["type", "cost", "tokens"])),
        child=child,
    )


AGENTS = st.builds(
    AgentPlan,
    steps=st.lists(_steps(1), min_size=1, max_size=4).map(tuple),
    bare_calls=st.integers(0, 1),
)


def make_agent(plan: AgentPlan, base_url: str) -> Any:
    async def run_step(ctx: RunContext, step: StepPlan, path: str) -> str:
        async def body(handle: Any) -> str:
            if "type" in step.declare:
                handle.set_meta("type", "llm")
            if "cost" in step.declare:
                handle.set_meta("cost_usd", 0.25)
            if "tokens" in step.declare:
                handle.set_meta("tokens_in", 50)
                handle.set_meta("tokens_out", 7)
            texts = []
            for n, use_async in enumerate(step.calls):
                prompt = f"{path}.{n} {ctx.input}"
                texts.append(
                    await ask(base_url, prompt) if use_async else ask_sync(base_url, prompt)
                )
            if step.child is not None:
                texts.append(await run_step(ctx, step.child, f"{path}.child"))
            return " | ".join(texts)

        return str(await ctx.track_step_async(step.name, {"path": path}, body))

    async def agent(ctx: RunContext) -> str:
        outputs = [await ask(base_url, f"bare.{n}") for n in range(plan.bare_calls)]
        for i, step in enumerate(plan.steps):
            outputs.append(await run_step(ctx, step, f"s{i}"))
        return " / ".join(outputs)

    return agent


def assertions() -> Iterator[Any]:
    yield TraceAssert.no_errors()
    for n in range(9):
        yield TraceAssert.max_steps(n)
        yield TraceAssert.min_steps(n)
        yield TraceAssert.max_llm_calls(n)
    for limit in (0, 30, 60, 100, 150, 250, 400):
        yield TraceAssert.max_tokens(limit)
        yield TraceAssert.max_tokens(limit, unknown_tokens="ignore")
    for cost in ("0", "0.00001", "0.25", "0.5", "1"):
        yield TraceAssert.max_cost(cost)
        yield TraceAssert.max_cost(cost, unknown_cost="ignore")
    for name in ("classify", "lookup", "answer"):
        yield TraceAssert.step_exists(name)


def _reply(request: FakeRequest) -> Reply:
    return Reply(f"re {request.text}", tokens_in=len(request.text), tokens_out=3)


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(ScriptedLLM(_reply)) as server:
        yield server


@pytest.fixture(scope="module")
def nowhere() -> Iterator[ConnectionCounter]:
    with ConnectionCounter() as counter:
        yield counter


async def _live_and_replay(plan: AgentPlan, url: str, replay_url: str) -> tuple[Any, Any, Any]:
    client = Client(store=MemoryStore())
    live_output = await client.run_async("agent", make_agent(plan, url), input="q")
    (record,) = client.store.traces.values()  # type: ignore[attr-defined]
    result = await client.replay_async(record, make_agent(plan, replay_url), MOCKED)
    assert result.passed, result.failures
    assert result.output == live_output
    return record, result.replayed_record, result


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=AGENTS)
def test_every_trace_assertion_gives_the_replay_the_live_verdict(
    plan: AgentPlan, llm: FakeLLMServer, nowhere: ConnectionCounter
) -> None:
    record, replayed, result = asyncio.run(
        _live_and_replay(plan, llm.openai_url, nowhere.openai_url)
    )
    assert result.fidelity.is_faithful
    assert nowhere.connections == 0
    live_trace, replay_trace = record.to_trace(), replayed.to_trace()
    for assertion in assertions():
        live, again = assertion.run(live_trace), assertion.run(replay_trace)
        assert (again.status, again.message) == (live.status, live.message), assertion
