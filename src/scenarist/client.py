"""The client: traced agent runs and Veval-style scenarios, kept in a store.

``Client()`` with no arguments keeps everything in a local SQLite database (see
:mod:`scenarist.store.default`: the server's own database file when the server extra is
installed), so it works on a fresh machine with no configuration.
Module-level :func:`run_scenario_async` / :func:`run_scenario` use a default client made
on first use. With a server URL (``base_url`` or ``SCENARIST_URL``) and a key
(``api_key`` or ``SCENARIST_API_KEY``) the client keeps everything on that server instead
(:class:`scenarist.store.remote.RemoteStore`, which needs ``scenarist[server]``); what a
server that cannot be reached does not take is spooled for ``scenarist sync``, never
silently dropped nor kept in the local store instead (``raise_on_send_failure=True``
raises instead).
"""

from __future__ import annotations

import inspect
import os
import secrets
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from scenarist._fast import construct
from scenarist._sync import run_sync
from scenarist.checks.base import Check
from scenarist.checks.trace_assert import ITraceAssertion
from scenarist.errors import ReplayError, UserError
from scenarist.items import NO_INPUT_MESSAGE, ItemRunResult, ScenarioItem, ScenarioRunResult
from scenarist.replay.steps import Replayer, ReplayOptions, ReplayResult
from scenarist.runner import run_check
from scenarist.store.base import Store
from scenarist.tracing.context import RunContext
from scenarist.tracing.record import TraceRecord

if TYPE_CHECKING:
    from scenarist.replay.snapshot_diff import SnapshotDiff, SnapshotOptions
    from scenarist.replay.snapshots import SnapshotData

__all__ = ["Client", "get_client", "run_scenario", "run_scenario_async", "set_client"]

Agent = Callable[[RunContext], Any]


def _check_agent(agent: Any, what: str = "agent") -> None:
    if not callable(agent):
        raise TypeError(
            f"{what} must be a function taking the run context (def or async def), "
            f"got {type(agent).__name__}"
        )


Assertion = Check | ITraceAssertion


def _check_assertions(assertions: Sequence[Any], where: str) -> list[Assertion]:
    if isinstance(assertions, str | bytes) or not isinstance(assertions, Sequence):
        raise TypeError(f"{where} must be a list of checks, got {type(assertions).__name__}")
    for assertion in assertions:
        if not isinstance(assertion, Check | ITraceAssertion):
            raise TypeError(
                f"{where} must hold checks such as TraceAssert.no_errors() or Equals(...), "
                f"or ITraceAssertion objects; got {type(assertion).__name__} (wrap a "
                "function of the trace with TraceAssert.custom(fn))"
            )
    return list(assertions)


async def _evaluate(assertion: Assertion, ctx: RunContext, trace: Any) -> str | None:
    """The failure message of one item assertion, or ``None`` when it passed."""
    if isinstance(assertion, Check):
        verdict = await run_check(assertion, trace, return_exception=True)
        if verdict.status == "pass":
            return None
        prefix = "" if verdict.status == "fail" else f"[{verdict.status.upper()}] "
        return prefix + (verdict.message or f"{assertion.label} did not pass")
    try:
        message = await assertion.evaluate_async(ctx)
    except Exception as exc:
        return f"[ERROR] {type(assertion).__name__} raised {type(exc).__name__}: {exc}"
    if message is None or message == "":
        return None
    if not isinstance(message, str):
        return (
            f"[ERROR] {type(assertion).__name__}.evaluate_async must return a failure "
            f"message (str) or None, got {type(message).__name__}: {message!r}"
        )
    return message


async def _failures(ctx: RunContext, record: TraceRecord, assertions: list[Assertion]) -> list[str]:
    """The failure messages of ``assertions`` on one run."""
    trace = record.to_trace()
    messages = [await _evaluate(assertion, ctx, trace) for assertion in assertions]
    return [m for m in messages if m is not None]


