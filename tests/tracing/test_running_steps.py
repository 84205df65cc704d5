"""A tracked step cancelled by the agent's own timeout stays ``running`` (Veval's
``track_step`` / ``track_step_async``), and every reader of a trace accepts such a step:
the stored record and both wire forms, the dashboard's trace page, the OpenTelemetry
export, snapshots, and a replay of the recording. ``close_cancelled=True`` keeps ours:
the step is closed as an error (``cancelled``), as ``step(...)`` always does."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest

from scenarist import RunContext, ScenarioItem, TraceAssert
from scenarist.model.record import TraceRecord
from scenarist.replay.step_replay import ReplayOptions
from scenarist.testing import TestClient

pytestmark = pytest.mark.anyio


async def _slow(handle: Any) -> str:
    handle.set_meta("type", "llm")
    await asyncio.sleep(10)
    return "late"


async def agent(ctx: RunContext) -> str:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(ctx.track_step_async("ask", ctx.input, _slow), 0.01)
    return ctx.track_step("fallback", ctx.input, lambda: "sorry, too slow")


async def _run(**kwargs: Any) -> RunContext:
    seen: dict[str, RunContext] = {}

    async def wrapped(ctx: RunContext) -> str:
        seen["ctx"] = ctx
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(ctx.track_step_async("ask", ctx.input, _slow, **kwargs), 0.01)
        return ctx.track_step("fallback", ctx.input, lambda: "sorry, too slow")

    await TestClient().run_async("support", wrapped, input="q")
    return seen["ctx"]


async def test_track_step_async_cancelled_by_a_timeout_stays_running() -> None:
    ctx = await _run()
    ask, fallback = ctx.steps
    assert (ask.status, ask.error, ask.ended_at, ask.duration_ms) == ("running", None, None, None)
    assert fallback.status == "success" and fallback.parent_id is None


async def test_close_cancelled_closes_the_step_as_cancelled() -> None:
    ctx = await _run(close_cancelled=True)
    ask = ctx.steps[0]
    assert ask.status == "error"
    assert ask.error is not None and ask.error.message == "cancelled"


def test_track_step_interrupted_stays_running_unless_close_cancelled() -> None:
    def interrupted() -> None:
        raise KeyboardInterrupt

    for close, status in ((False, "running"), (True, "error")):
        ctx = RunContext()
        with ctx.recorder, pytest.raises(KeyboardInterrupt):
            ctx.track_step("wait", None, interrupted, close_cancelled=close)
        assert ctx.steps[0].status == status
        # the step is no longer the current span: the next one is a root, not its child
        with ctx.recorder:
            ctx.track_step("next", None, lambda: 1)
        assert ctx.steps[-1].parent_id is None


async def test_a_scenario_item_with_a_running_step_passes_no_errors() -> None:
    result = await TestClient().run_scenario_async(
        "support", agent, [TraceAssert.no_errors()], items=[ScenarioItem(input="q")]
    )
    assert result.passed
    assert [s.status for s in result.results[0].context.steps] == ["running", "success"]


async def test_every_reader_accepts_a_running_step(tmp_path: Path) -> None:
    from scenarist.model.veval_wire import to_veval
    from scenarist.otel.export import to_otlp_json
    from scenarist.replay.snapshots import SnapshotData
    from scenarist.server.dashboard.pages import trace_page
    from scenarist.store.sql.store import SqlStore

    ctx = await _run()
    record = ctx.to_record()
    assert record.model_validate_json(record.model_dump_json()).steps[0].status == "running"
    wire = to_veval(record)
    assert wire["steps"][0]["status"] == "running" and wire["steps"][0]["completed_at"] is None
    assert TraceRecord.from_dict(wire).steps[0].status == "running"
    (exported,) = to_otlp_json([record])["resourceSpans"][0]["scopeSpans"][0]["spans"][:1]
    assert exported["status"] == {"code": 0} and "endTimeUnixNano" not in exported
    assert [s.name for s in SnapshotData.from_record(record, name="base").steps] == [
        "ask",
        "fallback",
    ]

    store = SqlStore(f"sqlite:///{tmp_path / 'runs.db'}")
    try:
        await store.save_trace(record)
        page = await trace_page(store, record.trace_id)
    finally:
        await store.close()
    assert page is not None
    rows = page.waterfall.rows
    assert next((r.name, r.status, r.duration_ms) for r in rows) == ("ask", "running", None)

    mocked = ReplayOptions(mock_llm_responses=True)  # Veval's default replays live
    replayed = await TestClient().replay_async(record, agent, mocked)
    assert replayed.passed, replayed.failures
    assert [s.status for s in replayed.replayed_context.steps] == ["success", "success"]


def test_a_run_log_carries_a_running_span(tmp_path: Path) -> None:
    """A giskard-style target whose traced code leaves a span open (as a cancelled
    ``track_step`` does): the run log writes and reads it back as ``running``."""
    from scenarist import Scenario, Suite
    from scenarist.formats.runlog import read_jsonl, run_log_from_suite_result, write_jsonl
    from scenarist.tracing.recorder import current_recorder

    def target(question: str) -> str:
        recorder = current_recorder()
        assert recorder is not None
        recorder.open("ask", "llm", question)  # never closed
        return "sorry, too slow"

    result = Suite(name="support", scenarios=[Scenario("slow").interact("q", target)]).run_sync()
    path = tmp_path / "run.jsonl"
    write_jsonl(run_log_from_suite_result(result), path)
    (scenario,) = read_jsonl(path).scenarios
    spans = scenario.result.final_trace.interactions[0].spans
    assert [(s.name, s.status, s.ended_at) for s in spans] == [("ask", "running", None)]
