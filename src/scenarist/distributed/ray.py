"""``RayExecutor``: a suite (or a Veval item list) cut into batches run on a Ray cluster.

::

    from scenarist.distributed.ray import RayExecutor

    result = suite.run_sync(agent, parallel=True, max_concurrency=20,
                            executor=RayExecutor("ray://head:10001",
                                                 runtime_env={"working_dir": "."}))

Each batch is one Ray task (a plain remote function: Ray refuses ``async def`` ones)
running :class:`~scenarist.engine.executor.LocalExecutor` on the worker with the run's own
concurrency, timeouts, repeats and rate limits. What travels:

* to the worker: the batch's scenarios and the target, cloudpickled (functions of an
  importable module travel by name: the module must be importable on the worker, see
  ``runtime_env``); the run's settings as plain data; the active cassette's text (when
  replaying) and options; a handle on the one limiter actor;
* back: each scenario's result as its run-log record (JSON text, never a pickled live
  object), the cassette's counts, recorded calls and misses, in a dict.

Results reach the sink as each batch finishes (the suite keeps scenario order); the run
log, the store and the progress display are fed from there, on the driver. A batch
whose worker dies is retried once (Ray's ``max_retries=1``); if it dies again, each of
its scenarios is an ERROR result naming the failure, never dropped. A batch that cannot
load the agent (``ModuleNotFoundError`` on the worker) stops the run with a
:class:`~scenarist.errors.UserError` saying how to ship the code (``runtime_env``).

Rate limits are shared through one actor holding the run's
:class:`~scenarist.engine.rate_limits.RateLimiter`: every worker books its turns there.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scenarist.errors import UserError

if TYPE_CHECKING:
    from scenarist.engine.executor import RunPlan, ScenarioSink
    from scenarist.engine.scenario import Scenario
    from scenarist.model.items import ScenarioItem
    from scenarist.model.results import ScenarioResult
    from scenarist.veval.execution import Harness
    from scenarist.veval.results import ItemRunResult

__all__ = ["RayExecutor", "RemoteLimiter"]

RUNTIME_ENV_HINT = (
    "the Ray workers cannot import {module}: ship your code with "
    "RayExecutor(..., runtime_env={{'working_dir': '.'}}) (or 'py_modules': [your_package], "
    "or install it on the workers) and define the agent in a module, not in a notebook "
    "cell that imports it from elsewhere"
)


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        from scenarist._extras import missing_extra

        raise missing_extra("ray", exc) from exc
    return ray


class RayExecutor:
    """Run batches of scenarios as Ray tasks (extra ``ray``).

    ``address``: ``None`` starts (or joins, with ``RAY_ADDRESS``) a local Ray; ``"auto"``
    joins the running cluster; ``"ray://host:10001"`` connects through Ray Client.
    ``batch_size``: scenarios per task (default: about four batches per CPU, at most
    200 scenarios each). ``runtime_env``: what workers need to import the agent (Ray's
    ``runtime_env``: ``working_dir``, ``py_modules``, ``pip``...). ``ship_files``: Python
    files whose module travels by value (what ``scenarist run --ray`` does for the files it
    loaded by path). A Ray this executor started is shut down when the run ends; one
    already running is left as it is.
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        batch_size: int | None = None,
        runtime_env: dict[str, Any] | None = None,
        num_cpus: float = 1.0,
        init_options: dict[str, Any] | None = None,
        ship_files: Sequence[str | os.PathLike[str]] = (),
    ) -> None:
        if address is not None and not isinstance(address, str):
            raise TypeError(f"RayExecutor address must be None or a string, got {address!r}")
        if batch_size is not None and (
            isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1
        ):
            raise ValueError(f"RayExecutor batch_size must be an int >= 1, got {batch_size!r}")
        _ray()  # a missing extra is said here, before any run starts
        self.address = address
        self.batch_size = batch_size
        self.runtime_env = runtime_env
        self.num_cpus = num_cpus
        self.init_options = dict(init_options or {})
        self.ship_files = [Path(f).resolve() for f in ship_files]
        self.last_batches = 0
        """How many batches the last run was cut into."""

    def __repr__(self) -> str:
        return f"RayExecutor(address={self.address!r})"

    # -- the cluster ------------------------------------------------------------------------

    def _connect(self) -> tuple[Any, bool]:
        """Ray, connected; and whether this call started it (so it ends it)."""
        ray = _ray()
        if ray.is_initialized():
            return ray, False
        options: dict[str, Any] = {"ignore_reinit_error": True, "log_to_driver": False}
        options.update(self.init_options)
        try:
            ray.init(address=self.address, **options)
        except ConnectionError as exc:
            raise UserError(
                f"could not connect to Ray at {self.address!r}: {exc}; start it with "
                "`ray start --head` or give RayExecutor(address=None) for a local Ray"
            ) from exc
        return ray, True

    def _remote(self, ray: Any, function: Any) -> Any:
        """``function`` as a Ray task: one retry for a dead worker, none for user errors,
        this executor's ``runtime_env`` (whoever started Ray)."""
        options: dict[str, Any] = {
            "max_retries": 1,
            "retry_exceptions": False,
            "num_cpus": self.num_cpus,
        }
        if self.runtime_env is not None:
            options["runtime_env"] = self.runtime_env
        return ray.remote(**options)(function)

    def _ship(self, ray: Any) -> None:
        """Modules loaded from ``ship_files``: pickled by value, not by name."""
        if not self.ship_files:
            return
        wanted = set(self.ship_files)
        for module in list(sys.modules.values()):
            file = getattr(module, "__file__", None)
            if file and Path(file).resolve() in wanted:
                ray.cloudpickle.register_pickle_by_value(module)

    def batches(self, count: int, cpus: float) -> list[range]:
        """The suite's positions cut into batches (in order)."""
        if count == 0:
            return []
        size = self.batch_size or max(1, min(200, math.ceil(count / max(1.0, 4 * cpus))))
        return [range(start, min(start + size, count)) for start in range(0, count, size)]

    # -- suites -----------------------------------------------------------------------------

    async def run_scenarios(
        self, scenarios: Sequence[Scenario], plan: RunPlan, sink: ScenarioSink
    ) -> None:
        import asyncio

        from scenarist.distributed.batch import run_scenario_batch

        ray, started = self._connect()
        self._ship(ray)
        try:
            cpus = float(ray.cluster_resources().get("CPU", 1.0))
            cuts = self.batches(len(scenarios), cpus)
            self.last_batches = len(cuts)
            limiter, actor = _limiter_actor(ray, plan)
            options = _options(plan)
            tape = _tape()
            remote = self._remote(ray, run_scenario_batch)
            pickle = ray.cloudpickle
            refs: dict[Any, range] = {}
            tasks: dict[Any, Any] = {}
            for cut in cuts:
                payload = pickle.dumps(([scenarios[i] for i in cut], plan.target))
                ref = remote.remote(payload, list(cut), options, tape, limiter)
                future = asyncio.ensure_future(_awaitable(ref))
                refs[future], tasks[future] = cut, ref
            try:
                await self._collect(ray, refs, scenarios, plan, sink)
            finally:
                _cancel(ray, tasks)
                if actor is not None and plan.limiter is not None:
                    _take_stats(ray, actor, plan)
        finally:
            if started:
                ray.shutdown()

    async def _collect(
        self,
        ray: Any,
        refs: dict[Any, range],
        scenarios: Sequence[Scenario],
        plan: RunPlan,
        sink: ScenarioSink,
    ) -> None:
        import asyncio

        from scenarist.formats.runlog import decode_scenario_record

        pending = set(refs)
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: refs[f].start):
                cut = refs[future]
                try:
                    answer = future.result()
                except ray.exceptions.RayTaskError as exc:  # raised by the batch's own code
                    cause = exc.as_instanceof_cause()
                    raise (cause.cause if getattr(cause, "cause", None) else cause) from None
                except (ray.exceptions.RayError, OSError) as exc:  # the worker died twice
                    for index in cut:
                        await sink(index, _lost(scenarios[index], exc))
                    continue
                error = answer.get("error")
                if error is not None:
                    raise UserError(
                        RUNTIME_ENV_HINT.format(module=repr(error["module"]))
                        + f" ({error['message']})"
                    )
                _fold_tape(answer.get("tape"))
                for text in answer["records"]:
                    record = decode_scenario_record(text, source="a Ray batch's record")
                    await sink(record.index, record.result)

    # -- Veval-style item lists ---------------------------------------------------------

    async def run_item_list(
        self,
        harness: Harness,
        scenario_name: str,
        agent: Any,
        shared: list[Any],
        items: Sequence[ScenarioItem],
        workers: int,
        live_model_steps: bool,
    ) -> list[ItemRunResult]:
        """The items in batches on Ray workers; their traces stored through ``harness``.

        A trace-backed item's recording is looked up here and travels with its batch (the
        worker replays from it in memory); a live item's trace comes back as JSON and is
        stored here. Rate limits: ``$SCENARIST_RATE_LIMITS``, shared through one actor.
        """
        import asyncio

        from scenarist.distributed.batch import run_item_batch
        from scenarist.engine.rate_limits import RateLimiter, rate_limits_from_env
        from scenarist.veval.agent_replay import load_recording

        limits = rate_limits_from_env()
        ray, started = self._connect()
        self._ship(ray)
        try:
            cpus = float(ray.cluster_resources().get("CPU", 1.0))
            cuts = self.batches(len(items), cpus)
            self.last_batches = len(cuts)
            actor = (
                ray.remote(num_cpus=0)(_LimiterHolder).remote(RateLimiter(limits))
                if limits
                else None
            )
            limiter = RemoteLimiter(actor) if actor is not None else None
            tape = _tape()
            remote = self._remote(ray, run_item_batch)
            options = {"workers": workers, "live_model_steps": live_model_steps}
            refs: dict[Any, range] = {}
            tasks: dict[Any, Any] = {}
            for cut in cuts:
                batch = [items[i] for i in cut]
                recordings: dict[str, str] = {}
                for item in batch:
                    if item.is_trace_backed and item.trace is None and item.trace_id:
                        found = await load_recording(harness.store, item.trace_id)
                        if found is not None:
                            recordings[item.trace_id] = found.model_dump_json()
                payload = ray.cloudpickle.dumps((scenario_name, agent, shared, batch))
                ref = remote.remote(payload, list(cut), options, recordings, tape, limiter)
                future = asyncio.ensure_future(_awaitable(ref))
                refs[future], tasks[future] = cut, ref
            results: list[ItemRunResult | None] = [None] * len(items)
            try:
                pending = set(refs)
                while pending:
                    done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                    for future in done:
                        await self._take_items(ray, future, refs[future], items, harness, results)
            finally:
                _cancel(ray, tasks)
                if actor is not None:
                    ray.kill(actor)
            return [r for r in results if r is not None]
        finally:
            if started:
                ray.shutdown()

    async def _take_items(
        self,
        ray: Any,
        future: Any,
        cut: range,
        items: Sequence[ScenarioItem],
        harness: Harness,
        results: list[ItemRunResult | None],
    ) -> None:
        import json

        from scenarist.model.record import TraceRecord
        from scenarist.veval.results import ItemRunResult

        try:
            answer = future.result()
        except ray.exceptions.RayTaskError as exc:
            cause = exc.as_instanceof_cause()
            raise (cause.cause if getattr(cause, "cause", None) else cause) from None
        except (ray.exceptions.RayError, OSError) as exc:
            failure = _lost_message(exc)
            for index in cut:
                results[index] = ItemRunResult(item=items[index], passed=False, failures=[failure])
            return
        if answer.get("error") is not None:
            error = answer["error"]
            raise UserError(
                RUNTIME_ENV_HINT.format(module=repr(error["module"])) + f" ({error['message']})"
            )
        _fold_tape(answer.get("tape"))
        for index, entry in zip(cut, answer["items"], strict=True):
            result = ItemRunResult.model_validate(
                {**json.loads(entry["result"]), "item": items[index]}
            )
            if entry["trace"] is not None:
                record = TraceRecord.model_validate_json(entry["trace"])
                await harness.store.save_trace(record)
                result.record = record
            results[index] = result


