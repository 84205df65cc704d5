from __future__ import annotations

from typing import Any

import openai
import pytest

from scenarist import RunContext, ScenarioItem, TraceAssert
from scenarist.testing import FakeLLMServer, LiveCallBlockedError, Reply, ScriptedLLM, TestClient
from scenarist.tracing import TraceRecord

pytestmark = pytest.mark.anyio


def sdk_agent(url: str) -> Any:
    async def agent(ctx: RunContext) -> str:
        async with openai.AsyncOpenAI(api_key="sk-test", base_url=url, max_retries=0) as llm:
            reply = await llm.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": str(ctx.input)}]
            )
            return reply.choices[0].message.content or ""

    return agent


async def test_live_llm_calls_are_blocked_and_named() -> None:
    client = TestClient()
    with FakeLLMServer(ScriptedLLM([Reply("live answer")])) as server:
        result = await client.run_scenario_async(
            "blocked", sdk_agent(server.openai_url), items=[ScenarioItem(input="hi")]
        )
        assert server.requests == []  # nothing reached the provider
    (failure,) = result.results[0].failures
    assert failure.startswith("Agent threw exception: TestClient blocked a live LLM call: POST")
    assert "model 'gpt-4o-mini'" in failure
    with pytest.raises(LiveCallBlockedError):
        await client.run_async("blocked", sdk_agent("http://127.0.0.1:9/v1"), input="x")


async def test_live_calls_can_be_allowed() -> None:
    client = TestClient(allow_live_llm_calls=True)
    with FakeLLMServer(ScriptedLLM([Reply("live answer")])) as server:
        assert (
            await client.run_async("allowed", sdk_agent(server.openai_url), input="hi")
            == "live answer"
        )


async def test_with_replay_serves_recorded_traces_by_id() -> None:
    recorder = TestClient(allow_live_llm_calls=True)
    with FakeLLMServer(ScriptedLLM([Reply("recorded answer")])) as server:
        url = server.openai_url
        await recorder.run_async("support", sdk_agent(url), input="refund?")
    (record,) = recorder.store.traces.values()  # type: ignore[attr-defined]

    client = TestClient().with_replay(
        record, record.model_dump(mode="json") | {"trace_id": "tr_copy"}
    )
    result = await client.run_scenario_async(
        "replays",
        sdk_agent(url),
        [TraceAssert.no_errors()],
        items=[ScenarioItem(trace_id=record.trace_id), ScenarioItem(trace_id="tr_copy")],
    )
    assert [r.passed for r in result.results] == [True, True], [r.failures for r in result.results]
    assert [r.output for r in result.results] == ["recorded answer", "recorded answer"]
    assert isinstance(await client.get_trace_async("tr_copy"), TraceRecord)


async def _two_steps(ctx: RunContext) -> Any:
    intent = await ctx.track_step_async("classify", ctx.input, lambda: "live intent")
    return await ctx.track_step_async("answer", intent, lambda: "live answer")


_RECORDED = {
    "trace_id": "tr_served",
    "input": "Where is my refund?",
    "status": "success",
    "steps": [
        {"step_id": "a", "name": "classify", "input": "Where is my refund?", "output": "refund"},
        {"step_id": "b", "name": "answer", "input": "refund", "output": "on its way"},
    ],
}


async def test_with_replay_serves_a_changed_input_and_notes_the_divergence() -> None:
    """Veval's documented use: the double built with a recording, the service called with an
    input of the test's own."""
    client = TestClient().with_replay(_RECORDED)
    seen: list[RunContext] = []

    async def agent(ctx: RunContext) -> Any:
        seen.append(ctx)
        return await _two_steps(ctx)

    assert await client.run_async("support", agent, input="test input") == "on its way"
    fidelity = seen[0].replay_fidelity
    assert [(b.step_name, b.kind) for b in fidelity.bindings] == [
        ("classify", "diverged"),
        ("answer", "matched"),
    ]
    assert (client.last_status, fidelity.is_faithful) == ("success", False)


async def test_with_replay_on_divergence_fail_keeps_the_scenario_policy() -> None:
    from scenarist.errors import ReplayDivergenceError

    client = TestClient().with_replay(_RECORDED, on_divergence="fail")
    with pytest.raises(ReplayDivergenceError, match="Replay diverged at step 'classify'"):
        await client.run_async("support", _two_steps, input="test input")
    assert client.last_status == "error"
    # a trace-backed scenario item fails on divergence by default, as the spec says
    changed = TestClient().with_replay(_RECORDED | {"input": "test input"})
    result = await changed.run_scenario_async(
        "support", _two_steps, items=[ScenarioItem(trace_id="tr_served")]
    )
    assert result.results[0].failures[0].startswith("Replay threw exception: Replay diverged")


