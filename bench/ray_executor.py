"""RayExecutor against LocalExecutor on the same suite, and throughput by worker count
(not a test).

The suite: ``N`` scenarios, each one interaction with an async target sleeping 20 ms and
one check, ``parallel=True, max_concurrency=100`` (spec 07's suite workload). Measured:

* LocalExecutor: the whole suite in this process;
* RayExecutor with 1, 2 and 4 workers (one local Ray with 4 CPUs; a batch asks for
  ``4 / workers`` CPUs, so at most ``workers`` batches run at once), after one warm-up
  run that starts the worker processes (its time is reported as the cold start);
* the per-batch overhead: the same runs with a target that returns at once, divided by
  the number of batches (what a batch costs beyond its scenarios' own work).

Ray is kept on loopback: the script re-runs itself inside ``unshare -n`` (only ``lo``
up), the spec's recipe, with its own Ray temp folder.

    .venv/bin/python bench/ray_executor.py [--scenarios N] [--workers 1,2,4] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
IN_NETNS = "SCENARIST_BENCH_NETNS"


async def sleepy(inputs: str) -> str:
    await asyncio.sleep(0.02)
    return f"echo {inputs}"


async def instant(inputs: str) -> str:
    return f"echo {inputs}"


def build_suite(count: int) -> Any:
    from scenarist import Scenario, Suite
    from scenarist.checks import StringMatching

    return Suite(
        name="bench",
        scenarios=[
            Scenario(f"s{i}").interact(f"q{i}").check(StringMatching(keyword=f"q{i}"))
            for i in range(count)
        ],
    )


def timed(suite: Any, target: Any, executor: Any) -> float:
    start = time.perf_counter()
    result = suite.run_sync(
        target, parallel=True, max_concurrency=100, executor=executor, verbose=False
    )
    elapsed = time.perf_counter() - start
    if result.passed_count != len(suite.scenarios):
        raise SystemExit(f"bench: {len(suite.scenarios) - result.passed_count} scenarios failed")
    return elapsed


def measure(count: int, workers: list[int], rounds: int) -> dict[str, Any]:
    import ray

    cpus = max(workers)
    folder = tempfile.mkdtemp(prefix="scn-bench-ray-", dir="/tmp")
    started = time.perf_counter()
    ray.init(
        num_cpus=cpus,
        include_dashboard=False,
        log_to_driver=False,
        _temp_dir=folder,
        runtime_env={"env_vars": {"PYTHONPATH": str(ROOT / "bench")}},
    )
    init_s = time.perf_counter() - started
    try:
        return measure_on(ray, count, workers, rounds, init_s=init_s)
    finally:
        ray.shutdown()
        shutil.rmtree(folder, ignore_errors=True)


def measure_on(
    ray: Any,
    count: int,
    workers: list[int],
    rounds: int,
    *,
    init_s: float = 0.0,
    actor_calls: int = 2000,
) -> dict[str, Any]:
    """The measurements on a Ray that is already up (with ``max(workers)`` CPUs and
    ``bench/`` on its workers' path); the smoke test runs them on the test session's Ray,
    with few limiter-actor calls."""
    from scenarist.distributed.ray import RayExecutor
    from scenarist.engine.executor import LocalExecutor

    sys.path.insert(0, str(ROOT / "bench"))
    import ray_executor as this  # the targets by module name, importable on the workers

    suite = build_suite(count)
    cpus = max(workers)
    local = min(timed(suite, this.sleepy, LocalExecutor()) for _ in range(rounds))
    local_instant = min(timed(suite, this.instant, LocalExecutor()) for _ in range(rounds))
    cold = timed(suite, this.sleepy, RayExecutor(num_cpus=cpus / workers[0]))
    rows = []
    for count_workers in workers:
        executor = RayExecutor(num_cpus=cpus / count_workers)
        timed(suite, this.instant, executor)  # warm this shape
        sleepy_s = min(timed(suite, this.sleepy, executor) for _ in range(rounds))
        instant_s = min(timed(suite, this.instant, executor) for _ in range(rounds))
        batches = executor.last_batches
        rows.append(
            {
                "workers": count_workers,
                "batches": batches,
                "suite_s": sleepy_s,
                "scenarios_per_s": count / sleepy_s,
                "overhead_per_scenario_ms": (sleepy_s - local) / count * 1000,
                "per_batch_overhead_ms": (instant_s - local_instant) / batches * 1000,
            }
        )
    actor = actor_turns(ray, actor_calls)
    return {
        "limiter_actor": actor,
        "scenarios": count,
        "ray_init_s": init_s,
        "cold_first_run_s": cold,
        "local_s": local,
        "local_instant_s": local_instant,
        "ideal_s": 0.02 * -(-count // 100),
        "rows": rows,
    }


def actor_turns(ray: Any, calls: int) -> dict[str, float]:
    """The limiter actor's cost per turn: one caller waiting for each, and many at once."""
    from scenarist.distributed.ray import RemoteLimiter, _LimiterHolder
    from scenarist.engine.rate_limits import RateLimit, RateLimiter

    limiter = RateLimiter([RateLimit("*", requests=1e9, burst=1e9)])
    actor = ray.remote(num_cpus=0)(_LimiterHolder).remote(limiter)
    remote = RemoteLimiter(actor)
    remote.acquire("openai/m")  # the actor is up
    start = time.perf_counter()
    for _ in range(calls // 10):
        remote.acquire("openai/m")
    one_by_one = (time.perf_counter() - start) / (calls // 10)
    start = time.perf_counter()
    ray.get([actor.acquire.remote("openai/m", 0) for _ in range(calls)])
    many = calls / (time.perf_counter() - start)
    ray.kill(actor)
    return {"round_trip_ms": one_by_one * 1000, "turns_per_s_in_flight": many}


def report(numbers: dict[str, Any]) -> None:
    count = numbers["scenarios"]
    print(f"Suite of {count} scenarios x 20 ms, parallel, max_concurrency=100 (per batch)")
    print(
        f"  Ray start {numbers['ray_init_s']:.1f} s; first Ray run (workers starting) "
        f"{numbers['cold_first_run_s']:.2f} s"
    )
    print(
        f"  LocalExecutor:            {numbers['local_s']:.3f} s "
        f"({count / numbers['local_s']:.0f} scenarios/s; ideal {numbers['ideal_s']:.2f} s)"
    )
    actor = numbers["limiter_actor"]
    print(
        f"  limiter actor: {actor['round_trip_ms']:.2f} ms a turn one at a time, "
        f"{actor['turns_per_s_in_flight']:.0f} turns/s with many in flight"
    )
    print("  workers  batches  suite s  scenarios/s  overhead/scenario  per-batch overhead")
    for row in numbers["rows"]:
        print(
            f"  {row['workers']:>7}  {row['batches']:>7}  {row['suite_s']:>7.3f}  "
            f"{row['scenarios_per_s']:>11.0f}  {row['overhead_per_scenario_ms']:>14.2f} ms"
            f"  {row['per_batch_overhead_ms']:>15.1f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", type=int, default=1000)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    if os.environ.get(IN_NETNS) != "1":
        if shutil.which("unshare") is None:
            raise SystemExit("bench: `unshare` is needed to keep Ray on loopback")
        env = dict(os.environ, **{IN_NETNS: "1", "RAY_AUTH_MODE": "disabled"})
        command = [
            "unshare",
            "-n",
            "sh",
            "-c",
            'ip link set lo up && exec "$@"',
            "sh",
            sys.executable,
            *sys.argv,
        ]
        raise SystemExit(subprocess.run(command, env=env).returncode)
    workers = [int(w) for w in args.workers.split(",")]
    numbers = measure(args.scenarios, workers, args.rounds)
    report(numbers)
    if args.json is not None:
        args.json.write_text(json.dumps(numbers, indent=2))


if __name__ == "__main__":
    main()