class RemoteLimiter:
    """The run's limiter as a worker sees it: every turn is booked with the one actor."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    def acquire(self, key: str, tokens: int = 0) -> None:
        _ray().get(self.actor.acquire.remote(key, tokens))

    async def acquire_async(self, key: str, tokens: int = 0) -> None:
        await self.actor.acquire.remote(key, tokens)

    def pause(self, key: str, seconds: float) -> None:
        self.actor.pause.remote(key, seconds)  # ordered before this caller's next turn

    def take_retry(self) -> bool:
        return bool(_ray().get(self.actor.take_retry.remote()))

    async def take_retry_async(self) -> bool:
        return bool(await self.actor.take_retry.remote())


class _LimiterHolder:
    """The Ray actor's body: one ``RateLimiter``, waited on in the actor (its clock)."""

    def __init__(self, limiter: Any) -> None:
        self.limiter = limiter

    async def acquire(self, key: str, tokens: int = 0) -> None:
        await self.limiter.acquire_async(key, tokens)

    async def pause(self, key: str, seconds: float) -> None:
        self.limiter.pause(key, seconds)

    async def take_retry(self) -> bool:
        return bool(self.limiter.take_retry())

    async def stats(self) -> dict[str, Any]:
        return dict(self.limiter.snapshot().__dict__)

    async def now(self) -> float:
        return float(self.limiter.clock.now())


