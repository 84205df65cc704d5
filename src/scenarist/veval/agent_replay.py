"""Replaying an agent against a recorded run: load the recording, drive the replay, judge.

:func:`replay_recording` runs an agent once more with a recording loaded: its tracked
steps are bound and served by :class:`~scenarist.replay.step_replay.Replayer`, its LLM
HTTP calls by :class:`~scenarist.replay.recorded_calls.RecordedCalls`, and a live call is
never made in their place. Divergences, misses, unused recordings and the assertions
become the :class:`~scenarist.replay.step_replay.ReplayResult`'s failures. With
``ReplayOptions.compare_with_recording`` the replayed steps are also compared with the
recorded ones (:func:`~scenarist.replay.snapshots.compare_snapshots`) into
``recording_diff``, and a drift fails the replay (as in Veval). ``client.replay_async``
and trace-backed scenario items both come here. A trace imported from OpenTelemetry has
its LLM calls served by :class:`~scenarist.otel.replay.OtelCalls` (its other spans are a
record, not steps to bind).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from scenarist.errors import EmptyRecordingError, UserError
from scenarist.model.certificate import GUARANTEE_KEY, ReplayCertificate
from scenarist.model.record import TraceRecord
from scenarist.replay.step_replay import Replayer, ReplayFidelity, ReplayOptions, ReplayResult
from scenarist.tracing.context import RunContext
from scenarist.veval.assertions import Assertion, failures_of

if TYPE_CHECKING:
    from scenarist.otel.replay import OtelCalls
    from scenarist.replay.snapshot_diff import SnapshotDiff
    from scenarist.store.base import Store
    from scenarist.veval.execution import Agent, Harness

__all__ = ["load_recording", "replay_problem", "replay_recording"]


def _read_recording(path: Path) -> TraceRecord:
    return TraceRecord.model_validate_json(path.read_text(encoding="utf-8"))


async def load_recording(store: Store, trace: TraceRecord | Path | str) -> TraceRecord | None:
    """The recorded run ``trace`` names: itself, a JSON file, or a trace id in ``store``."""
    if isinstance(trace, TraceRecord):
        return trace
    if isinstance(trace, Path):  # a small local file, read once per item
        return _read_recording(trace)
    return await store.get_trace(trace)


async def require_recording(store: Store, trace: TraceRecord | str) -> TraceRecord:
    """:func:`load_recording`, or ``UserError`` when the trace id is not in the store."""
    recording = await load_recording(store, trace)
    if recording is None:
        raise UserError(f"trace {trace!r} was not found in the store; check the trace id")
    return recording


def replay_problem(recording: TraceRecord) -> str | None:
    """Why a trace-backed item of ``recording`` would error instead of replaying (no
    steps; an OpenTelemetry trace without its LLM calls' content), ``None`` when it can
    replay: the trace page and ``scenarist items add`` say it before anyone runs it."""
    from scenarist.errors import EmptyRecordingError

    if not recording.steps:
        return str(EmptyRecordingError.for_trace(recording.trace_id))
    if recording.metadata.get("source") == "otel":
        from scenarist.otel.replay import content_problem

        return content_problem(recording)
    return None


def _no_steps(recording: TraceRecord) -> ReplayResult:
    """A trace-backed item's failure for an empty recording (spec 04 §2: the item fails,
    where Veval's run_scenario raises; ``replay_async`` raises, as Veval's does)."""
    return ReplayResult(
        trace_id=recording.trace_id,
        status="error",
        failures=[str(EmptyRecordingError.for_trace(recording.trace_id))],
    )


def _recording_diff(
    recording: TraceRecord, replayed: TraceRecord, options: ReplayOptions
) -> SnapshotDiff | None:
    """The step-sequence diff asked for by ``compare_with_recording`` (else ``None``)."""
    wanted = options.compare_with_recording
    if wanted is None or wanted is False:
        return None
    from scenarist.replay.snapshots import SnapshotData, compare_snapshots

    baseline = SnapshotData.from_record(recording, name=f"recording {recording.trace_id}")
    return compare_snapshots(baseline, replayed, None if wanted is True else wanted)


def _failures(
    replayer: Replayer, error: BaseException | None, refused: list[str], options: ReplayOptions
) -> list[str]:
    """Veval's order: the agent's exception (``Replay threw exception: ...``), else the
    binding failure (recorded steps never called; with live model steps, none run live).
    Then what the agent swallowed: a miss, a divergence or a refused call is a failure
    even when the agent caught it (a replay fails closed)."""
    failures: list[str] = []
    raised = None if error is None else str(error) or type(error).__name__
    if raised is not None:
        failures.append(f"Replay threw exception: {raised}")
    unused = replayer.finish()  # fills the fidelity report either way
    if raised is None and options.live_model_steps:
        no_live = replayer.no_live_step_message()
        if no_live is not None:
            failures.append(no_live)
    elif raised is None and unused:
        failures.append(replayer.unused_message())
    failures.extend(m for m in dict.fromkeys([*replayer.errors, *refused]) if m != raised)
    return failures


async def _live_rerun(
    harness: Harness,
    recording: TraceRecord,
    agent: Agent,
    options: ReplayOptions,
    assertions: list[Assertion],
) -> ReplayResult:
    """Veval's replay without mocks: the agent runs again on the recorded input, live,
    marked as a replay; nothing is bound, so there is no fidelity report."""
    ctx = RunContext(input=recording.input, agent_name=recording.agent_name, is_replay=True)
    ctx.set_metadata("replay_of", recording.trace_id)
    ctx.set_metadata(GUARANTEE_KEY, "none")
    record, error = await harness.execute(ctx, agent)
    failures: list[str] = []
    if error is not None:
        failures.append(f"Replay threw exception: {str(error) or type(error).__name__}")
    with harness.assertion_scope():
        failures.extend(await failures_of(ctx, record, assertions))
    certificate = ReplayCertificate.from_spans(record.steps, "none")
    return _finish(recording, record, ctx, options, failures, None, certificate)


def _finish(
    recording: TraceRecord,
    record: TraceRecord,
    ctx: RunContext,
    options: ReplayOptions,
    failures: list[str],
    fidelity: ReplayFidelity | None,
    certificate: ReplayCertificate | None = None,
) -> ReplayResult:
    diff = _recording_diff(recording, record, options)
    if diff is not None and diff.has_changes:
        summary = diff.summary(f"recording {recording.trace_id}")
        failures.append(f"Replay drifted from its recording — {summary}")
    return ReplayResult(
        trace_id=recording.trace_id,
        failures=failures,
        started_at=record.started_at,
        completed_at=record.ended_at,
        status=record.status,
        error=record.error.message if record.error else None,
        output=record.output,
        fidelity=fidelity,
        recording_diff=diff,
        replayed_context=ctx,
        replayed_record=record,
        certificate=certificate,
    )


async def replay_recording(
    harness: Harness,
    recording: TraceRecord,
    agent: Agent,
    options: ReplayOptions,
    assertions: list[Assertion],
) -> ReplayResult:
    """Run ``agent`` against ``recording``; every failure is in the result, not raised."""
    if not options.serves_from_recording:
        return await _live_rerun(harness, recording, agent, options, assertions)
    if not recording.steps:
        return _no_steps(recording)
    from contextlib import ExitStack

    from scenarist.replay.recorded_calls import RecordedCalls
    from scenarist.tracing.http._network_guard import NetworkGuard, guard_network
    from scenarist.tracing.http._sandbox import guarantee
    from scenarist.tracing.http.capture import serve_llm_calls

    otel = recording.metadata.get("source") == "otel"
    if otel:  # an OpenTelemetry trace: only its LLM calls can be served (scenarist.otel.replay)
        from scenarist.otel.replay import OtelCalls, content_problem

        problem = content_problem(recording)
        if problem is not None:
            return ReplayResult(trace_id=recording.trace_id, status="error", failures=[problem])
    replayer = Replayer(recording.model_copy(update={"steps": []}) if otel else recording, options)
    ctx = RunContext(
        input=recording.input, agent_name=recording.agent_name, is_replay=True, replayer=replayer
    )
    ctx.set_metadata("replay_of", recording.trace_id)
    strict = not options.live_model_steps
    level = guarantee(strict)
    ctx.set_metadata(GUARANTEE_KEY, level)
    calls: RecordedCalls | OtelCalls = (
        OtelCalls(recording)
        if otel
        else RecordedCalls(recording, live=options.live_model_steps, replayer=replayer)
    )
    guard = NetworkGuard(
        ctx.recorder,
        f"trace {recording.trace_id}",
        options.allow_network,
        source=calls,
        llm_hosts=options.llm_hosts,
    )
    with ExitStack() as stack:
        stack.enter_context(serve_llm_calls(calls))
        if not options.live_model_steps:  # strict: what nothing served never leaves
            stack.enter_context(guard_network(guard))
        record, error = await harness.execute(ctx, agent)
    replayer.fidelity.refused = list(guard.refused)
    failures = _failures(replayer, error, [*calls.missed, *guard.refused], options)
    if calls.unused and error is None and not options.live_model_steps:
        failures.append(
            f"Replay never made {calls.unused} recorded LLM call(s) from trace {recording.trace_id}"
        )
    with harness.assertion_scope():
        failures.extend(await failures_of(ctx, record, assertions))
    # the trace's own calls, raised to what the replay saw outside the agent's context
    certificate = ReplayCertificate.from_spans(record.steps, level).at_least(
        ReplayCertificate(
            replayed=calls.served,
            missed=len(calls.missed),
            refused=len(guard.refused),
        )
    )
    return _finish(recording, record, ctx, options, failures, replayer.fidelity, certificate)
