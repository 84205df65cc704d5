"""One batch of a distributed run, as a worker runs it (no Ray import here).

A Ray task calls :func:`run_scenario_batch` (or :func:`run_item_batch`) in a plain
function: Ray refuses ``async def`` remote functions, so the batch gets its own event
loop with ``asyncio.run``. What comes in: the batch's scenarios (or items) and the target
as cloudpickle bytes, the run's settings as plain data, the cassette's hand-off when one
is active, and a handle on the limiter actor. What goes back is JSON-ready data only:
each result as its run-log record text, the cassette's report, or an error saying why
the batch could not start (the agent is not importable on the worker).
"""

from __future__ import annotations

import asyncio
import pickle
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from scenarist.errors import LiveCallBlockedError, ReplayMissError

__all__ = ["load_payload", "run_item_batch", "run_scenario_batch"]


def load_payload(payload: bytes) -> tuple[Any, dict[str, Any] | None]:
    """The batch's objects, or a ``not_importable`` error naming the missing module."""
    try:
        return pickle.loads(payload), None
    except (ImportError, AttributeError) as exc:  # a module, or a name in it, not there
        module = getattr(exc, "name", None)
        return None, {
            "kind": "not_importable",
            "module": module,
            "message": f"{type(exc).__name__}: {exc}",
        }


def concurrency_from(options: dict[str, Any]) -> Any:
    """``max_concurrency`` as sent: an int, ``None``, or ``{"auto": cap}`` (its own AIMD)."""
    value = options.get("concurrency")
    if isinstance(value, dict):
        from scenarist.engine.adaptive import AdaptiveConcurrency

        return AdaptiveConcurrency(int(value["auto"]), initial=int(value.get("initial", 4)))
    return value


@contextmanager
def worker_cassette(tape: dict[str, Any] | None, report: dict[str, Any]) -> Iterator[None]:
    """The driver's cassette, re-opened here on a private copy; its report filled in."""
    if tape is None:
        yield
        return
    from scenarist.replay.cassette import cassette

    with tempfile.TemporaryDirectory(prefix="scenarist-tape-") as folder:
        path = Path(folder) / Path(tape["path"]).name
        if tape["text"] is not None:
            path.write_text(tape["text"], encoding="utf-8")
        session = cassette(
            path,
            tape["mode"],
            redact=tape["redact"],
            match_on=tape["match_on"],
            allow_network=tape["allow_network"],
            llm_hosts=tape.get("llm_hosts", ()),
        )
        try:
            with session:
                yield
        except (ReplayMissError, LiveCallBlockedError):
            pass  # the driver's cassette raises it when it is left, as a local run does
        finally:
            report.update(session.report())


def run_scenario_batch(
    payload: bytes,
    indices: list[int],
    options: dict[str, Any],
    tape: dict[str, Any] | None,
    limiter: Any,
) -> dict[str, Any]:
    """Run one batch of scenarios with ``LocalExecutor``; records back as JSON text."""
    loaded, error = load_payload(payload)
    if error is not None:
        return {"error": error}
    scenarios, target = loaded
    from scenarist._jsonable import dump_json
    from scenarist.engine.executor import LocalExecutor, RunPlan
    from scenarist.formats.runlog import ScenarioRecord
    from scenarist.model.results import ScenarioResult

    plan = RunPlan(
        target=target,
        return_exception=options["return_exception"],
        parallel=options["parallel"],
        concurrency=concurrency_from(options),
        timeout_s=options["timeout_s"],
        repeat=options["repeat"],
        limiter=limiter,
        indices=indices,
        repeat_auto=options.get("repeat_auto", False),
        min_pass_rate=options.get("min_pass_rate"),
    )
    records: list[str] = []
    tape_report: dict[str, Any] = {}

    async def keep(index: int, result: ScenarioResult) -> None:
        records.append(dump_json(ScenarioRecord.from_result(index, result)))

    async def main() -> None:
        with worker_cassette(tape, tape_report):
            await LocalExecutor().run_scenarios(scenarios, plan, keep)

    asyncio.run(main())
    return {"records": records, "tape": tape_report if tape is not None else None}


def run_item_batch(
    payload: bytes,
    indices: list[int],
    options: dict[str, Any],
    recordings: dict[str, str],
    tape: dict[str, Any] | None,
    limiter: Any,
) -> dict[str, Any]:
    """Run one batch of Veval-style items with the local item runner, in memory.

    ``recordings`` are the trace-backed items' recorded traces (JSON), looked up by the
    driver in its store: the worker replays from them and never reaches that store.
    What comes back per item: its result (JSON) and, for a live run, its trace (JSON),
    which the driver stores.
    """
    loaded, error = load_payload(payload)
    if error is not None:
        return {"error": error}
    scenario_name, agent, shared, items = loaded
    from contextlib import nullcontext

    from scenarist.model.record import TraceRecord
    from scenarist.store.memory import MemoryStore
    from scenarist.tracing.context import RunContext
    from scenarist.tracing.http._throttle import Throttle, throttling
    from scenarist.veval.execution import Agent, Executed, Harness, execute_traced
    from scenarist.veval.item_runner import run_item_list

    store = MemoryStore()

    async def execute(ctx: RunContext, agent: Agent) -> Executed:
        return await execute_traced(store, ctx, agent)

    tape_report: dict[str, Any] = {}
    out: list[dict[str, Any]] = []

    async def main() -> None:
        for text in recordings.values():
            await store.save_trace(TraceRecord.model_validate_json(text))
        harness = Harness(store, execute, nullcontext)
        throttle = Throttle(limiter) if limiter is not None else None
        with worker_cassette(tape, tape_report), throttling(throttle):
            results = await run_item_list(
                harness,
                scenario_name,
                agent,
                shared,
                items,
                options["workers"],
                options["live_model_steps"],
                indices=indices,
            )
        for result in results:
            if result is None:  # never: every item yields a result
                continue
            record = result.record
            out.append(
                {
                    "result": result.model_dump_json(
                        exclude={"item", "context", "record", "replay"}
                    ),
                    "trace": record.model_dump_json() if record is not None else None,
                }
            )

    asyncio.run(main())
    return {"items": out, "tape": tape_report if tape is not None else None}
