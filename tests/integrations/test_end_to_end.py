"""One trace model for both styles: an SDK-based agent under a giskard-style Scenario and
under a Veval-style scenario, checked with the same TraceAssert checks."""

from __future__ import annotations

from collections.abc import AsyncIterator

import openai
import pytest

from scenarist import (
    Client,
    RunContext,
    Scenario,
    ScenarioItem,
    StringMatching,
    Suite,
    TraceAssert,
    step,
)
from scenarist.store import MemoryStore
from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM

from .conftest import OPENAI_KEY

pytestmark = pytest.mark.anyio


def make_agent(server: FakeLLMServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key=OPENAI_KEY, base_url=server.openai_url, max_retries=0)


@pytest.fixture
async def llm(server: FakeLLMServer) -> AsyncIterator[openai.AsyncOpenAI]:
    async with make_agent(server) as client:
        yield client


async def test_scenario_target_calls_become_spans_that_trace_assert_checks(
    llm: openai.AsyncOpenAI,
) -> None:
    @step(kind="tool")
    def lookup(topic: str) -> str:
        return f"notes on {topic}"

    async def agent(inputs: str) -> str:
        notes = lookup(inputs)
        reply = await llm.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": f"{inputs}: {notes}"}]
        )
        return reply.choices[0].message.content or ""

    result = await (
        Scenario("sdk-agent")
        .interact("caching")
        .check(StringMatching(keyword="42"))
        .check(TraceAssert.tool_called("lookup"))
        .check(TraceAssert.max_llm_calls(1))
        .check(TraceAssert.max_cost(0.01))
        .check(TraceAssert.max_tokens(100))
        .interact("again")
        .check(TraceAssert.max_llm_calls(1, interaction=-1))
        .check(TraceAssert.max_llm_calls(2))
        .run(target=agent)
    )
    assert result.passed, result.format_failures()
    first, second = result.final_trace.interactions
    assert [s.kind for s in first.spans] == ["tool", "llm"]
    assert [s.kind for s in second.spans] == ["tool", "llm"]
    assert result.final_trace.tokens_in == 24
    assert result.cost_usd is not None and result.cost_usd > 0


async def test_parallel_suite_keeps_each_scenarios_llm_calls_apart() -> None:
    script = ScriptedLLM(lambda request: Reply(f"echo {request.text}"))
    with FakeLLMServer(script) as server:
        async with make_agent(server) as llm:

            async def agent(inputs: str) -> str:
                reply = await llm.chat.completions.create(
                    model="gpt-4o-mini", messages=[{"role": "user", "content": inputs}]
                )
                return reply.choices[0].message.content or ""

            suite = Suite(name="fan-out", target=agent)
            for i in range(12):
                suite.append(
                    Scenario(f"s{i}")
                    .interact(f"question {i}")
                    .check(StringMatching(keyword=f"question {i}"))
                    .check(TraceAssert.max_llm_calls(1))
                )
            result = await suite.run(parallel=True, max_concurrency=6, verbose=False)
    assert result.passed_count == 12, [r.format_failures() for r in result.results]
    for i, scenario in enumerate(result.results):
        (span,) = scenario.final_trace.spans
        assert f"question {i}" in str(span.input)


async def test_veval_style_item_sees_the_same_spans(llm: openai.AsyncOpenAI) -> None:
    async def agent(ctx: RunContext) -> str:
        reply = await llm.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": str(ctx.input)}]
        )
        return reply.choices[0].message.content or ""

    client = Client(store=MemoryStore())
    result = await client.run_scenario_async(
        "sdk-items",
        agent,
        [TraceAssert.no_errors(), TraceAssert.max_llm_calls(1), TraceAssert.max_cost(0.01)],
        items=[ScenarioItem(name="one", input="hello")],
    )
    assert result.passed, result.results[0].failures
    (span,) = result.results[0].record.spans  # type: ignore[union-attr]
    assert (span.kind, span.model, span.tokens_in, span.tokens_out) == ("llm", "gpt-4o-mini", 12, 5)


async def test_scenario_without_spans_when_outputs_are_static() -> None:
    result = await Scenario().interact("q", "static").run()
    assert result.final_trace.spans == []