async def test_replay_async_stores_no_trace_but_scenario_items_do() -> None:
    client = TestClient().with_replay(_RECORDED)
    replay = await client.replay_async("tr_served", _two_steps)
    assert replay.passed and replay.replayed_record is not None
    assert await client.get_trace_async(replay.replayed_record.trace_id) is None
    assert list(client.store.traces) == ["tr_served"]  # type: ignore[attr-defined]
    result = await client.run_scenario_async(
        "support", _two_steps, items=[ScenarioItem(trace_id="tr_served")]
    )
    assert await client.get_trace_async(result.results[0].trace_id or "") is not None


async def test_with_snapshot_makes_snapshots_available() -> None:
    client = TestClient()

    async def agent(ctx: RunContext) -> str:
        await ctx.track_step_async("classify", ctx.input, lambda: "billing")
        return "ok"

    await client.run_async("snap", agent, input="q")
    (record,) = client.store.traces.values()  # type: ignore[attr-defined]
    client.with_snapshot("baseline", record)
    same = await client.compare_snapshot_async("baseline", record)
    assert not same.has_changes


async def _polite_agent(ctx: RunContext) -> str:
    return f"Dear customer, {ctx.input}"


async def test_judge_mocks_are_consumed_in_order_per_criteria() -> None:
    client = (
        TestClient()
        .with_judge_mock("is polite", passed=True, score=0.9, reasoning="greets the customer")
        .with_judge_mock("is polite", passed=False, score=0.2, reasoning="curt")
    )
    result = await client.run_scenario_async(
        "judged",
        _polite_agent,
        [TraceAssert.judge(client, "is polite")],  # Veval's form, client first
        items=[ScenarioItem(input="a"), ScenarioItem(input="b"), ScenarioItem(input="c")],
    )
    assert [r.passed for r in result.results] == [True, False, False]
    assert result.results[1].failures == ["Judge: is polite (score 0.20) — curt"]
    # Veval's text, no [ERROR] prefix: it already says the judge could not judge
    assert result.results[2].failures == [
        "Judge: evaluation failed — Replay mode: no judge mock for criteria 'is polite'. Call "
        "with_judge_mock(...) before running a scenario/replay that uses TraceAssert.judge — "
        "this would have made a real, billed LLM call."
    ]
    judgments = [r.context.judgments for r in result.results]
    assert judgments[1] == [
        {"criteria": "is polite", "score": 0.2, "passed": False, "reasoning": "curt"}
    ]
    assert judgments[2] == []  # no verdict, no judgment (as in Veval)


async def test_a_mocked_verdict_decides_whatever_the_threshold_and_keeps_empty_reasoning() -> None:
    client = TestClient().with_judge_mock("accurate", passed=False, score=0.9)
    result = await client.run_scenario_async(
        "judged",
        _polite_agent,
        [TraceAssert.judge(client, "accurate", threshold=0.5)],
        items=[ScenarioItem(input="a")],
    )
    assert result.results[0].failures == ["Judge: accurate (score 0.90) — "]


async def test_a_judge_given_the_test_client_answers_from_its_mocks_anywhere() -> None:
    """Outside the client's scenarios too (the check run on its own): never a real call."""
    from scenarist.engine.runner import run_check

    client = TestClient().with_judge_mock("concise", passed=False, score=0.4, reasoning="Rambles.")
    ctx = RunContext(input="q")
    ctx.output = "a long answer"
    trace = ctx.to_record().to_trace()
    verdict = await run_check(TraceAssert.judge(client, "concise"), trace, return_exception=True)
    assert verdict.message == "Judge: concise (score 0.40) — Rambles."
    missing = await run_check(TraceAssert.judge(client, "concise"), trace, return_exception=True)
    assert missing.status == "error"
    assert "no judge mock for criteria 'concise'" in (missing.message or "")


async def test_client_judge_async_returns_veval_shaped_verdicts() -> None:
    client = TestClient().with_judge_mock(
        "answers the question", passed=True, score=1.0, reasoning="yes"
    )
    ctx = RunContext(input="q")
    ctx.output = "a"
    verdict = await client.judge_async("answers the question", ctx)
    assert verdict == {
        "passed": True,
        "score": 1.0,
        "reasoning": "yes",
        "status": "pass",
    }
    with pytest.raises(RuntimeError, match="no judge mock for criteria 'answers the question'"):
        await client.judge_async("answers the question", ctx)
