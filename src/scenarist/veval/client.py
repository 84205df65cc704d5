"""The client: traced agent runs and Veval-style scenarios, kept in a store.

``Client()`` with no arguments keeps everything in a local SQLite database (see
:mod:`scenarist.store.default`), so it works on a fresh machine with no configuration;
with a server URL and key it keeps everything on that server (see
:mod:`scenarist.veval._store_choice`). The client is a facade: each method delegates to
the module of its concept — traced execution (:mod:`~scenarist.veval.execution`), the item
runner (:mod:`~scenarist.veval.item_runner`), judging (:mod:`~scenarist.veval.judging`),
snapshots (:mod:`scenarist.replay.snapshots`) and replay
(:mod:`scenarist.veval.agent_replay`). Two hooks, :meth:`Client._execute` and
:meth:`Client._assertion_scope`, are what :class:`~scenarist.testing.TestClient` overrides.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from scenarist._sync import run_sync
from scenarist.model.record import TraceRecord
from scenarist.store.base import Store
from scenarist.tracing.context import RunContext
from scenarist.veval._store_choice import choose_store
from scenarist.veval.assertions import Assertion, check_assertions
from scenarist.veval.execution import Agent, Executed, Harness, check_agent, execute_traced

if TYPE_CHECKING:
    from scenarist.model.items import ScenarioItem
    from scenarist.replay.snapshot_diff import SnapshotDiff, SnapshotOptions
    from scenarist.replay.snapshots import SnapshotData
    from scenarist.replay.step_replay import ReplayOptions, ReplayResult
    from scenarist.veval.results import ScenarioRunResult

__all__ = ["Agent", "Client", "ClientOptions", "VevalOptions"]


class ClientOptions:
    """Veval's ``VevalOptions`` for ported code: ``Client(ClientOptions(api_key=...))``.

    ``base_url`` is the server (Veval reads its endpoint elsewhere); ``project_id`` is the
    project (:mod:`scenarist.store.projects`; empty: ``SCENARIST_PROJECT``, else the key's or
    ``default``), deprecated as in Veval (a ``DeprecationWarning``; prefer
    ``Client(project=...)``); the flush settings are accepted and unused (scenarist sends each trace
    when its run ends).
    """

    def __init__(
        self,
        api_key: str = "",
        project_id: str = "",
        flush_interval_ms: int = 5000,
        flush_batch_size: int = 50,
        raise_on_send_failure: bool = False,
        *,
        base_url: str | None = None,
    ) -> None:
        if project_id:
            warnings.warn(
                f"{type(self).__name__}.project_id is deprecated, as VevalOptions.project_id "
                "is in Veval (which ignores it: the API key determines the workspace); here it "
                "still chooses the project: pass Client(project=...) instead.",
                DeprecationWarning,
                stacklevel=2,
            )
        self.api_key = api_key
        self.project_id = project_id
        self.flush_interval_ms = flush_interval_ms
        self.flush_batch_size = flush_batch_size
        self.raise_on_send_failure = raise_on_send_failure
        self.base_url = base_url

    def __repr__(self) -> str:
        key = "'…'" if self.api_key else "''"  # never print a key
        return f"{type(self).__name__}(api_key={key}, base_url={self.base_url!r})"


class VevalOptions(ClientOptions):
    """Veval's name for :class:`ClientOptions`, built as in Veval
    (``VevalOptions(api_key=..., project_id=...)``; a ``project_id`` warns with a
    ``DeprecationWarning``, as Veval does). ``Client(VevalOptions(...))`` takes it."""


class Client:
    """Runs agents with tracing and scenarios of items, and keeps their records.

    ``api_key`` and ``base_url`` (else ``SCENARIST_API_KEY`` / ``SCENARIST_URL``) select
    a server; ``store`` a store of your own. They choose :attr:`store` and are not kept.
    ``project`` (else ``SCENARIST_PROJECT``, else ``"default"``) is the project its runs,
    traces and items belong to (:mod:`scenarist.store.projects`); Veval's ``project_id``.
    The first argument may also be a :class:`ClientOptions` (Veval's ``VevalSdk(options)``).
    """

    def __init__(
        self,
        api_key: str | ClientOptions | None = None,
        base_url: str | None = None,
        *,
        store: Store | None = None,
        raise_on_send_failure: bool = False,
        project: str | None = None,
    ) -> None:
        if isinstance(api_key, ClientOptions):
            options = api_key
            project = project or options.project_id or None
            api_key = options.api_key or None
            base_url = base_url or options.base_url
            raise_on_send_failure = raise_on_send_failure or options.raise_on_send_failure
        elif api_key is not None and not isinstance(api_key, str):
            raise TypeError(
                f"Client(api_key, base_url): api_key must be a string or ClientOptions, got "
                f"{type(api_key).__name__}"
            )
        if project is not None:
            from scenarist.store.projects import check_project

            check_project(project, source="Client(project=...)")
        self.store = choose_store(api_key, base_url, store, raise_on_send_failure, project)

    # -- hooks (TestClient overrides them) -----------------------------------------------

    def _assertion_scope(self) -> AbstractContextManager[None]:
        """Context in which assertions are evaluated (TestClient adds its judge mocks)."""
        return nullcontext()

    async def _execute(self, ctx: RunContext, agent: Agent, *, save: bool = True) -> Executed:
        """Run ``agent(ctx)`` with tracing and LLM-call capture; store (if ``save``) and
        return its record."""
        return await execute_traced(self.store, ctx, agent, save=save)

    def _harness(self, *, save: bool = True) -> Harness:
        if save:
            return Harness(self.store, self._execute, self._assertion_scope)
        return Harness(
            self.store, functools.partial(self._execute, save=False), self._assertion_scope
        )

    # -- agent runs ----------------------------------------------------------------------

    async def run_async(self, agent_name: str, callback: Agent, input: Any = None) -> Any:
        """Run ``callback(ctx)`` as a traced run of ``agent_name``; return its result.

        The run is stored whether it succeeds or raises; an exception is re-raised.
        """
        check_agent(callback, "callback")
        ctx = RunContext(input=input, agent_name=agent_name)
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

    async def save_snapshot_async(
        self, snapshot_name: str | None = None, source: Any = None, *, name: str | None = None
    ) -> SnapshotData:
        """Save the step sequence of ``source`` (a trace id, run context, record or trace)
        as ``snapshot_name`` (``name=`` is the older keyword)."""
        from scenarist.replay import snapshots

        return await snapshots.save_snapshot_async(
            self.store, _snapshot_name(snapshot_name, name), source
        )

    def save_snapshot(
        self, snapshot_name: str | None = None, source: Any = None, *, name: str | None = None
    ) -> SnapshotData:
        return run_sync(self.save_snapshot_async, _snapshot_name(snapshot_name, name), source)

    async def get_snapshot_async(
        self, snapshot_name: str | None = None, *, name: str | None = None
    ) -> SnapshotData | None:
        from scenarist.replay import snapshots

        return await snapshots.get_snapshot_async(self.store, _snapshot_name(snapshot_name, name))

    def get_snapshot(
        self, snapshot_name: str | None = None, *, name: str | None = None
    ) -> SnapshotData | None:
        return run_sync(self.get_snapshot_async, _snapshot_name(snapshot_name, name))

    async def load_snapshot_async(self, trace_id: str) -> SnapshotData | None:
        """A snapshot built from the stored trace ``trace_id`` (not saved)."""
        from scenarist.replay import snapshots

        return await snapshots.load_snapshot_async(self.store, trace_id)

    def load_snapshot(self, trace_id: str) -> SnapshotData | None:
        return run_sync(self.load_snapshot_async, trace_id)

    async def compare_snapshot_async(
        self,
        snapshot_name: str | None = None,
        snapshot: Any = None,
        ctx: Any = None,
        options: SnapshotOptions | None = None,
        *,
        name: str | None = None,
        current: Any = None,
    ) -> SnapshotDiff:
        """Compare a run with a snapshot.

        Veval's form, ``compare_snapshot_async(snapshot_name, snapshot, ctx, options)``,
        compares the run ``ctx`` with the given ``snapshot`` (``None``: the one saved as
        ``snapshot_name``). The older form, ``compare_snapshot_async(name, current,
        options)``, compares ``current`` (a run context, record, trace or trace id) with
        the snapshot saved as ``name``; a missing snapshot is a ``UserError``.
        """
        from scenarist.replay import snapshots
        from scenarist.replay.snapshot_diff import SnapshotOptions
        from scenarist.replay.snapshots import SnapshotData

        snapshot_name = _snapshot_name(snapshot_name, name)
        if current is None and not isinstance(snapshot, SnapshotData | None):
            # the older positional form (name, current, options): `ctx` holds the options
            if ctx is not None and not isinstance(ctx, SnapshotOptions):
                raise TypeError(
                    "compare_snapshot_async(snapshot_name, snapshot, ctx, options): snapshot "
                    f"must be a SnapshotData (or None), got {type(snapshot).__name__}"
                )
            current, snapshot, options = snapshot, None, options or ctx
        elif current is None:
            current = ctx
        if current is None:
            raise TypeError(
                "compare_snapshot_async needs the run to compare: "
                "compare_snapshot_async(snapshot_name, snapshot, ctx)"
            )
        if snapshot is None:
            return await snapshots.compare_snapshot_async(
                self.store, snapshot_name, current, options
            )
        return snapshots.compare_snapshots(snapshot, current, options)

    def compare_snapshot(
        self,
        snapshot_name: str | None = None,
        snapshot: Any = None,
        ctx: Any = None,
        options: SnapshotOptions | None = None,
        *,
        name: str | None = None,
        current: Any = None,
    ) -> SnapshotDiff:
        """:meth:`compare_snapshot_async` from sync code."""
        return run_sync(
            self.compare_snapshot_async,
            snapshot_name,
            snapshot,
            ctx,
            options,
            name=name,
            current=current,
        )

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
        executor: Any = None,
        budget: Any = None,
    ) -> ScenarioRunResult:
        """Run every item through ``agent`` and assert on each run; store the summary.

        ``items=None`` fetches the scenario's items from the store. Items are isolated:
        whatever one does (raise, fail, time out), the others still run, and the run
        summary is stored. Zero items is not a pass. Results keep item order.

        ``mock_model_steps`` is Veval's parameter, accepted so Veval calls keep working,
        and has no effect: trace-backed items are always mocked (``live_model_steps=True``
        runs their recorded ``llm`` steps live) and synthetic items always run live.

        ``executor=RayExecutor(...)`` runs the items in batches on Ray workers (see
        :mod:`scenarist.distributed.ray`); traces and the summary are stored here.

        ``budget`` (ours: USD, ``"5usd"``, or a :class:`~scenarist.engine.budget.Budget`):
        an item whose estimate would take the run over it is not started and fails with
        ``BUDGET: not started: ...``, as do the items after it; trace-backed items replay
        and are estimated at nothing live.
        """
        from scenarist.engine.suite import validate_max_concurrency
        from scenarist.veval.item_runner import run_items

        if not isinstance(scenario_name, str) or not scenario_name:
            raise TypeError(f"scenario_name must be a non-empty string, got {scenario_name!r}")
        check_agent(agent)
        shared = check_assertions(scenario_assertions or [], "scenario_assertions")
        workers = validate_max_concurrency(max_concurrency) or 1
        ledger = None
        if budget is not None:
            from scenarist.engine.budget import parse_budget

            ledger = parse_budget(budget, source="budget")
        return await run_items(
            self._harness(),
            scenario_name,
            agent,
            shared,
            items,
            workers,
            live_model_steps,
            executor,
            ledger,
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
        executor: Any = None,
        budget: Any = None,
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
            executor=executor,
            budget=budget,
        )

    # -- replay (see scenarist.veval.agent_replay) --------------------------------------

    async def replay_async(
        self,
        trace: TraceRecord | str,
        callback: Agent,
        options: ReplayOptions | None = None,
    ) -> ReplayResult:
        """Run ``callback`` against a recorded run. With ``mock_llm_responses=True``
        (or ``live_model_steps=True``) tracked steps and LLM calls are served from the
        recording (see :mod:`scenarist.replay.step_replay`), never called live; Veval's
        default ``ReplayOptions()`` runs the agent again live, marked as a replay. The
        replayed run is returned (``ReplayResult.replayed_record``), not stored, as in
        Veval; a trace-backed scenario item stores its replay with the run. A recording
        with no steps raises ``EmptyRecordingError`` (a ``RuntimeError``, as in Veval) when
        the replay would serve from it."""
        from scenarist.replay.step_replay import ReplayOptions
        from scenarist.veval.agent_replay import replay_recording, require_recording

        check_agent(callback, "callback")
        options = options or ReplayOptions()
        assertions = check_assertions(options.assertions, "options.assertions")
        recording = await require_recording(self.store, trace)
        if not recording.steps and options.serves_from_recording:
            from scenarist.errors import EmptyRecordingError

            raise EmptyRecordingError.for_trace(recording.trace_id)  # as Veval's replay_async
        harness = self._harness(save=False)
        return await replay_recording(harness, recording, callback, options, assertions)

    def replay(
        self, trace: TraceRecord | str, callback: Agent, options: ReplayOptions | None = None
    ) -> ReplayResult:
        """:meth:`replay_async` from sync code (safe inside a running event loop)."""
        return run_sync(self.replay_async, trace, callback, options)


def _snapshot_name(snapshot_name: str | None, name: str | None) -> str:
    """The snapshot's name, given as ``snapshot_name`` (Veval's) or ``name`` (the older)."""
    if (snapshot_name is None) == (name is None):
        raise TypeError("give the snapshot's name once, as snapshot_name (or the older name=)")
    return snapshot_name if snapshot_name is not None else name  # type: ignore[return-value]
