"""SDK calls inside tracked steps replay: a served step's nested calls are what it served,
a step that re-runs gets its nested calls from the recording, never from the network."""

from __future__ import annotations

from typing import Any

import pytest
from tests.replay.cassette_support import ConnectionCounter
from tests.replay.sdk_agents import support_agent

from scenarist import Client, ReplayOptions, ScenarioItem, TraceAssert
from scenarist.model.record import TraceRecord
from scenarist.store import MemoryStore
from scenarist.testing import FakeLLMServer, FakeRequest, Reply, ScriptedLLM

MOCKED = ReplayOptions(mock_llm_responses=True)  # Veval's default replays live

pytestmark = pytest.mark.anyio


def _script() -> ScriptedLLM:
    def reply(request: FakeRequest) -> Reply:
        text = "refunds" if request.text.startswith("classify") else "Refunds take 5 days."
        return Reply(text, tokens_in=20, tokens_out=5)

    return ScriptedLLM(reply)


async def _record(client: Client, **agent: Any) -> tuple[TraceRecord, str]:
    with FakeLLMServer(_script()) as server:
        url = server.openai_url
        output = await client.run_async("support", support_agent(url, **agent), input="refund?")
    (record,) = client.store.traces.values()  # type: ignore[attr-defined]
    return record, output


async def test_a_served_step_serves_its_nested_sdk_calls() -> None:
    client = Client(store=MemoryStore())
    record, live = await _record(client)
    assert [s.kind for s in record.spans].count("llm") == 2
    with ConnectionCounter() as nowhere:  # a replay reaching the network would connect here
        result = await client.run_scenario_async(
            "replay",
            support_agent(nowhere.openai_url),
            [TraceAssert.no_errors(), TraceAssert.max_llm_calls(2), TraceAssert.max_steps(3)],
            items=[ScenarioItem(name="production", trace_id=record.trace_id)],
        )
    item = result.results[0]
    assert item.passed, item.failures
    assert item.output == live == "Refunds take 5 days."
    assert nowhere.connections == 0
    replayed = item.record
    assert replayed is not None
    # the served steps carry what they served: their recorded calls, replayed, spending nothing
    assert [s.name for s in replayed.spans] == [s.name for s in record.spans]
    nested = [s for s in replayed.spans if s.kind == "llm"]
    assert [s.metadata["replayed"] for s in nested] == [True, True]
    assert all(s.cost_usd in (0.0, None) for s in nested)


async def test_a_step_that_reruns_gets_its_nested_calls_from_the_recording() -> None:
    client = Client(store=MemoryStore())
    record, _ = await _record(client)
    with ConnectionCounter() as nowhere:
        result = await client.replay_async(
            record.trace_id,
            support_agent(nowhere.openai_url, answer_suffix=" (new prompt)"),
            ReplayOptions(mock_llm_responses=True, on_divergence="live"),
        )
    assert nowhere.connections == 0
    assert result.output == "Refunds take 5 days."  # the recorded answer, though the step ran
    outcomes = [(b.step, b.outcome) for b in result.fidelity.bindings]
    assert outcomes == [("classify", "matched"), ("lookup", "matched"), ("answer", "live")]
    assert not any("Replay never made" in f for f in result.failures), result.failures
    answer = result.fidelity.bindings[2]
    assert answer.recorded_input != answer.actual_input  # the binding shows why it ran live
    assert result.fidelity.is_faithful  # Veval's rule: a step run live does not count against it


async def test_declared_usage_around_a_captured_call_is_counted_once() -> None:
    client = Client(store=MemoryStore())
    record, _ = await _record(client, declare_usage=True)
    trace = record.to_trace()
    # 'answer' declares 100+10 tokens and $0.50; its captured call (20+5) is not added
    assert record.cost_usd == pytest.approx(0.5 + record.spans[1].cost_usd)
    assert trace.tokens_in == 20 + 100 and trace.tokens_out == 5 + 10
    budgets = [
        TraceAssert.max_steps(3),
        TraceAssert.min_steps(3),
        TraceAssert.max_llm_calls(2),
        TraceAssert.max_tokens(135),
        TraceAssert.max_tokens(134),
    ]
    live = [b.run(trace).status for b in budgets]
    assert live == ["pass", "pass", "pass", "pass", "fail"]
    with ConnectionCounter() as nowhere:
        result = await client.replay_async(
            record.trace_id, support_agent(nowhere.openai_url), MOCKED
        )
    assert result.passed, result.failures
    assert result.replayed_record is not None
    replayed = result.replayed_record.to_trace()
    assert [b.run(replayed).status for b in budgets] == live
    message = TraceAssert.max_steps(2).run(replayed).message
    assert message == "MaxSteps: expected at most 2 steps, got 3"


async def test_an_sdk_message_a_step_returned_replays_as_that_object_from_stored_json() -> None:
    """A Veval agent hands the SDK's message object out of its step; replayed from the
    stored JSON, the step gives the object back, so ``message.content`` still works."""
    import openai

    client = Client(store=MemoryStore())

    def agent_for(url: str) -> Any:
        llm = openai.OpenAI(api_key="sk-test", base_url=url, max_retries=0)

        def agent(ctx: Any) -> str:
            def ask() -> Any:
                messages = [{"role": "user", "content": f"classify: {ctx.input}"}]
                reply = llm.chat.completions.create(model="gpt-4o-mini", messages=messages)
                return reply.choices[0].message

            return str(ctx.track_step("classify", ctx.input, ask).content)

        return agent

    with FakeLLMServer(_script()) as server:
        live = await client.run_async("support", agent_for(server.openai_url), input="refund?")
    (record,) = client.store.traces.values()  # type: ignore[attr-defined]
    stored = TraceRecord.model_validate_json(record.model_dump_json())
    with ConnectionCounter() as nowhere:
        result = await client.replay_async(stored, agent_for(nowhere.openai_url), MOCKED)
    assert result.passed, result.failures
    assert result.output == live == "refunds"
    assert nowhere.connections == 0
