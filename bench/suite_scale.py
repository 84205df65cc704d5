#!/usr/bin/env python3
"""How ``Suite`` scales with the number of scenarios: time per scenario and peak RSS.

``Suite.run`` keeping every result must not slow down superlinearly from 1k to 100k
scenarios, and a streamed suite consumed through ``Suite.iter_results`` must keep a flat
peak RSS (large runs stream their results; a ``Suite.run`` that keeps 100k results is
reported, not judged). Each (mode, size) runs in a fresh child process, so its peak RSS
is its own. Scenarios are workload a's (5 static
interactions, ``Equals``, ``StringMatching``, ``FnCheck``), serial.

Modes:

- ``list``: the scenarios built into a list first, then ``Suite.run`` (results kept);
- ``stream``: ``Suite(scenarios=generator)`` and ``Suite.run`` (results kept);
- ``iter``: the same stream through ``Suite.iter_results``, each result dropped once
  counted (what a consumer writing a run log does).

    python bench/suite_scale.py                      # 1k, 10k, 100k; all modes
    python bench/suite_scale.py --sizes 1000,10000 --modes list,stream
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _scenarios(n: int) -> Iterator[Any]:
    from scenarist import Equals, FnCheck, Scenario, StringMatching

    def has_all_turns(trace: Any) -> bool:
        return len(trace.interactions) == 5

    for i in range(n):
        s = Scenario(f"seq-{i}")
        for j in range(5):
            s = s.interact(f"question {i}.{j}", f"answer {i}.{j} ok")
        yield (
            s.check(Equals(name="eq", expected_value=f"answer {i}.4 ok"))
            .check(StringMatching(name="sm", keyword="ok"))
            .check(FnCheck(name="fn", fn=has_all_turns))
        )


async def _child(mode: str, n: int) -> dict[str, Any]:
    from scenarist import Suite

    rss_import = _peak_rss_mib()
    t0 = time.perf_counter()
    if mode == "list":
        suite = Suite(name="scale", scenarios=list(_scenarios(n)))
        built_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        passed = (await suite.run(verbose=False)).passed_count
    elif mode == "stream":
        built_s = 0.0
        passed = (
            await Suite(name="scale", scenarios=_scenarios(n)).run(verbose=False)
        ).passed_count
    elif mode == "iter":
        built_s = 0.0
        passed = 0
        async for _, result in Suite(name="scale", scenarios=_scenarios(n)).iter_results():
            passed += result.status == "pass"
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    run_s = time.perf_counter() - t0
    return {
        "mode": mode,
        "scenarios": n,
        "passed": passed,
        "build_s": built_s,
        "run_s": run_s,
        "us_per_scenario": run_s / n * 1e6,
        "total_us_per_scenario": (built_s + run_s) / n * 1e6,
        "peak_rss_after_import_mib": rss_import,
        "peak_rss_mib": _peak_rss_mib(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--modes", default="list,stream,iter")
    parser.add_argument("--json", dest="json_path")
    parser.add_argument("--src", default=str(ROOT / "src"), help="scenarist sources to measure")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        out = asyncio.run(_child(args.child[0], int(args.child[1])))
        print("@@RESULT@@" + json.dumps(out))
        return

    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    rows = []
    print(f"python {sys.version.split()[0]}; {args.src}")
    print("workload a's scenarios (5 interactions, 3 checks), run serially")
    print("us/scenario: the run (for a stream, building included); total: build + run")
    print(
        f"{'mode':8} {'scenarios':>10} {'us/scenario':>12} {'total':>8} {'peak RSS MiB':>13}"
        f" {'passed':>8}"
    )
    for n in (int(x) for x in args.sizes.split(",")):
        for mode in args.modes.split(","):
            proc = subprocess.run(
                [sys.executable, __file__, "--child", mode, str(n)],
                capture_output=True, text=True, env=env, check=False,
            )  # fmt: skip
            if proc.returncode != 0 or "@@RESULT@@" not in proc.stdout:
                sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
                raise SystemExit(f"{mode} x {n} failed")
            row = json.loads(proc.stdout.split("@@RESULT@@")[1])
            rows.append(row)
            print(
                f"{mode:8} {n:>10,} {row['us_per_scenario']:>12.1f}"
                f" {row['total_us_per_scenario']:>8.1f} {row['peak_rss_mib']:>13.1f}"
                f" {row['passed']:>8,}"
            )
            if row["passed"] != n:
                print(f"WARNING: {n - row['passed']} scenarios did not pass")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
