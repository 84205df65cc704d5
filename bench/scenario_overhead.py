#!/usr/bin/env python3
# Copied verbatim from /work/shared/bench/scenario_overhead.py (team harness; keep in sync, do not reformat).
# ruff: noqa
# fmt: off
"""Scenario-runner overhead benchmark.

Measures the framework overhead of a scenario-testing library that exposes the
giskard-checks style API (``Scenario``, ``Suite``, ``FnCheck``, ``Equals``,
``StringMatching``). Point ``--impl`` at any module exposing those names to
compare implementations, e.g.::

    python scenario_overhead.py                       # giskard.checks
    python scenario_overhead.py --impl scenarist      # another implementation

Workloads (each one runs in a fresh child process so peak RSS is per workload):

a. ``sequential``: N scenarios (default 2000), each with 5 interactions whose
   outputs are static values followed by 3 deterministic checks (Equals,
   StringMatching, FnCheck), run one after another with ``await scenario.run()``.
   Reports build time, run time, per-scenario overhead and peak RSS. The same
   scenarios are also run through ``Suite.run(parallel=False)``.
b. ``parallel100``: a Suite of M scenarios (default 1000), one interaction each,
   whose suite-level target is an async function sleeping 20 ms, run with
   ``parallel=True, max_concurrency=100, verbose=False``. Compared with the
   ideal wall time ``ceil(M / 100) * 20 ms``.
c. ``unbounded``: the same Suite with ``max_concurrency=None`` (ideal: 20 ms).
d. ``import``: wall time of ``python -c "import MOD"`` minus the interpreter
   start-up baseline, plus the cumulative ``-X importtime`` figure.

Output: a human-readable table, and with ``--json PATH`` the raw numbers.
Numbers are wall-clock and noisy on shared machines; use ``--repeat`` and read
the median.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import math
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def _peak_rss_mib() -> float:
    """Peak resident set size of this process, in MiB (Linux reports KiB)."""
    ru = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if sys.platform == "darwin":  # bytes on macOS
        return ru / (1024 * 1024)
    return ru / 1024


def _impl_version(mod: Any, name: str) -> str:
    version = getattr(mod, "__version__", None)
    if version:
        return str(version)
    try:
        from importlib.metadata import version as dist_version

        return dist_version(name.split(".")[0].replace("_", "-"))
    except Exception:
        return "unknown"


def _status_value(result: Any) -> str:
    status = getattr(result, "status", None)
    return str(getattr(status, "value", status))


# --------------------------------------------------------------------------
# workloads (run inside a child process)
# --------------------------------------------------------------------------


def _build_sequential_scenarios(m: Any, n: int, interactions: int) -> list[Any]:
    Scenario, Equals, StringMatching, FnCheck = (
        m.Scenario,
        m.Equals,
        m.StringMatching,
        m.FnCheck,
    )

    def has_all_turns(trace: Any, _k: int = interactions) -> bool:
        return len(trace.interactions) == _k

    scenarios = []
    for i in range(n):
        s = Scenario(f"seq-{i}")
        for j in range(interactions):
            s = s.interact(f"question {i}.{j}", f"answer {i}.{j} ok")
        last = f"answer {i}.{interactions - 1} ok"
        s = (
            s.check(Equals(name="eq", expected_value=last))
            .check(StringMatching(name="sm", keyword="ok"))
            .check(FnCheck(name="fn", fn=has_all_turns))
        )
        scenarios.append(s)
    return scenarios


async def _workload_sequential(m: Any, n: int, interactions: int) -> dict[str, Any]:
    rss_before = _peak_rss_mib()

    t0 = time.perf_counter()
    scenarios = _build_sequential_scenarios(m, n, interactions)
    build_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    results = []
    for s in scenarios:
        results.append(await s.run())
    run_s = time.perf_counter() - t0
    passed = sum(1 for r in results if _status_value(r) == "pass")
    rss_after_loop = _peak_rss_mib()

    # Same scenarios through a serial Suite (no target needed: outputs static).
    suite = m.Suite(name="seq-suite")
    for s in scenarios:
        suite.append(s)
    t0 = time.perf_counter()
    suite_result = await suite.run(parallel=False, verbose=False)
    suite_s = time.perf_counter() - t0
    suite_passed = sum(1 for r in suite_result.results if _status_value(r) == "pass")

    return {
        "scenarios": n,
        "interactions_per_scenario": interactions,
        "checks_per_scenario": 3,
        "build_s": build_s,
        "run_s": run_s,
        "per_scenario_ms": run_s / n * 1000,
        "per_check_ms": run_s / (n * 3) * 1000,
        "passed": passed,
        "suite_serial_s": suite_s,
        "suite_serial_per_scenario_ms": suite_s / n * 1000,
        "suite_passed": suite_passed,
        "peak_rss_after_import_mib": rss_before,
        "peak_rss_after_loop_mib": rss_after_loop,
        "peak_rss_mib": _peak_rss_mib(),
    }


async def _workload_parallel(
    m: Any, n: int, max_concurrency: int | None, sleep_s: float
) -> dict[str, Any]:
    Scenario, Suite, Equals = m.Scenario, m.Suite, m.Equals

    in_flight = 0
    peak_in_flight = 0

    async def target(inputs: str) -> str:
        nonlocal in_flight, peak_in_flight
        in_flight += 1
        peak_in_flight = max(peak_in_flight, in_flight)
        try:
            await asyncio.sleep(sleep_s)
        finally:
            in_flight -= 1
        return f"echo {inputs}"

    suite = Suite(name="parallel-suite", target=target)
    for i in range(n):
        suite.append(
            Scenario(f"par-{i}")
            .interact(f"q{i}")
            .check(Equals(name="eq", expected_value=f"echo q{i}"))
        )

    t0 = time.perf_counter()
    result = await suite.run(
        parallel=True, max_concurrency=max_concurrency, verbose=False
    )
    wall_s = time.perf_counter() - t0

    waves = math.ceil(n / max_concurrency) if max_concurrency else 1
    ideal_s = waves * sleep_s
    passed = sum(1 for r in result.results if _status_value(r) == "pass")
    return {
        "scenarios": n,
        "max_concurrency": max_concurrency,
        "sleep_ms": sleep_s * 1000,
        "wall_s": wall_s,
        "ideal_s": ideal_s,
        "wall_over_ideal": wall_s / ideal_s,
        "overhead_per_scenario_ms": (wall_s - ideal_s) / n * 1000,
        "peak_in_flight": peak_in_flight,
        "passed": passed,
        "peak_rss_mib": _peak_rss_mib(),
    }


def _child(args: argparse.Namespace) -> None:
    t0 = time.perf_counter()
    m = importlib.import_module(args.impl)
    import_s = time.perf_counter() - t0
    if args.workload == "sequential":
        out = asyncio.run(_workload_sequential(m, args.scenarios, args.interactions))
    elif args.workload == "parallel100":
        out = asyncio.run(
            _workload_parallel(m, args.suite_size, args.max_concurrency, args.sleep_ms / 1000)
        )
    elif args.workload == "unbounded":
        out = asyncio.run(
            _workload_parallel(m, args.suite_size, None, args.sleep_ms / 1000)
        )
    else:
        raise SystemExit(f"unknown workload {args.workload}")
    out["in_process_import_s"] = import_s
    out["impl_version"] = _impl_version(m, args.impl)
    # A single JSON line on stdout; everything else the library prints is noise.
    sys.stdout.write("\n@@RESULT@@" + json.dumps(out) + "\n")
    sys.stdout.flush()


# --------------------------------------------------------------------------
# orchestration (parent process)
# --------------------------------------------------------------------------


def _run_child(args: argparse.Namespace, workload: str) -> dict[str, Any]:
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--impl",
        args.impl,
        "--child",
        workload,
        "--scenarios",
        str(args.scenarios),
        "--interactions",
        str(args.interactions),
        "--suite-size",
        str(args.suite_size),
        "--max-concurrency",
        str(args.max_concurrency),
        "--sleep-ms",
        str(args.sleep_ms),
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    process_s = time.perf_counter() - t0
    match = re.search(r"@@RESULT@@(.*)", proc.stdout)
    if proc.returncode != 0 or not match:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        raise SystemExit(f"workload {workload} failed (rc={proc.returncode})")
    out = json.loads(match.group(1))
    # Whole child process, including interpreter start, import and exit hooks
    # (e.g. analytics flushes registered with atexit).
    out["child_process_s"] = process_s
    return out


def _measure_import(args: argparse.Namespace) -> dict[str, Any]:
    def wall(code: str) -> float:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        return time.perf_counter() - t0

    base = [wall("pass") for _ in range(args.import_repeat)]
    imp = [wall(f"import {args.impl}") for _ in range(args.import_repeat)]

    def importtime(code: str) -> list[tuple[int, int, str]]:
        """Return (depth, cumulative_us, module) rows of ``-X importtime``."""
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code],
            capture_output=True,
            text=True,
            check=True,
        )
        rows = []
        for line in proc.stderr.splitlines():
            parts = line.split("|")
            if len(parts) != 3 or not parts[0].startswith("import time:"):
                continue
            try:
                cum_us = int(parts[1])
            except ValueError:
                continue
            raw = parts[2].rstrip()
            name = raw.lstrip()
            depth = (len(raw) - len(name) - 1) // 2
            rows.append((depth, cum_us, name))
        return rows

    baseline = {name for _, _, name in importtime("pass")}
    rows = [r for r in importtime(f"import {args.impl}") if r[2] not in baseline]
    total_us = sum(cum for depth, cum, _ in rows if depth == 0)
    heavy = sorted(
        ((cum, name) for depth, cum, name in rows if depth <= 2 and name != args.impl),
        reverse=True,
    )
    return {
        "python_startup_median_s": statistics.median(base),
        "python_c_import_median_s": statistics.median(imp),
        "import_cost_median_s": statistics.median(imp) - statistics.median(base),
        "importtime_cumulative_s": total_us / 1e6,
        "modules_imported": len(rows),
        "heaviest_top_level": [
            {"module": name, "cumulative_s": us / 1e6} for us, name in heavy[:12]
        ],
    }


def _fmt(x: float, unit: str = "", digits: int = 3) -> str:
    return f"{x:.{digits}f}{unit}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--impl", default="giskard.checks", help="module exposing Scenario, Suite, FnCheck, Equals, StringMatching")
    p.add_argument("--scenarios", type=int, default=2000, help="scenarios in workload a")
    p.add_argument("--interactions", type=int, default=5, help="interactions per scenario in workload a")
    p.add_argument("--suite-size", type=int, default=1000, help="scenarios in workloads b and c")
    p.add_argument("--max-concurrency", type=int, default=100, help="max_concurrency in workload b")
    p.add_argument("--sleep-ms", type=float, default=20.0, help="target sleep in workloads b and c")
    p.add_argument("--repeat", type=int, default=1, help="repeat each workload and report the median")
    p.add_argument("--import-repeat", type=int, default=7, help="repeats of the import timing")
    p.add_argument("--workloads", default="a,b,c,d", help="comma-separated subset of a,b,c,d")
    p.add_argument("--timeout", type=float, default=1800.0, help="per child process timeout (s)")
    p.add_argument("--json", dest="json_path", help="write raw results to this file")
    p.add_argument("--child", dest="workload", help=argparse.SUPPRESS)
    args = p.parse_args()

    if args.workload:
        _child(args)
        return

    wanted = {w.strip() for w in args.workloads.split(",") if w.strip()}
    report: dict[str, Any] = {
        "impl": args.impl,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "env": {
            k: os.environ[k]
            for k in ("DO_NOT_TRACK", "GISKARD_TELEMETRY_DISABLED", "GISKARD_QUIET")
            if k in os.environ
        },
        "repeat": args.repeat,
    }

    def repeated(workload: str) -> dict[str, Any]:
        runs = [_run_child(args, workload) for _ in range(args.repeat)]
        key = "run_s" if workload == "sequential" else "wall_s"
        runs.sort(key=lambda r: r[key])
        median = runs[len(runs) // 2]
        median["all_" + key] = [r[key] for r in runs]
        return median

    if "a" in wanted:
        report["a_sequential"] = repeated("sequential")
    if "b" in wanted:
        report["b_parallel_max100"] = repeated("parallel100")
    if "c" in wanted:
        report["c_parallel_unbounded"] = repeated("unbounded")
    if "d" in wanted:
        report["d_import"] = _measure_import(args)

    print(f"impl={args.impl} python={report['python']} cpus={report['cpu_count']} env={report['env']}")
    if "a_sequential" in report:
        a = report["a_sequential"]
        print(
            f"[a] {a['scenarios']} scenarios x {a['interactions_per_scenario']} interactions x 3 checks, sequential"
            f" (impl {a['impl_version']})\n"
            f"    build {_fmt(a['build_s'], 's')}  run {_fmt(a['run_s'], 's')}"
            f"  per-scenario {_fmt(a['per_scenario_ms'], ' ms')}  per-check {_fmt(a['per_check_ms'], ' ms')}"
            f"  passed {a['passed']}/{a['scenarios']}\n"
            f"    Suite(parallel=False) {_fmt(a['suite_serial_s'], 's')}"
            f" ({_fmt(a['suite_serial_per_scenario_ms'], ' ms')}/scenario)"
            f"  peak RSS {_fmt(a['peak_rss_mib'], ' MiB', 1)} (after import {_fmt(a['peak_rss_after_import_mib'], ' MiB', 1)})"
            f"  child process {_fmt(a['child_process_s'], 's', 2)}  runs {[round(x, 3) for x in a['all_run_s']]}"
        )
    for key, label in (("b_parallel_max100", "b"), ("c_parallel_unbounded", "c")):
        if key in report:
            b = report[key]
            print(
                f"[{label}] Suite of {b['scenarios']} x async target sleeping {b['sleep_ms']:.0f} ms,"
                f" parallel=True, max_concurrency={b['max_concurrency']}\n"
                f"    wall {_fmt(b['wall_s'], 's')}  ideal {_fmt(b['ideal_s'], 's')}"
                f"  wall/ideal {_fmt(b['wall_over_ideal'], 'x', 2)}"
                f"  overhead/scenario {_fmt(b['overhead_per_scenario_ms'], ' ms')}"
                f"  peak in-flight {b['peak_in_flight']}  passed {b['passed']}/{b['scenarios']}"
                f"  peak RSS {_fmt(b['peak_rss_mib'], ' MiB', 1)}  child process {_fmt(b['child_process_s'], 's', 2)}"
                f"  runs {[round(x, 3) for x in b['all_wall_s']]}"
            )
    if "d_import" in report:
        d = report["d_import"]
        print(
            f"[d] import {args.impl}: python -c cost {_fmt(d['import_cost_median_s'], 's')}"
            f" (interpreter start {_fmt(d['python_startup_median_s'], 's')});"
            f" -X importtime cumulative {_fmt(d['importtime_cumulative_s'], 's')}; {d['modules_imported']} modules"
        )
        heavy = ", ".join(f"{h['module']} {h['cumulative_s']:.3f}s" for h in d["heaviest_top_level"][:8])
        print(f"    heaviest top-level imports: {heavy}")

    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2)


if __name__ == "__main__":
    main()
