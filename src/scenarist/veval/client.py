"""The client: traced agent runs and Veval-style scenarios, kept in a store.

``Client()`` with no arguments keeps everything in a local SQLite database (see
:mod:`scenarist.store.default`), so it works on a fresh machine with no configuration;
with a server URL and key it keeps everything on that server (see
:mod:`scenarist.veval._store_choice`). The client is a facade: each method delegates to
the module of its concept — traced execution (:mod:`~scenarist.veval.execution`), the item
runner (:mod:`~scenarist.veval.item_runner`), judging (:mod:`~scenarist.veval.judging`),
snapshots (:mod:`scenarist.replay.snapshots`) and replay
(:mod:`scenarist.replay.agent_replay`). Two hooks, :meth:`Client._execute` and
:meth:`Client._assertion_scope`, are what :class:`~scenarist.testing.TestClient` overrides.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from scenarist._sync import run_sync
from scenarist.store.base import Store
from scenarist.tracing.context import RunContext
from scenarist.tracing.record import TraceRecord
from scenarist.veval._store_choice import choose_store
from scenarist.veval.assertions import Assertion, check_assertions
from scenarist.veval.execution import Agent, Executed, Harness, check_agent, execute_traced

if TYPE_CHECKING:
    from scenarist.replay.snapshot_diff import SnapshotDiff, SnapshotOptions
    from scenarist.replay.snapshots import SnapshotData
    from scenarist.replay.step_replay import ReplayOptions, ReplayResult
    from scenarist.veval.items import ScenarioItem, ScenarioRunResult

__all__ = ["Agent", "Client"]


class Client:
    """Runs agents with tracing and scenarios of items, and keeps their records.

    ``api_key`` and ``base_url`` (else ``SCENARIST_API_KEY`` / ``SCENARIST_URL``) select
    a server; ``store`` a store of your own. They choose :attr:`store` and are not kept.
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        store: Store | None = None,
        raise_on_send_failure: bool = False,
    ) -> None:
        self.store = choose_store(api_key, base_url, store, raise_on_send_failure)

    # -- hooks (TestClient overrides them) -----------------------------------------------

    def _assertion_scope(self) -> AbstractContextManager[None]:
        """Context in which assertions are evaluated (TestClient adds its judge mocks)."""
        return nullcontext()

    async def _execute(self, ctx: RunContext, agent: Agent) -> Executed:
        """Run ``agent(ctx)`` with tracing and LLM-call capture; store and return its record."""
        return await execute_traced(self.store, ctx, agent)

    def _harness(self) -> Harness:
        return Harness(self.store, self._execute, self._assertion_scope)

    # -- agent runs ----------------------------------------------------------------------

    async def run_async(self, agent_name: str, callback: Agent, input: Any = None) -> Any:
        """Run ``callback(ctx)`` as a traced run of ``agent_name``; return its result.

        The run is stored whether it succeeds or raises; an exception is re-raised.
        """
        check_agent(callback, "callback")
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
        from scenarist.veval.judging import judge_run

        return await judge_run(
            criteria, ctx, self._assertion_scope(), model, threshold, reference_output, samples
        )

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

    # -- scenarios (see scenarist.veval.item_runner) -------------------------------------

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

        ``mock_model_steps`` is Veval's parameter, accepted so Veval calls keep working,
        and has no effect: trace-backed items are always mocked (``live_model_steps=True``
        runs their recorded ``llm`` steps live) and synthetic items always run live.
        """
        from scenarist.suite import validate_max_concurrency
        from scenarist.veval.item_runner import run_items

        if not isinstance(scenario_name, str) or not scenario_name:
            raise TypeError(f"scenario_name must be a non-empty string, got {scenario_name!r}")
        check_agent(agent)
        shared = check_assertions(scenario_assertions or [], "scenario_assertions")
        workers = validate_max_concurrency(max_concurrency) or 1
        return await run_items(
            self._harness(), scenario_name, agent, shared, items, workers, live_model_steps
        )

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

    # -- replay (see scenarist.replay.agent_replay) --------------------------------------

    async def replay_async(
        self,
        trace: TraceRecord | str,
        callback: Agent,
        options: ReplayOptions | None = None,
    ) -> ReplayResult:
        """Run ``callback`` against a recorded run: tracked steps are served from the
        recording (see :mod:`scenarist.replay.step_replay`), never called live."""
        from scenarist.replay.agent_replay import replay_recording, require_recording
        from scenarist.replay.step_replay import ReplayOptions

        check_agent(callback, "callback")
        options = options or ReplayOptions()
        assertions = check_assertions(options.assertions, "options.assertions")
        recording = await require_recording(self.store, trace)
        return await replay_recording(self._harness(), recording, callback, options, assertions)

    def replay(
        self, trace: TraceRecord | str, callback: Agent, options: ReplayOptions | None = None
    ) -> ReplayResult:
        """:meth:`replay_async` from sync code (safe inside a running event loop)."""
        return run_sync(self.replay_async, trace, callback, options)
