"""Replaying an agent against a recording: ``compare_with_recording`` and a missing trace."""

from __future__ import annotations

import httpx2
import pytest

from scenarist import Client, ReplayOptions, RunContext, SnapshotOptions, TraceRecord
from scenarist.errors import UserError
from scenarist.store import MemoryStore
from scenarist.testing import FakeLLMServer, ScriptedLLM

MOCKED = ReplayOptions(mock_llm_responses=True)  # Veval's default replays live

pytestmark = pytest.mark.anyio


def _steps(*names: str):  # type: ignore[no-untyped-def]
    def agent(ctx: RunContext) -> str:
        for name in names:
            ctx.track_step(name, {"q": ctx.input}, lambda handle, name=name: f"{name} done")
        return "ok"

    return agent


@pytest.fixture
async def recorded() -> tuple[Client, TraceRecord]:
    client = Client(store=MemoryStore())
    await client.run_async("support", _steps("plan", "answer"), input="refund?")
    (record,) = client.store.traces.values()  # type: ignore[attr-defined]
    return client, record


async def test_replay_without_compare_with_recording_has_no_diff(
    recorded: tuple[Client, TraceRecord],
) -> None:
    client, record = recorded
    result = await client.replay_async(record.trace_id, _steps("plan", "answer"), MOCKED)
    assert result.passed
    assert result.recording_diff is None


async def test_replay_compare_with_recording_reports_no_change_for_a_faithful_replay(
    recorded: tuple[Client, TraceRecord],
) -> None:
    client, record = recorded
    options = ReplayOptions(mock_llm_responses=True, compare_with_recording=True)
    result = await client.replay_async(record.trace_id, _steps("plan", "answer"), options)
    assert result.passed
    assert result.recording_diff is not None
    assert not result.recording_diff.has_changes
    assert (result.recording_diff.baseline_steps, result.recording_diff.current_steps) == (2, 2)


async def test_replay_compare_with_recording_reports_a_dropped_step(
    recorded: tuple[Client, TraceRecord],
) -> None:
    client, record = recorded
    options = ReplayOptions(
        mock_llm_responses=True, compare_with_recording=SnapshotOptions(), on_divergence="serve"
    )
    result = await client.replay_async(record.trace_id, _steps("plan"), options)
    assert result.recording_diff is not None
    assert [(c.kind, c.step_name) for c in result.recording_diff.changes] == [("Removed", "answer")]
    assert "removed 'answer'" in result.recording_diff.summary()
    # the unused recording fails the replay as before; the diff is the report beside it
    assert not result.passed
    assert any("Replay never called 1 recorded step(s)" in f for f in result.failures)


async def test_replay_compare_with_recording_rejects_a_value_it_cannot_use() -> None:
    with pytest.raises(ValueError, match="compare_with_recording"):
        ReplayOptions(mock_llm_responses=True, compare_with_recording="yes please")


async def test_replay_of_an_unknown_trace_id_names_it() -> None:
    client = Client(store=MemoryStore())
    with pytest.raises(UserError, match=r"trace 'nope' was not found in the store"):
        await client.replay_async("nope", _steps("plan"), MOCKED)


def _answer(text: str, *, call_url: str | None = None):  # type: ignore[no-untyped-def]
    """An agent whose one llm step answers ``text`` (after a model call, when given a URL)."""

    def agent(ctx: RunContext) -> str:
        def answer(handle) -> str:  # type: ignore[no-untyped-def]
            handle.set_meta("type", "llm")
            if call_url is not None:
                body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "q"}]}
                httpx2.post(call_url + "/chat/completions", json=body)
            return text

        return str(ctx.track_step("answer", ctx.input, answer))

    return agent


ANSWERED = TraceRecord.from_dict(
    {
        "trace_id": "tr_answered",
        "agent_name": "support",
        "input": "refund?",
        "output": "recorded answer",
        "status": "success",
        "steps": [
            {"name": "answer", "type": "llm", "input": "refund?", "output": "recorded answer"}
        ],
    }
)


async def test_replay_that_drifts_from_its_recording_fails_naming_the_changes() -> None:
    client = Client(store=MemoryStore())
    compared = SnapshotOptions(compare_outputs=True)
    live = ReplayOptions(mock_llm_responses=True, live_model_steps=True)
    assert (await client.replay_async(ANSWERED, _answer("a new answer"), live)).passed
    options = live.model_copy(update={"compare_with_recording": compared})
    result = await client.replay_async(ANSWERED, _answer("a new answer"), options)
    assert not result.passed
    assert result.failures == [
        "Replay drifted from its recording — "
        + result.recording_diff.summary("recording tr_answered")  # type: ignore[union-attr]
    ]
    assert result.failures[0].splitlines()[1] == "  ~ output changed for 'answer'"


async def test_replay_compares_tracked_steps_not_the_captured_calls_inside_them() -> None:
    """A recording made without the capture (Veval's) has no call spans: the live model
    step's captured call is no added step."""
    client = Client(store=MemoryStore())
    options = ReplayOptions(
        mock_llm_responses=True, live_model_steps=True, compare_with_recording=True
    )
    with FakeLLMServer(ScriptedLLM(default="fresh")) as server:
        agent = _answer("recorded answer", call_url=server.openai_url)
        result = await client.replay_async(ANSWERED, agent, options)
    assert len(server.requests) == 1
    assert result.passed, result.failures
    assert result.recording_diff is not None and not result.recording_diff.has_changes
    assert [s.kind for s in result.replayed_record.spans] == ["llm", "llm"]  # type: ignore[union-attr]
