"""A recorded trace is a cassette: an SDK agent replays a production trace with no code
change, no tracked steps, and no network."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from scenarist import Client, RunContext, ScenarioItem, TraceAssert
from scenarist.store import MemoryStore
from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM

pytestmark = pytest.mark.anyio


def make_agent(base_url: str, *, stream: bool = False, suffix: str = "") -> Any:
    async def agent(ctx: RunContext) -> str:
        async with openai.AsyncOpenAI(api_key="sk-test", base_url=base_url, max_retries=0) as llm:
            messages = [{"role": "user", "content": f"{ctx.input}{suffix}"}]
            if not stream:
                reply = await llm.chat.completions.create(model="gpt-4o-mini", messages=messages)  # type: ignore[arg-type]
                return reply.choices[0].message.content or ""
            chunks = await llm.chat.completions.create(
                model="gpt-4o-mini",
                messages=messages,  # type: ignore[arg-type]
                stream=True,
                stream_options={"include_usage": True},
            )
            return "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])

    return agent


@pytest.mark.parametrize("stream", [False, True])
async def test_trace_backed_item_replays_sdk_calls_after_the_server_is_gone(stream: bool) -> None:
    client = Client(store=MemoryStore())
    script = ScriptedLLM([Reply("Refunds take 5 days.", tokens_in=20, tokens_out=6)])
    with FakeLLMServer(script) as server:
        url = server.openai_url
        live = await client.run_async("support", make_agent(url, stream=stream), input="refund?")
        served_before = len(server.requests)
    # the server is stopped: any network call would fail
    (record,) = client.store.traces.values()  # type: ignore[attr-defined]
    result = await client.run_scenario_async(
        "replay-sdk",
        make_agent(url, stream=stream),
        [TraceAssert.no_errors(), TraceAssert.max_llm_calls(1), TraceAssert.max_cost(0.01)],
        items=[ScenarioItem(name="production", trace_id=record.trace_id)],
    )
    item = result.results[0]
    assert item.passed, item.failures
    assert item.output == live == "Refunds take 5 days."
    assert served_before == 1
    (span,) = item.record.spans  # type: ignore[union-attr]
    assert span.metadata["replayed"] is True
    assert span.cost_usd == 0.0
    assert span.metadata["recorded_cost_usd"] == record.spans[0].cost_usd


async def test_a_changed_prompt_fails_the_item_and_makes_no_call() -> None:
    client = Client(store=MemoryStore())
    with FakeLLMServer(ScriptedLLM([Reply("ok")])) as server:
        url = server.openai_url
        await client.run_async("support", make_agent(url), input="refund?")
        (record,) = client.store.traces.values()  # type: ignore[attr-defined]
        before = len(server.requests)
        result = await client.run_scenario_async(
            "replay-drift",
            make_agent(url, suffix=" (new prompt)"),
            items=[ScenarioItem(name="drifted", trace_id=record.trace_id)],
        )
        assert len(server.requests) == before  # no live call, even with the server up
    failures = result.results[0].failures
    assert any("no recorded LLM call matches" in f for f in failures), failures
    assert failures[0].startswith("Replay threw exception: "), failures
