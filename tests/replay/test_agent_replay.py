"""Replaying an agent against a recording: ``compare_with_recording`` and a missing trace."""

from __future__ import annotations

import pytest

from scenarist import Client, ReplayOptions, RunContext, SnapshotOptions, TraceRecord
from scenarist.errors import UserError
from scenarist.store import MemoryStore

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
    result = await client.replay_async(record.trace_id, _steps("plan", "answer"))
    assert result.passed
    assert result.recording_diff is None


async def test_replay_compare_with_recording_reports_no_change_for_a_faithful_replay(
    recorded: tuple[Client, TraceRecord],
) -> None:
    client, record = recorded
    options = ReplayOptions(compare_with_recording=True)
    result = await client.replay_async(record.trace_id, _steps("plan", "answer"), options)
    assert result.passed
    assert result.recording_diff is not None
    assert not result.recording_diff.has_changes
    assert (result.recording_diff.baseline_steps, result.recording_diff.current_steps) == (2, 2)


async def test_replay_compare_with_recording_reports_a_dropped_step(
    recorded: tuple[Client, TraceRecord],
) -> None:
    client, record = recorded
    options = ReplayOptions(compare_with_recording=SnapshotOptions(), on_divergence="serve")
    result = await client.replay_async(record.trace_id, _steps("plan"), options)
    assert result.recording_diff is not None
    assert [(c.kind, c.step_name) for c in result.recording_diff.changes] == [("removed", "answer")]
    assert "removed 'answer'" in result.recording_diff.summary()
    # the unused recording fails the replay as before; the diff is the report beside it
    assert not result.passed
    assert any("Replay never called 1 recorded step(s)" in f for f in result.failures)


async def test_replay_compare_with_recording_rejects_a_value_it_cannot_use() -> None:
    with pytest.raises(ValueError, match="compare_with_recording"):
        ReplayOptions(compare_with_recording="yes please")


async def test_replay_of_an_unknown_trace_id_names_it() -> None:
    client = Client(store=MemoryStore())
    with pytest.raises(UserError, match=r"trace 'nope' was not found in the store"):
        await client.replay_async("nope", _steps("plan"))
