"""Identical prompts at ``max_concurrency`` > 1: every trace-backed item replays its own
recording (SDK calls inside tracked steps and bare SDK calls alike), and every synthetic
item keeps its own answer and spans; nothing replayed reaches the network."""

from __future__ import annotations

import itertools
from typing import Any

import openai
import pytest
from tests.replay.cassette_support import ConnectionCounter

from scenarist import Client, RunContext, ScenarioItem, TraceAssert
from scenarist.store import MemoryStore
from scenarist.testing import FakeLLMServer, FakeRequest, Reply, ScriptedLLM

pytestmark = pytest.mark.anyio

PROMPT = "Where is my refund?"
ITEMS = 6


def _agent(base_url: str) -> Any:
    """One call inside a tracked step, one bare call: the same prompts for every item."""

    async def agent(ctx: RunContext) -> dict[str, str]:
        async with openai.AsyncOpenAI(api_key="sk-test", base_url=base_url, max_retries=0) as llm:

            async def ask() -> str:
                reply = await llm.chat.completions.create(
                    model="gpt-4o-mini", messages=[{"role": "user", "content": PROMPT}]
                )
                return reply.choices[0].message.content or ""

            stepped = await ctx.track_step_async("ask", PROMPT, ask)
            bare = await ask()
        return {"item": str(ctx.input), "stepped": stepped, "bare": bare}

    return agent


def _numbered() -> ScriptedLLM:
    counter = itertools.count()

    def reply(request: FakeRequest) -> Reply:
        return Reply(f"answer {next(counter)}", tokens_in=5, tokens_out=2)

    return ScriptedLLM(reply)


async def test_identical_prompts_replay_their_own_recordings_in_parallel() -> None:
    client = Client(store=MemoryStore())
    with FakeLLMServer(_numbered()) as server:
        live = await client.run_scenario_async(
            "record",
            _agent(server.openai_url),
            [TraceAssert.max_steps(1), TraceAssert.max_llm_calls(2)],
            items=[ScenarioItem(name=f"item {i}", input=f"item {i}") for i in range(ITEMS)],
            max_concurrency=4,
        )
    assert live.passed, [r.failures for r in live.results]
    outputs = {r.item.name: r.output for r in live.results}
    # each item got two distinct answers of its own, recorded where it made them
    assert all(o["item"] == name for name, o in outputs.items())
    answers = [a for o in outputs.values() for a in (o["stepped"], o["bare"])]
    assert len(set(answers)) == 2 * ITEMS
    for result in live.results:
        assert result.context is not None
        assert [s.name for s in result.context.steps] == ["ask"]
        assert [s.output for s in result.context.steps] == [result.output["stepped"]]

    items = [ScenarioItem(name=r.item.name, trace_id=r.trace_id) for r in reversed(live.results)]
    with ConnectionCounter() as nowhere:
        replayed = await client.run_scenario_async(
            "replay",
            _agent(nowhere.openai_url),
            [TraceAssert.no_errors(), TraceAssert.max_steps(1), TraceAssert.max_llm_calls(2)],
            items=items,
            max_concurrency=4,
        )
    assert replayed.passed, [r.failures for r in replayed.results]
    assert {r.item.name: r.output for r in replayed.results} == outputs
    assert nowhere.connections == 0
    assert all(r.cost_usd in (0, None) for r in replayed.results)


def _layered_agent(base_url: str) -> Any:
    """Both mechanisms at once: a decorated step around a ``with`` step around a tracked
    step whose SDK call is the only model call, the way helpers end up nested."""
    import scenarist

    run: dict[str, RunContext] = {}  # the helpers below find the run's steps by context

    @scenarist.step(kind="tool")
    async def lookup(question: str) -> dict[str, Any]:
        async with scenarist.step("draft", input=question, kind="custom") as handle:
            async with openai.AsyncOpenAI(
                api_key="sk-test", base_url=base_url, max_retries=0
            ) as llm:

                async def ask() -> str:
                    reply = await llm.chat.completions.create(
                        model="gpt-4o-mini", messages=[{"role": "user", "content": question}]
                    )
                    return reply.choices[0].message.content or ""

                text = await run["ctx"].track_step_async("ask", question, ask)
            handle.output = text
        return {"text": text}

    async def agent(ctx: RunContext) -> str:
        run["ctx"] = ctx
        return str((await lookup(PROMPT))["text"])

    return agent


async def test_nested_decorator_with_block_and_tracked_step_replay_their_sdk_call() -> None:
    client = Client(store=MemoryStore())
    with FakeLLMServer(_numbered()) as server:
        live = await client.run_scenario_async(
            "record",
            _layered_agent(server.openai_url),
            [TraceAssert.max_steps(3), TraceAssert.max_llm_calls(1)],
            items=[ScenarioItem(name="layered", input="x")],
        )
    (item,) = live.results
    assert item.passed, item.failures
    assert item.context is not None
    steps = item.context.steps
    assert [s.name for s in steps] == ["lookup", "draft", "ask"]
    assert [s.parent_step_id for s in steps] == [None, steps[0].step_id, steps[1].step_id]
    with ConnectionCounter() as nowhere:
        replayed = await client.run_scenario_async(
            "replay",
            _layered_agent(nowhere.openai_url),
            [TraceAssert.no_errors(), TraceAssert.max_steps(3), TraceAssert.max_llm_calls(1)],
            items=[ScenarioItem(name="layered", trace_id=item.trace_id)],
        )
    (again,) = replayed.results
    assert again.passed, again.failures
    assert again.output == item.output == "answer 0"
    assert nowhere.connections == 0
