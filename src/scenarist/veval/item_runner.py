"""The item runner: a Veval-style scenario's items through an agent, each isolated.

A synthetic item runs the agent live on its ``input``; a trace-backed item replays its
recording (:mod:`scenarist.veval.agent_replay`, mocked: never a live call). Then the
scenario's assertions and the item's own. Whatever one item does (raise, fail, time out),
the others still run; results keep item order, and the run summary is always stored.
Zero items is not a pass.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from scenarist.engine._lanes import lane
from scenarist.errors import UserError
from scenarist.model._construct import construct
from scenarist.model.items import NO_INPUT_MESSAGE, ScenarioItem
from scenarist.model.record import TraceRecord
from scenarist.replay.step_replay import ReplayOptions
from scenarist.tracing.context import RunContext
from scenarist.tracing.http._throttle import Throttle, throttling
from scenarist.veval._watch import seen
from scenarist.veval.assertions import Assertion, failures_of
from scenarist.veval.execution import Agent, Harness, TraceWrites
from scenarist.veval.results import ItemRunResult, ScenarioRunResult

if TYPE_CHECKING:
    from scenarist.engine.budget import Budget

__all__ = ["BUDGET_PREFIX", "ItemExecutor", "run_item_list", "run_items"]

BUDGET_PREFIX = "BUDGET: "
"""The failure of an item the run's budget did not start (its only failure)."""


async def _scenario_items(
    harness: Harness, scenario_name: str, items: Sequence[ScenarioItem] | None
) -> tuple[Sequence[ScenarioItem], str | None]:
    """The items to run (fetched from the store for ``None``) and why none, if none."""
    error: str | None = None
    if items is None:
        items = await harness.store.get_items(scenario_name)
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
    return items, error


class ItemExecutor(Protocol):
    """Runs an item list somewhere else (``RayExecutor``): results in item order, their
    traces already stored through ``harness``."""

    async def run_item_list(
        self,
        harness: Harness,
        scenario_name: str,
        agent: Agent,
        shared: list[Assertion],
        items: Sequence[ScenarioItem],
        workers: int,
        live_model_steps: bool,
    ) -> list[ItemRunResult]: ...


async def run_items(
    harness: Harness,
    scenario_name: str,
    agent: Agent,
    shared: list[Assertion],
    items: Sequence[ScenarioItem] | None,
    workers: int,
    live_model_steps: bool,
    executor: ItemExecutor | None = None,
    budget: Budget | None = None,
) -> ScenarioRunResult:
    """Run every item with at most ``workers`` at a time; store and return the summary.

    With an ``executor`` (a ``RayExecutor``) the items run there in batches, each batch
    with ``workers`` at a time; the summary is stored here all the same. The items' live
    LLM calls are paced by ``$SCENARIST_RATE_LIMITS`` (see :mod:`scenarist.engine.rate_limits`).
    ``budget``: each item starts only if its estimate fits (a trace-backed item replays:
    estimated at 0); one that does not fails with ``BUDGET: not started: ...`` and so do
    the items after it (see :mod:`scenarist.engine.budget`)."""
    run_id = "run_" + secrets.token_hex(12)
    started_at = datetime.now(UTC)
    t0 = time.perf_counter()
    inline = items is not None
    items, error = await _scenario_items(harness, scenario_name, items)
    results: Sequence[ItemRunResult | None]
    if budget is not None and executor is not None:
        raise UserError("budget= works with local item runs only, not with executor=")
    if executor is not None and items:
        results = await executor.run_item_list(
            harness, scenario_name, agent, shared, items, workers, live_model_steps
        )
    else:
        with throttling(_env_throttle()):
            results = await run_item_list(
                harness,
                scenario_name,
                agent,
                shared,
                items,
                workers,
                live_model_steps,
                budget=budget,
            )

    run = construct(
        ScenarioRunResult,
        {
            "scenario_name": scenario_name,
            "run_id": run_id,
            "results": [r for r in results if r is not None],
            "started_at": started_at,
            "duration_ms": (time.perf_counter() - t0) * 1000,
            "error": error,
            "inline_items": inline,
        },
    )
    await harness.store.save_scenario_run(run.to_record(datetime.now(UTC)))
    seen(run)  # `scenarist run` counts the runs a file's module-level code makes
    return run


def _env_throttle() -> Throttle | None:
    """``$SCENARIST_RATE_LIMITS`` for the items' live LLM calls (none when unset)."""
    from scenarist.engine.rate_limits import RateLimiter, rate_limits_from_env

    limits = rate_limits_from_env()
    return Throttle(RateLimiter(limits)) if limits else None


async def run_item_list(
    harness: Harness,
    scenario_name: str,
    agent: Agent,
    shared: list[Assertion],
    items: Sequence[ScenarioItem],
    workers: int,
    live_model_steps: bool,
    *,
    indices: Sequence[int] | None = None,
    budget: Budget | None = None,
) -> list[ItemRunResult | None]:
    """The items' results in order (``indices``: their positions in the whole list, for
    their cassette lanes, when this is one batch of it), every trace write awaited."""
    results: list[ItemRunResult | None] = [None] * len(items)
    positions = list(indices) if indices is not None else list(range(len(items)))
    pending = iter(enumerate(items))

    async def worker() -> None:
        for index, item in pending:
            with lane(f"{scenario_name}:item:{item.name or positions[index]}"):
                if budget is None:
                    results[index] = await _run_item(
                        harness, scenario_name, agent, item, shared, live_model_steps
                    )
                else:
                    results[index] = await _run_budgeted(
                        budget,
                        positions[index],
                        harness,
                        scenario_name,
                        agent,
                        item,
                        shared,
                        live_model_steps,
                    )

    with TraceWrites.deferred() as writes:  # a worker takes its next item while it stores
        async with asyncio.TaskGroup() as group:
            for _ in range(min(workers, len(items))):
                group.create_task(worker())
    unstored = await writes.failures()
    if unstored:
        results = [_unstored(result, unstored) for result in results]
    return results