class Client:
    """Runs agents with tracing and scenarios of items, and keeps their records."""

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        store: Store | None = None,
        raise_on_send_failure: bool = False,
    ) -> None:
        url = base_url or os.environ.get("SCENARIST_URL")
        if url and store is None:
            try:
                from scenarist.store.remote import RemoteStore
            except ImportError as exc:
                raise UserError(
                    f"a scenarist server at {url!r} was configured; talking to it needs the "
                    "server extra: pip install 'scenarist[server]' (or unset SCENARIST_URL "
                    "to keep runs locally)"
                ) from exc
            store = RemoteStore(
                url,
                api_key or os.environ.get("SCENARIST_API_KEY"),
                raise_on_send_failure=raise_on_send_failure,
            )
        if store is None:
            from scenarist.store.default import default_store

            store = default_store()
        self.api_key = api_key
        self.base_url = url
        self.store = store

    # -- agent runs ----------------------------------------------------------------------

    def _assertion_scope(self) -> AbstractContextManager[None]:
        """Context in which assertions are evaluated (TestClient adds its judge mocks)."""
        return nullcontext()

    async def _execute(
        self, ctx: RunContext, agent: Agent
    ) -> tuple[TraceRecord, BaseException | None]:
        """Run ``agent(ctx)`` with tracing and LLM-call capture; store and return its record."""
        from scenarist.integrations.http_capture import capture_llm_calls

        error: BaseException | None = None
        with ctx.recorder, capture_llm_calls():
            try:
                output = agent(ctx)
                if inspect.isawaitable(output):
                    output = await output
                ctx.output = output
            except Exception as exc:
                error = exc
        record = TraceRecord.from_context(ctx, error=error)
        await self.store.save_trace(record)
        return record, error

    async def run_async(self, agent_name: str, callback: Agent, input: Any = None) -> Any:
        """Run ``callback(ctx)`` as a traced run of ``agent_name``; return its result.

        The run is stored whether it succeeds or raises; an exception is re-raised.
        """
        _check_agent(callback, "callback")
        ctx = RunContext(input, agent_name=agent_name)
        record, error = await self._execute(ctx, callback)
        if error is not None:
            raise error
        return record.output

    def run(self, agent_name: str, callback: Agent, input: Any = None) -> Any:
        """:meth:`run_async` from sync code (safe inside a running event loop)."""
        return run_sync(self.run_async, agent_name, callback, input)

    async def get_trace_async(self, trace_id: str) -> TraceRecord | None:
        return await self.store.get_trace(trace_id)

    def get_trace(self, trace_id: str) -> TraceRecord | None:
        return run_sync(self.store.get_trace, trace_id)

    # -- judging (Veval's client.judge_async) ------------------------------------------

    async def judge_async(
        self,
        criteria: str,
        ctx: RunContext,
        model: Any = None,
        threshold: float | None = None,
        reference_output: Any = None,
        samples: int | None = None,
    ) -> dict[str, Any]:
        """Judge the run in ``ctx`` against ``criteria``: ``{passed, score, reasoning}``."""
        from scenarist.checks.trace_assert import TraceAssert

        check = TraceAssert.judge(criteria, model, threshold, reference_output, samples)
        trace = TraceRecord.from_context(ctx).to_trace()
        with self._assertion_scope():
            verdict = await run_check(check, trace, return_exception=True)
        score = next((m.value for m in verdict.metrics if m.name == "judge_score"), None)
        return {
            "passed": verdict.status == "pass",
            "score": score,
            "reasoning": verdict.message,
            "status": verdict.status.value,
        }

    def judge(
        self,
        criteria: str,
        ctx: RunContext,
        model: Any = None,
        threshold: float | None = None,
        reference_output: Any = None,
        samples: int | None = None,
    ) -> dict[str, Any]:
        """:meth:`judge_async` from sync code."""
        return run_sync(
            self.judge_async, criteria, ctx, model, threshold, reference_output, samples
        )

    # -- snapshots (see scenarist.replay.snapshots) --------------------------------------

    async def save_snapshot_async(self, name: str, source: Any) -> SnapshotData:
        """Save the step sequence of ``source`` (a trace id, run context, record or trace)."""
        from scenarist.replay import snapshots

        return await snapshots.save_snapshot_async(self.store, name, source)

    def save_snapshot(self, name: str, source: Any) -> SnapshotData:
        return run_sync(self.save_snapshot_async, name, source)

    async def get_snapshot_async(self, name: str) -> SnapshotData | None:
        from scenarist.replay import snapshots

        return await snapshots.get_snapshot_async(self.store, name)

    def get_snapshot(self, name: str) -> SnapshotData | None:
        return run_sync(self.get_snapshot_async, name)

    async def load_snapshot_async(self, trace_id: str) -> SnapshotData | None:
        """A snapshot built from the stored trace ``trace_id`` (not saved)."""
        from scenarist.replay import snapshots

        return await snapshots.load_snapshot_async(self.store, trace_id)

    def load_snapshot(self, trace_id: str) -> SnapshotData | None:
        return run_sync(self.load_snapshot_async, trace_id)

    async def compare_snapshot_async(
        self, name: str, current: Any, options: SnapshotOptions | None = None
    ) -> SnapshotDiff:
        """Compare ``current`` with the snapshot saved as ``name``."""
        from scenarist.replay import snapshots

        return await snapshots.compare_snapshot_async(self.store, name, current, options)

    def compare_snapshot(
        self, name: str, current: Any, options: SnapshotOptions | None = None
    ) -> SnapshotDiff:
        return run_sync(self.compare_snapshot_async, name, current, options)

    # -- scenarios -----------------------------------------------------------------------

    async def run_scenario_async(
        self,
        scenario_name: str,
        agent: Agent,
        scenario_assertions: Sequence[Assertion] | None = None,
        items: Sequence[ScenarioItem] | None = None,
        mock_model_steps: bool = False,
        max_concurrency: int = 1,
        *,
        live_model_steps: bool = False,
    ) -> ScenarioRunResult:
        """Run every item through ``agent`` and assert on each run; store the summary.

        ``items=None`` fetches the scenario's items from the store. Items are isolated:
        whatever one does (raise, fail, time out), the others still run, and the run
        summary is stored. Zero items is not a pass. Results keep item order.
        """
        from scenarist.suite import validate_max_concurrency

        if not isinstance(scenario_name, str) or not scenario_name:
            raise TypeError(f"scenario_name must be a non-empty string, got {scenario_name!r}")
        _check_agent(agent)
        shared = _check_assertions(scenario_assertions or [], "scenario_assertions")
        workers = validate_max_concurrency(max_concurrency) or 1
        run_id = "run_" + secrets.token_hex(12)
        started_at = datetime.now(UTC)
        t0 = time.perf_counter()

        error: str | None = None
        if items is None:
            items = await self.store.get_items(scenario_name)
            if not items:
                error = (
                    f"Scenario '{scenario_name}' has no items: pass items=[...] or add items "
                    "to the scenario in the store"
                )
        elif not items:
            error = f"Scenario '{scenario_name}' was run with items=[]: nothing was tested"
        for item in items:
            if not isinstance(item, ScenarioItem):
                raise TypeError(f"items must be ScenarioItem objects, got {type(item).__name__}")

        results: list[ItemRunResult | None] = [None] * len(items)
        pending = iter(enumerate(items))

        async def worker() -> None:
            for index, item in pending:
                results[index] = await self._run_item(
                    scenario_name, agent, item, shared, mock_model_steps, live_model_steps
                )

        import asyncio

        async with asyncio.TaskGroup() as group:
            for _ in range(min(workers, len(items))):
                group.create_task(worker())

        run = construct(
            ScenarioRunResult,
            {
                "scenario_name": scenario_name,
                "run_id": run_id,
                "results": [r for r in results if r is not None],
                "started_at": started_at,
                "duration_ms": (time.perf_counter() - t0) * 1000,
                "error": error,
            },
        )
        await self.store.save_scenario_run(run.to_record(datetime.now(UTC)))
        return run

    def run_scenario(
        self,
        scenario_name: str,
        agent: Agent,
        scenario_assertions: Sequence[Assertion] | None = None,
        items: Sequence[ScenarioItem] | None = None,
        mock_model_steps: bool = False,
        max_concurrency: int = 1,
        *,
        live_model_steps: bool = False,
    ) -> ScenarioRunResult:
        """:meth:`run_scenario_async` from sync code (safe inside a running event loop)."""
        return run_sync(
            self.run_scenario_async,
            scenario_name,
            agent,
            scenario_assertions,
            items,
            mock_model_steps,
            max_concurrency,
            live_model_steps=live_model_steps,
        )

    async def _run_item(
        self,
        scenario_name: str,
        agent: Agent,
        item: ScenarioItem,
        shared: list[Assertion],
        mock_model_steps: bool,
        live_model_steps: bool,
    ) -> ItemRunResult:
        t0 = time.perf_counter()
        try:
            return await self._run_item_unguarded(
                scenario_name, agent, item, shared, live_model_steps
            )
        except Exception as exc:  # an item never takes the others down
            return ItemRunResult(
                item=item,
                passed=False,
                failures=[f"Item failed: {type(exc).__name__}: {exc}"],
                duration_ms=(time.perf_counter() - t0) * 1000,
            )

    async def _run_item_unguarded(
        self,
        scenario_name: str,
        agent: Agent,
        item: ScenarioItem,
        shared: list[Assertion],
        live_model_steps: bool,
    ) -> ItemRunResult:
        t0 = time.perf_counter()
        if item.is_trace_backed:
            return await self._run_trace_backed(agent, item, shared, live_model_steps, t0)
        if item.input is None:
            return ItemRunResult(item=item, passed=False, failures=[NO_INPUT_MESSAGE])
        ctx = RunContext(item.input, agent_name=scenario_name)
        record, error = await self._execute(ctx, agent)
        failures: list[str] = []
        if error is not None:
            failures.append(f"Agent threw exception: {error}")
        with self._assertion_scope():
            failures.extend(await _failures(ctx, record, [*shared, *item.assertions]))
        return self._item_result(item, failures, ctx, record, t0)

    async def _run_trace_backed(
        self,
        agent: Agent,
        item: ScenarioItem,
        shared: list[Assertion],
        live_model_steps: bool,
        t0: float,
    ) -> ItemRunResult:
        """Replay the item's recording with mocked steps (never a live call)."""
        recording = await self._load_recording(item)
        if recording is None:
            failure = (
                f"Replay trace '{item.trace_id}' was not found in the store; record it with "
                "client.run_async(...) or give the item an inline trace="
            )
            return ItemRunResult(item=item, passed=False, failures=[failure])
        options = ReplayOptions(live_model_steps=item.live_model_steps or live_model_steps)
        replay = await self._replay(recording, agent, options, [*shared, *item.assertions])
        result = self._item_result(
            item, replay.failures, replay.replayed_context, replay.replayed_record, t0
        )
        result.__dict__["replay"] = replay
        return result

    def _item_result(
        self,
        item: ScenarioItem,
        failures: list[str],
        ctx: RunContext | None,
        record: TraceRecord | None,
        t0: float,
    ) -> ItemRunResult:
        return construct(  # every value is already valid: skip validation on this path
            ItemRunResult,
            {
                "item": item,
                "passed": not failures,
                "failures": failures,
                "trace_id": record.trace_id if record else None,
                "output": record.output if record else None,
                "duration_ms": (time.perf_counter() - t0) * 1000,
                "cost_usd": record.cost_usd if record else None,
                "context": ctx,
                "record": record,
                "replay": None,
            },
        )

    # -- replay --------------------------------------------------------------------------

    async def replay_async(
        self,
        trace: TraceRecord | str,
        callback: Agent,
        options: ReplayOptions | None = None,
    ) -> ReplayResult:
        """Run ``callback`` against a recorded run: tracked steps are served from the
        recording (see :mod:`scenarist.replay.steps`), never called live."""
        _check_agent(callback, "callback")
        options = options or ReplayOptions()
        assertions = _check_assertions(options.assertions, "options.assertions")
        recording = trace if isinstance(trace, TraceRecord) else await self.store.get_trace(trace)
        if recording is None:
            raise UserError(f"trace {trace!r} was not found in the store; check the trace id")
        return await self._replay(recording, callback, options, assertions)

    def replay(
        self, trace: TraceRecord | str, callback: Agent, options: ReplayOptions | None = None
    ) -> ReplayResult:
        """:meth:`replay_async` from sync code (safe inside a running event loop)."""
        return run_sync(self.replay_async, trace, callback, options)

    async def _replay(
        self,
        recording: TraceRecord,
        agent: Agent,
        options: ReplayOptions,
        assertions: list[Assertion],
    ) -> ReplayResult:
        if not recording.steps:
            return ReplayResult(
                trace_id=recording.trace_id,
                passed=False,
                status="error",
                failures=[
                    f"Replay trace '{recording.trace_id}' has no steps. Cannot mock LLM calls "
                    "without recorded steps, and a live call is never made instead."
                ],
            )
        from scenarist.integrations.http_capture import serve_llm_calls
        from scenarist.replay.recorded_calls import RecordedCalls

        replayer = Replayer(recording, options)
        ctx = RunContext(
            recording.input, agent_name=recording.agent_name, is_replay=True, replayer=replayer
        )
        ctx.set_metadata("replay_of", recording.trace_id)
        calls = RecordedCalls(recording, live=options.live_model_steps)
        with serve_llm_calls(calls):
            record, error = await self._execute(ctx, agent)
        failures = list(replayer.errors) + calls.missed
        if error is not None and not isinstance(error, ReplayError):
            failures.append(f"Agent threw exception: {error}")
        if replayer.finish():
            failures.append(replayer.unused_message())
        if calls.unused and not options.live_model_steps:
            failures.append(
                f"Replay never made {calls.unused} recorded LLM call(s) from trace "
                f"{recording.trace_id}"
            )
        with self._assertion_scope():
            failures.extend(await _failures(ctx, record, assertions))
        return ReplayResult(
            trace_id=recording.trace_id,
            passed=not failures,
            failures=failures,
            status=record.status,
            error=record.error.message if record.error else None,
            output=record.output,
            fidelity=replayer.fidelity,
            replayed_context=ctx,
            replayed_record=record,
        )

    async def _load_recording(self, item: ScenarioItem) -> TraceRecord | None:
        from pathlib import Path

        if isinstance(item.trace, TraceRecord):
            return item.trace
        if isinstance(item.trace, Path):
            return TraceRecord.model_validate_json(item.trace.read_text(encoding="utf-8"))
        return await self.store.get_trace(item.trace_id or "")