def _limiter_actor(ray: Any, plan: RunPlan) -> tuple[RemoteLimiter | None, Any]:
    from scenarist.engine.rate_limits import RateLimiter

    if not isinstance(plan.limiter, RateLimiter):
        return None, None
    actor = ray.remote(num_cpus=0)(_LimiterHolder).remote(plan.limiter)
    return RemoteLimiter(actor), actor


def _take_stats(ray: Any, actor: Any, plan: RunPlan) -> None:
    from scenarist.engine.rate_limits import LimiterStats, RateLimiter

    try:
        stats = ray.get(actor.stats.remote(), timeout=30)
    except Exception:  # the actor is gone: the report says nothing rather than wrong
        return
    if isinstance(plan.limiter, RateLimiter):
        plan.limiter.stats.add(LimiterStats(**stats))
    ray.kill(actor)


def _options(plan: RunPlan) -> dict[str, Any]:
    from scenarist.engine.adaptive import AdaptiveConcurrency

    concurrency: Any = plan.concurrency
    if isinstance(concurrency, AdaptiveConcurrency):
        concurrency = {"auto": concurrency.cap, "initial": concurrency.level}
    return {
        "return_exception": plan.return_exception,
        "parallel": plan.parallel,
        "concurrency": concurrency,
        "timeout_s": plan.timeout_s,
        "repeat": plan.repeat,
        "repeat_auto": plan.repeat_auto,
        "min_pass_rate": plan.min_pass_rate,
    }


