"""The rate limiter's accuracy: requests per minute achieved against configured (not a test).

A suite of scenarios, each making one chat completion with one shared ``httpx2`` client to a
``FakeLLMServer`` on 127.0.0.1, runs with ``parallel=True, max_concurrency=50`` (far
more callers than the budget allows) under ``rate_limits={"openai/*": "<R>rpm"}`` on the
real clock. The provider stamps each request as it arrives. A budget lets a burst of one
second's worth go at once, then one call every ``60 / rpm`` s. The achieved rate is taken
in the steady state, over the second half of the arrivals: ``(n - 1) / (last - first) *
60``; the whole run's ``(arrivals - burst) / (last - first) * 60`` is reported too (its
first arrivals are late: the client's first connections). Also reported: the busiest
1-second window the provider saw against the schedule's own bound (burst + rate x 1 s);
arrivals can exceed it by the jitter between a call's turn and its bytes reaching the
provider (the event loop, the machine).

    .venv/bin/python bench/rate_limiter.py [--rpm 1200,3000] [--seconds 10] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx2

from scenarist import Scenario, Suite
from scenarist.testing import FakeLLMServer, FakeRequest, Reply, ScriptedLLM


def measure(rpm: float, seconds: float) -> dict[str, Any]:
    arrivals: list[float] = []
    lock = threading.Lock()

    def provider(request: FakeRequest) -> Reply:
        with lock:
            arrivals.append(time.monotonic())
        return Reply("ok")

    count = max(4, int(rpm / 60 * seconds))
    suite = Suite(
        name="paced", scenarios=[Scenario(f"s{i}").interact(f"q{i}") for i in range(count)]
    )

    async def run(server: FakeLLMServer) -> Any:
        async with httpx2.AsyncClient(timeout=60) as http:  # one client, as an SDK's

            async def agent(inputs: str) -> str:
                response = await http.post(
                    server.openai_url + "/chat/completions",
                    json={"model": "m", "messages": [{"role": "user", "content": inputs}]},
                )
                return str(response.status_code)

            return await suite.run(
                agent,
                parallel=True,
                max_concurrency=50,
                verbose=False,
                rate_limits={"openai/*": f"{rpm:g}rpm"},
            )

    with FakeLLMServer(ScriptedLLM(provider)) as server:
        result = asyncio.run(run(server))
    if result.errored_count:
        raise SystemExit(f"bench: {result.errored_count} scenarios errored")
    arrivals.sort()
    burst = max(1, int(rpm / 60))
    # steady state: the second half (warm connections; the burst and the pool's first
    # connects, which delay the first arrivals, are behind)
    late = arrivals[len(arrivals) // 2 :]
    span = late[-1] - late[0]
    achieved = (len(late) - 1) / span * 60 if span > 0 else 0.0
    whole = (len(arrivals) - burst) / (arrivals[-1] - arrivals[0]) * 60
    busiest = max(sum(1 for t in arrivals if start <= t < start + 1.0) for start in arrivals)
    return {
        "configured_rpm": rpm,
        "requests": len(arrivals),
        "achieved_rpm": achieved,
        "error_pct": (achieved - rpm) / rpm * 100,
        "whole_run_rpm": whole,
        "busiest_second": busiest,
        "bound_per_second": burst + rpm / 60,
        "waited_s": result.rate_limits.waited_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rpm", default="1200,3000")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rows = [measure(float(r), args.seconds) for r in args.rpm.split(",")]
    print(f"Rate limiter accuracy over ~{args.seconds:g} s per budget (real clock, 50 callers)")
    print("  configured rpm  requests  achieved rpm   error  whole run  busiest 1 s  bound")
    for row in rows:
        print(
            f"  {row['configured_rpm']:>14.0f}  {row['requests']:>8}"
            f"  {row['achieved_rpm']:>12.1f}  {row['error_pct']:>+5.1f}%"
            f"  {row['whole_run_rpm']:>9.1f}"
            f"  {row['busiest_second']:>11}  {row['bound_per_second']:>5.0f}"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