async def _run_budgeted(
    budget: Budget,
    position: int,
    harness: Harness,
    scenario_name: str,
    agent: Agent,
    item: ScenarioItem,
    shared: list[Assertion],
    live_model_steps: bool,
) -> ItemRunResult:
    """``_run_item`` if the budget lets the item start; its live spend is counted."""
    from scenarist.engine.budget import Estimate, Spend

    name = f"{scenario_name}:item:{item.name or position}"
    replayed = item.is_trace_backed and not (item.live_model_steps or live_model_steps)
    fallback = Estimate(0.0, 0, "recording") if replayed else None
    refused, ticket = await budget.admit(name, fallback=fallback)
    if ticket is None:
        return ItemRunResult(item=item, passed=False, failures=[BUDGET_PREFIX + str(refused)])
    try:
        result = await _run_item(harness, scenario_name, agent, item, shared, live_model_steps)
    except BaseException:
        budget.settle(name, ticket, Spend(), 0, learn=False)
        raise
    record = result.record
    spend = budget.spend_of_spans(list(record.steps)) if record is not None else Spend()
    budget.settle(name, ticket, spend, 1, learn=not replayed)
    return result


async def _run_item(
    harness: Harness,
    scenario_name: str,
    agent: Agent,
    item: ScenarioItem,
    shared: list[Assertion],
    live_model_steps: bool,
) -> ItemRunResult:
    t0 = time.perf_counter()
    try:
        if item.is_trace_backed:
            return await _run_trace_backed(harness, agent, item, shared, live_model_steps, t0)
        return await _run_synthetic(harness, scenario_name, agent, item, shared, t0)
    except Exception as exc:  # an item never takes the others down
        return ItemRunResult(
            item=item,
            passed=False,
            failures=[f"Item failed: {type(exc).__name__}: {exc}"],
            duration_ms=(time.perf_counter() - t0) * 1000,
        )


async def _run_synthetic(
    harness: Harness,
    scenario_name: str,
    agent: Agent,
    item: ScenarioItem,
    shared: list[Assertion],
    t0: float,
) -> ItemRunResult:
    """Run the agent live on the item's input, then assert."""
    if item.input is None:
        return ItemRunResult(item=item, passed=False, failures=[NO_INPUT_MESSAGE])
    ctx = RunContext(input=item.input, agent_name=scenario_name)
    record, error = await harness.execute(ctx, agent)
    failures: list[str] = []
    if error is not None:
        from scenarist.redaction import redact_text  # an error only: a URL's key

        failures.append(redact_text(f"Agent threw exception: {error}"))
    with harness.assertion_scope():
        failures.extend(await failures_of(ctx, record, [*shared, *item.assertions]))
    return _item_result(item, failures, ctx, record, t0)


async def _run_trace_backed(
    harness: Harness,
    agent: Agent,
    item: ScenarioItem,
    shared: list[Assertion],
    live_model_steps: bool,
    t0: float,
) -> ItemRunResult:
    """Replay the item's recording with mocked steps (never a live call)."""
    from scenarist.veval.agent_replay import load_recording, replay_recording

    recording = await load_recording(harness.store, item.trace or item.trace_id or "")
    if recording is None:
        failure = (  # Veval's text, then where we looked and the offline fix
            f"trace '{item.trace_id}' not found — it may have expired under your plan's "
            "retention, or the ID or workspace is wrong. Pin it on the trace page in the "
            "dashboard to keep it. (Looked in the store: record it with client.run_async(...), "
            "or give the item an inline trace=.)"
        )
        return ItemRunResult(item=item, passed=False, failures=[failure])
    # Spec 04 §4: in scenarios a changed input fails the item with a diff (Veval silently
    # serves the wrong output); replay_async and the test double serve it, as Veval does.
    options = ReplayOptions(
        mock_llm_responses=True,
        live_model_steps=item.live_model_steps or live_model_steps,
        on_divergence="fail",
    )
    replay = await replay_recording(harness, recording, agent, options, [*shared, *item.assertions])
    result = _item_result(
        item, replay.failures, replay.replayed_context, replay.replayed_record, t0
    )
    result.replay = replay
    return result


def _unstored(
    result: ItemRunResult | None, unstored: dict[str, BaseException]
) -> ItemRunResult | None:
    """``result`` failed if its trace could not be stored (a run that is not kept is not
    a pass: a later replay of it would find nothing)."""
    error = unstored.get(result.trace_id or "") if result is not None else None
    if result is None or error is None:
        return result
    failure = f"The run's trace could not be stored: {type(error).__name__}: {error}"
    return result.model_copy(update={"passed": False, "failures": [*result.failures, failure]})


def _item_result(
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