_default_client: Client | None = None


def get_client() -> Client:
    """The process-wide default client (local store unless a server is configured)."""
    global _default_client
    if _default_client is None:
        _default_client = Client()
    return _default_client


def set_client(client: Client | None) -> None:
    """Replace the default client (``None`` makes a fresh one on next use)."""
    global _default_client
    _default_client = client


async def run_scenario_async(
    scenario_name: str,
    agent: Agent,
    scenario_assertions: Sequence[Assertion] | None = None,
    items: Sequence[ScenarioItem] | None = None,
    mock_model_steps: bool = False,
    max_concurrency: int = 1,
    *,
    live_model_steps: bool = False,
) -> ScenarioRunResult:
    """:meth:`Client.run_scenario_async` on the default client."""
    return await get_client().run_scenario_async(
        scenario_name,
        agent,
        scenario_assertions,
        items,
        mock_model_steps,
        max_concurrency,
        live_model_steps=live_model_steps,
    )


def run_scenario(
    scenario_name: str,
    agent: Agent,
    scenario_assertions: Sequence[Assertion] | None = None,
    items: Sequence[ScenarioItem] | None = None,
    mock_model_steps: bool = False,
    max_concurrency: int = 1,
    *,
    live_model_steps: bool = False,
) -> ScenarioRunResult:
    """:meth:`Client.run_scenario` on the default client."""
    return get_client().run_scenario(
        scenario_name,
        agent,
        scenario_assertions,
        items,
        mock_model_steps,
        max_concurrency,
        live_model_steps=live_model_steps,
    )
