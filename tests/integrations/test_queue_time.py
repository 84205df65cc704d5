"""Queue time is recorded apart from a call's own latency (time to first byte of a streamed
response), and ``MaxDuration`` leaves it out, so a budget does not depend on ``--parallel``.

The fake provider plays a single-worker model server (``workers=1``) that is slow to
answer (``Reply(delay_s=...)``); assertions compare recorded fields with each other, never
with the wall clock. The arithmetic of the timings is checked with an injected clock.
"""

from __future__ import annotations

import itertools
from typing import Any

import openai
import pytest

from scenarist import CheckStatus, MaxDuration, Scenario, Suite
from scenarist.model.results import ScenarioResult
from scenarist.testing import FakeLLMServer, Reply, ScriptedLLM
from scenarist.tracing.http import _llm_call


def streaming_agent(base_url: str, stream: bool = True) -> Any:
    async def agent(inputs: str) -> str:
        async with openai.AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0) as llm:
            if not stream:
                reply = await llm.chat.completions.create(
                    model="smollm2", messages=[{"role": "user", "content": inputs}]
                )
                return reply.choices[0].message.content or ""
            chunks = await llm.chat.completions.create(
                model="smollm2", messages=[{"role": "user", "content": inputs}], stream=True
            )
            return "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])

    return agent


def llm_span(result: ScenarioResult) -> Any:
    (span,) = result.final_trace.llm_calls
    return span


def test_an_injected_clock_gives_exact_ttfb_and_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = itertools.count(start=0.0, step=0.25)  # t0, headers, first token, ...
    monkeypatch.setattr(_llm_call, "_clock", lambda: next(ticks))
    with FakeLLMServer(ScriptedLLM([Reply("Hello there friend")])) as server:
        result = (
            Scenario("one").interact("hi", outputs=streaming_agent(server.openai_url)).run_sync()
        )
    metadata = llm_span(result).metadata
    assert metadata["ttfb_ms"] == 250.0  # headers read right after the start
    assert metadata["queue_ms"] == 250.0
    assert metadata["ttft_ms"] == 500.0


def test_a_non_streamed_answer_has_no_queue_time() -> None:
    """Its headers come with the whole body: waiting and working cannot be told apart."""
    with FakeLLMServer(ScriptedLLM([Reply("Hello")])) as server:
        result = (
            Scenario("whole")
            .interact("hi", outputs=streaming_agent(server.openai_url, stream=False))
            .run_sync()
        )
    metadata = llm_span(result).metadata
    assert "ttfb_ms" in metadata and "queue_ms" not in metadata


def budgeted(base_url: str, name: str, **options: Any) -> Scenario[Any, Any]:
    return (
        Scenario(name)
        .interact(f"question {name}", outputs=streaming_agent(base_url))
        .check(MaxDuration(max_ms=60_000, measure="wall", **options))
    )


def test_max_duration_leaves_out_the_queue_at_a_single_worker_server() -> None:
    script = ScriptedLLM(default=Reply("An answer in a few words", delay_s=0.2))
    with FakeLLMServer(script, workers=1) as server:
        suite = Suite(
            name="queue",
            scenarios=[budgeted(server.openai_url, n) for n in ("a", "b", "c")]
            + [budgeted(server.openai_url, "raw", exclude_queued=False)],
        )
        result = suite.run_sync(parallel=True, max_concurrency=4, verbose=False)
    assert len(server.requests) == 4
    for scenario in result.results:
        span = llm_span(scenario)
        assert span.metadata["queue_ms"] == span.metadata["ttfb_ms"] > 0
        check = scenario.steps[0].results[0]
        assert check.status is CheckStatus.PASS
        interaction = scenario.final_trace.interactions[0]
        details = check.details
        assert details["wall_ms"] == interaction.duration_ms
        assert details["queued_ms"] == pytest.approx(
            min(span.metadata["queue_ms"], interaction.duration_ms), abs=1e-3
        )
        counted = {m.name: m.value for m in check.metrics}["duration_ms"]
        assert details["counted_ms"] == counted
        if scenario.scenario_name == "raw":
            assert counted == details["wall_ms"]
        else:
            assert counted == pytest.approx(details["wall_ms"] - details["queued_ms"])
            assert "queued left out" in (check.message or "")


def test_overlapping_waits_count_once() -> None:
    from datetime import UTC, datetime, timedelta

    from scenarist.checks.spans import _queued_ms
    from scenarist.model.trace import Span

    start = datetime(2026, 1, 1, tzinfo=UTC)

    def call(offset_ms: int, queue_ms: float) -> Span:
        return Span(
            span_id=str(offset_ms),
            name="openai.chat",
            kind="llm",
            started_at=start + timedelta(milliseconds=offset_ms),
            metadata={"queue_ms": queue_ms},
        )

    parent = Span(span_id="p", name="agent", children=[call(0, 100.0), call(50, 100.0)])
    assert _queued_ms([parent, call(500, 10.0)]) == pytest.approx(160.0)


def test_workers_must_be_positive() -> None:
    with pytest.raises(ValueError, match="workers must be at least 1"):
        FakeLLMServer(workers=0)
