"""The default store under load: concurrent trace writes and a large run log.

    .venv/bin/python bench/store_writes.py [--items 100] [--agent-ms 20] [--concurrency 10]
                                           [--scenarios 1000] [--repeat 3]

Both workloads use the store a user gets with no configuration (``Client()`` and
``default_store()``: SQLite under a fresh temporary ``SCENARIST_HOME``), measured after
the database exists, so schema creation is not counted.

1. ``items``: ``run_scenario_async`` with 100 Veval-style items against an agent that
   sleeps 20 ms, ``max_concurrency=10``: every item's trace and the run summary are
   written to the store. Ideal: 10 waves x 20 ms = 0.2 s; target <= 0.25 s. The same run
   with ``MemoryStore`` is printed beside it, so the store's own share is visible.
2. ``runlog``: a 1,000-scenario run log (5 interactions, 3 checks each) stored through
   ``default_store().ingest_run_log`` (what ``scenarist run`` does). Target <= 0.5 s.

Medians of ``--repeat`` runs (minimum and maximum shown too). Not a test: nothing fails.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from typing import Any


async def _items_once(items: int, agent_s: float, concurrency: int, store: Any) -> float:
    from scenarist import Client, ScenarioItem, TraceAssert

    async def agent(ctx: Any) -> str:
        await asyncio.sleep(agent_s)
        return f"answer to {ctx.input}"

    client = Client(store=store)
    batch = [ScenarioItem(name=f"item-{i}", input=f"question {i}") for i in range(items)]
    t0 = time.perf_counter()
    result = await client.run_scenario_async(
        "bench_store",
        agent,
        items=batch,
        scenario_assertions=[TraceAssert.no_errors()],
        max_concurrency=concurrency,
    )
    elapsed = time.perf_counter() - t0
    assert result.pass_count == items, result
    return elapsed


def bench_items(items: int, agent_ms: float, concurrency: int, repeat: int) -> dict[str, Any]:
    from scenarist.store import MemoryStore
    from scenarist.store.default import default_store

    async def main() -> dict[str, list[float]]:
        store = default_store()
        await _items_once(2, 0.001, 2, store)  # the database exists before timing
        out: dict[str, list[float]] = {"default": [], "memory": []}
        for _ in range(repeat):
            out["default"].append(await _items_once(items, agent_ms / 1000, concurrency, store))
            out["memory"].append(
                await _items_once(items, agent_ms / 1000, concurrency, MemoryStore())
            )
        return out

    times = asyncio.run(main())
    return {name: _stats(values) for name, values in times.items()}


def _run_log(scenarios: int) -> Any:
    from scenarist import Equals, Scenario, StringMatching, Suite
    from scenarist.formats.runlog import run_log_from_suite_result

    def agent(inputs: str) -> str:
        return f"echo: {inputs}"

    suite = Suite(name="bench_runlog")
    for i in range(scenarios):
        scenario = Scenario(f"scenario_{i:04d}")
        for turn in range(5):
            scenario = scenario.interact(f"message {turn} of {i}", agent)
        last = Equals(expected_value=f"echo: message 4 of {i}", target_key="trace.last.outputs")
        suite.append(
            scenario.check(StringMatching(keyword="echo"))
            .check(last)
            .check(StringMatching(keyword="message"))
        )
    return run_log_from_suite_result(suite.run_sync())


def bench_runlog(scenarios: int, repeat: int) -> dict[str, Any]:
    from scenarist.store.default import default_store

    log = _run_log(scenarios)

    async def main() -> list[float]:
        store = default_store()
        times = []
        for attempt in range(repeat + 1):
            fresh = log.model_copy(
                update={"header": log.header.model_copy(update={"run_id": f"run_{attempt}"})}
            )
            t0 = time.perf_counter()
            await store.ingest_run_log(fresh)
            if attempt:  # the first stores the schema too
                times.append(time.perf_counter() - t0)
        return times

    return _stats(asyncio.run(main()))


def _stats(values: list[float]) -> dict[str, float]:
    return {
        "median_s": round(statistics.median(values), 4),
        "min_s": round(min(values), 4),
        "max_s": round(max(values), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--agent-ms", type=float, default=20.0)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--scenarios", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["SCENARIST_HOME"] = home
        os.environ.pop("SCENARIST_DATABASE_URL", None)
        os.environ.pop("SCENARIST_URL", None)
        items = bench_items(args.items, args.agent_ms, args.concurrency, args.repeat)
        runlog = bench_runlog(args.scenarios, args.repeat)
    ideal = args.items / args.concurrency * args.agent_ms / 1000
    report = {
        "python": sys.version.split()[0],
        "items": {"ideal_s": ideal, "target_s": 0.25, **items},
        "runlog": {"scenarios": args.scenarios, "target_s": 0.5, **runlog},
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