def _tape() -> dict[str, Any] | None:
    """The hand-off of the cassette active in this context, if any."""
    from scenarist.replay.cassette import Cassette
    from scenarist.tracing.http import capture as http_capture

    source = http_capture._source.get()
    return source.hand_off() if isinstance(source, Cassette) else None


def _fold_tape(report: dict[str, Any] | None) -> None:
    if report is None:
        return
    from scenarist.replay.cassette import Cassette
    from scenarist.tracing.http import capture as http_capture

    source = http_capture._source.get()
    if isinstance(source, Cassette):
        source.take_back(report)


def _cancel(ray: Any, tasks: dict[Any, Any]) -> None:
    """Batches still running when the run stops (an error, Ctrl-C) are cancelled."""
    for future, ref in tasks.items():
        if not future.done():
            future.cancel()
            with contextlib.suppress(Exception):  # already finished, or the cluster is gone
                ray.cancel(ref, force=True)


async def _awaitable(ref: Any) -> Any:
    return await ref


def _lost(scenario: Scenario, error: BaseException) -> ScenarioResult:
    """An ERROR result for a scenario whose batch was lost (its worker died twice)."""
    from scenarist.model.results import ScenarioResult, StepError, TestCaseResult

    message = _lost_message(error)
    step = TestCaseResult(
        error=StepError(message=message, exception_type=type(error).__name__, phase="executor")
    )
    return ScenarioResult(scenario_name=scenario.name, steps=[step], tags=list(scenario.tags))


def _lost_message(error: BaseException) -> str:
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return (
        "the Ray worker running this batch died and its retry died too: "
        f"{type(error).__name__}: {first}"
    )
