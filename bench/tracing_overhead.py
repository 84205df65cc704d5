"""Tracing benchmarks: span recording overhead and a Veval-style scenario of 100 items.

    .venv/bin/python bench/tracing_overhead.py [--spans 100000] [--items 100]

1. ``span``: cost of recording one span with ``with step(...)`` inside an active run,
   minus the same loop outside any run (target: at most 10 µs per span). Also the
   decorator form and ``ctx.track_step``.
2. ``items``: ``run_scenario_async`` with 100 items against an agent that sleeps 20 ms,
   ``max_concurrency=10`` (ideal: 10 waves x 20 ms = 0.2 s; Veval runs items one by one,
   about 2 s), in-memory store, so the number is scenarist's own overhead.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any


def bench_spans(n: int) -> dict[str, float]:
    from scenarist.tracing import RunContext, step

    @step(kind="tool")
    def tool(x: int) -> int:
        return x

    def loop_with() -> None:
        for i in range(n):
            with step("s", input=i):
                pass

    def loop_decorated() -> None:
        for i in range(n):
            tool(i)

    def timed(fn: Any, ctx: RunContext | None) -> float:
        t0 = time.perf_counter()
        if ctx is None:
            fn()
        else:
            with ctx.recorder:
                fn()
        return (time.perf_counter() - t0) / n * 1e6

    out: dict[str, float] = {}
    for label, fn in (("with_step", loop_with), ("decorator", loop_decorated)):
        base = min(timed(fn, None) for _ in range(3))
        traced = min(timed(fn, RunContext()) for _ in range(3))
        out[f"{label}_us_per_span"] = traced - base
    ctx = RunContext()
    t0 = time.perf_counter()
    with ctx.recorder:
        for i in range(n):
            ctx.track_step("t", i, lambda: None)
    out["track_step_us_per_span"] = (time.perf_counter() - t0) / n * 1e6
    return out


async def bench_items(n: int, concurrency: int, sleep_s: float) -> dict[str, float]:
    from scenarist import ScenarioItem
    from scenarist.store import MemoryStore
    from scenarist.tracing import RunContext, step
    from scenarist.veval.client import Client

    async def agent(ctx: RunContext) -> str:
        async with step("work", input=ctx.input, kind="llm"):
            await asyncio.sleep(sleep_s)
        return f"done {ctx.input}"

    client = Client(store=MemoryStore())
    items = [ScenarioItem(name=f"item {i}", input=i) for i in range(n)]
    t0 = time.perf_counter()
    result = await client.run_scenario_async(
        "bench", agent, items=items, max_concurrency=concurrency
    )
    wall = time.perf_counter() - t0
    ideal = -(-n // concurrency) * sleep_s
    return {"items": n, "wall_s": wall, "ideal_s": ideal, "wall_over_ideal": wall / ideal,
            "passed": result.pass_count}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--spans", type=int, default=100_000)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--json", dest="json_path")
    args = parser.parse_args()
    spans = bench_spans(args.spans)
    items = asyncio.run(bench_items(args.items, 10, 0.020))
    print(
        f"[span] with step(): {spans['with_step_us_per_span']:.2f} us/span, "
        f"@step: {spans['decorator_us_per_span']:.2f} us/span, "
        f"ctx.track_step: {spans['track_step_us_per_span']:.2f} us/span (target <= 10)"
    )
    print(
        f"[items] {items['items']} items x 20 ms, max_concurrency=10: "
        f"wall {items['wall_s']:.3f}s, ideal {items['ideal_s']:.3f}s "
        f"({items['wall_over_ideal']:.2f}x), passed {items['passed']}"
    )
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as fh:
            json.dump({"spans": spans, "items": items}, fh, indent=2)


if __name__ == "__main__":
    main()
