"""A Veval-style scenario run with a budget: items the budget did not start fail with
``BUDGET: not started ...`` (Veval's item model has only passed/failures) and show as
BUDGET in scenarist's reports; trace-backed items replay, so they cost nothing live."""

from __future__ import annotations

import httpx
import pytest

from scenarist import ScenarioItem
from scenarist.providers.pricing import cost_usd
from scenarist.store import MemoryStore
from scenarist.testing import FakeLLMServer, Reply
from scenarist.tracing import RunContext
from scenarist.veval.client import Client

pytestmark = pytest.mark.anyio

TOKENS = 1000
CALL_USD = cost_usd("openai", "gpt-4o-mini", TOKENS, TOKENS)


async def test_items_past_the_budget_are_not_started() -> None:
    assert CALL_USD is not None
    with FakeLLMServer(lambda request: Reply("hi", tokens_in=TOKENS, tokens_out=TOKENS)) as server:

        async def agent(ctx: RunContext) -> str:
            body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": ctx.input}]}
            async with httpx.AsyncClient() as http:
                reply = await http.post(server.openai_url + "/chat/completions", json=body)
            return str(reply.json()["choices"][0]["message"]["content"])

        client = Client(store=MemoryStore())
        items = [ScenarioItem(name=f"i{n}", input=f"q{n}") for n in range(5)]
        run = await client.run_scenario_async(
            "paid", agent, items=items, max_concurrency=3, budget=CALL_USD * 2.5
        )
        assert len(server.requests) == 2  # three workers, a budget for two calls
    assert [r.passed for r in run.results].count(True) == 2
    stopped = [r for r in run.results if not r.passed]
    assert len(stopped) == 3
    assert all(r.failures[0].startswith("BUDGET: not started: the run's budget") for r in stopped)
    outcomes = [r.outcome for r in run.to_scenario_results()]
    assert sorted(outcomes) == ["budget", "budget", "budget", "pass", "pass"]


async def test_trace_backed_items_replay_within_a_zero_budget() -> None:
    with FakeLLMServer(lambda request: Reply("hi", tokens_in=TOKENS, tokens_out=TOKENS)) as server:

        def agent(ctx: RunContext) -> str:
            body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "q"}]}
            with httpx.Client() as http:
                reply = http.post(server.openai_url + "/chat/completions", json=body)
            return str(reply.json()["choices"][0]["message"]["content"])

        client = Client(store=MemoryStore())
        await client.run_async("paid", agent, input="q")
        (recorded,) = client.store.traces.values()  # type: ignore[attr-defined]
        sent = len(server.requests)
        items = [
            ScenarioItem(name="replayed", trace_id=recorded.trace_id),
            ScenarioItem(name="live", input="q"),  # nothing known of its cost, nothing left
        ]
        run = await client.run_scenario_async("paid", agent, items=items, budget="0usd")
        assert len(server.requests) == sent  # replayed: nothing went to the provider
    assert [r.passed for r in run.results] == [True, False], run.results[0].failures
    assert run.results[1].failures[0].startswith("BUDGET: not started")
