#!/usr/bin/env python3
"""Run the scenario-overhead benchmark for scenarist and giskard-checks side by side.

One command::

    .venv/bin/python bench/compare.py [--quick] [--repeat N] [--json PATH]

scenarist is measured with the interpreter running this script; giskard-checks 1.0.6
with a separate interpreter (``--giskard-python``, else ``$SCENARIST_BENCH_GISKARD_PYTHON``,
else ``bench/.venv-giskard/bin/python``, created on first use from a Python >= 3.12.2).
Both go through the same harness (``bench/scenario_overhead.py``), one workload at a
time, alternating which implementation goes first, so that machine noise is spread over
both. The table shows both numbers, the ratio giskard/scenarist, and whether the
targets of spec 07-quality §1 are met. Raw numbers go to a JSON file.
"""

from __future__ import annotations

import argparse
import datetime as dt
import glob
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
HARNESS = BENCH_DIR / "scenario_overhead.py"
GISKARD_VENV = BENCH_DIR / ".venv-giskard"
GISKARD_REQUIREMENT = "giskard-checks==1.0.6"
GISKARD_VERSION = "1.0.6"
MIN_GISKARD_PYTHON = (3, 12, 2)  # giskard-checks fails to import on 3.12.1
ENV_VAR = "SCENARIST_BENCH_GISKARD_PYTHON"

SCENARIST = "scenarist"
GISKARD = "giskard.checks"

WORKLOAD_KEYS = {
    "a": "a_sequential",
    "b": "b_parallel_max100",
    "c": "c_parallel_unbounded",
    "d": "d_import",
}

# Targets from spec 07-quality §1.
TARGET_SPEEDUP = 20.0
TARGET_RSS_MIB = 60.0
TARGET_WALL_OVER_IDEAL = 1.25
TARGET_UNBOUNDED_S = 0.15
TARGET_IMPORT_S = 0.2


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _bench_env() -> dict[str, str]:
    env = dict(os.environ)
    env["GISKARD_TELEMETRY_DISABLED"] = "1"
    env["DO_NOT_TRACK"] = "1"
    return env


# --------------------------------------------------------------------------
# finding (or creating) the giskard-checks interpreter
# --------------------------------------------------------------------------


def _python_version(python: str) -> tuple[int, ...] | None:
    try:
        proc = subprocess.run(
            [python, "-c", "import sys; print(*sys.version_info[:3])"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    try:
        return tuple(int(x) for x in proc.stdout.split())
    except ValueError:
        return None


def _giskard_version(python: str) -> str | None:
    """Version of giskard-checks importable by ``python``, or None."""
    code = (
        "import giskard.checks, importlib.metadata as m; "
        "print('@@V@@' + m.version('giskard-checks'))"
    )
    try:
        proc = subprocess.run(
            [python, "-c", code],
            capture_output=True,
            text=True,
            timeout=300,
            env=_bench_env(),
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    for line in proc.stdout.splitlines():
        if line.startswith("@@V@@"):
            return line[len("@@V@@") :].strip()
    return None


def _base_python_candidates() -> list[str]:
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found: list[str] = []
    for pattern in ("3.13.*", "3.12.*"):
        found.extend(sorted(glob.glob(str(pyenv / pattern / "bin" / "python")), reverse=True))
    for name in ("python3.13", "python3.12"):
        path = shutil.which(name)
        if path:
            found.append(path)
    return found


def _create_giskard_venv() -> tuple[str | None, str]:
    for base in _base_python_candidates():
        version = _python_version(base)
        if version is None or version < MIN_GISKARD_PYTHON:
            continue
        _log(f"creating {GISKARD_VENV} with {base} (Python {'.'.join(map(str, version))})")
        python = GISKARD_VENV / "bin" / "python"
        try:
            subprocess.run([base, "-m", "venv", str(GISKARD_VENV)], check=True)
            subprocess.run(
                [
                    str(python),
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    GISKARD_REQUIREMENT,
                ],
                check=True,
                env=_bench_env(),
            )
        except (OSError, subprocess.CalledProcessError) as exc:
            shutil.rmtree(GISKARD_VENV, ignore_errors=True)
            return None, f"could not create {GISKARD_VENV} with {base}: {exc}"
        return str(python), f"created {GISKARD_VENV} from {base}"
    return None, (
        f"no Python >= {'.'.join(map(str, MIN_GISKARD_PYTHON))} found "
        "(looked for ~/.pyenv/versions/3.13.*, 3.12.*, python3.13, python3.12)"
    )


def find_giskard_python(explicit: str | None) -> tuple[str | None, str]:
    """Return (interpreter or None, a note saying where it came from or what failed)."""
    if explicit:
        python, source = explicit, "--giskard-python"
    elif os.environ.get(ENV_VAR):
        python, source = os.environ[ENV_VAR], f"${ENV_VAR}"
    elif (GISKARD_VENV / "bin" / "python").exists():
        python, source = str(GISKARD_VENV / "bin" / "python"), str(GISKARD_VENV)
    else:
        created, note = _create_giskard_venv()
        if created is None:
            return None, note
        python, source = created, note
    version = _giskard_version(python)
    if version is None:
        return None, f"{python} (from {source}) cannot import giskard.checks"
    note = f"{python} (from {source}), giskard-checks {version}"
    if version != GISKARD_VERSION:
        note += f" -- WARNING: the spec baseline is {GISKARD_VERSION}"
    return python, note


# --------------------------------------------------------------------------
# running the harness
# --------------------------------------------------------------------------


def run_harness(python: str, impl: str, workload: str, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="scenarist-bench-") as tmp:
        out_path = Path(tmp) / "out.json"
        cmd = [
            python,
            str(HARNESS),
            "--impl",
            impl,
            "--workloads",
            workload,
            "--scenarios",
            str(args.scenarios),
            "--suite-size",
            str(args.suite_size),
            "--repeat",
            str(args.repeat),
            "--import-repeat",
            str(args.import_repeat),
            "--json",
            str(out_path),
        ]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=_bench_env())
        elapsed = time.perf_counter() - t0
        if proc.returncode != 0 or not out_path.exists():
            sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
            raise SystemExit(f"harness failed for {impl} workload {workload}: {shlex.join(cmd)}")
        if args.verbose:
            _log(proc.stdout.rstrip())
        report: dict[str, Any] = json.loads(out_path.read_text(encoding="utf-8"))
    report["harness_wall_s"] = elapsed
    return report


# --------------------------------------------------------------------------
# table
# --------------------------------------------------------------------------


def _get(report: dict[str, Any] | None, workload: str, field: str) -> float | None:
    if not report:
        return None
    section = report.get(WORKLOAD_KEYS[workload])
    if not section:
        return None
    value = section.get(field)
    return float(value) if value is not None else None


def _num(x: float | None, digits: int) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _ratio(g: float | None, s: float | None) -> float | None:
    if g is None or s is None or s <= 0:
        return None
    return g / s


def _status(ok: bool | None) -> str:
    if ok is None:
        return "n/a"
    return "met" if ok else "MISSED"


def build_rows(
    s: dict[str, Any], g: dict[str, Any] | None, wanted: set[str]
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def row(
        workload: str,
        metric: str,
        field: str,
        digits: int,
        target: str = "",
        check: Any = None,
    ) -> None:
        sv, gv = _get(s, workload, field), _get(g, workload, field)
        ratio = _ratio(gv, sv)
        ok = None if check is None else check(sv, ratio)
        rows.append(
            {
                "workload": workload,
                "metric": metric,
                "field": field,
                "scenarist": sv,
                "giskard": gv,
                "ratio_giskard_over_scenarist": ratio,
                "target": target,
                "met": ok,
                "digits": digits,
            }
        )

    if "a" in wanted:
        row(
            "a",
            "sequential, ms per scenario",
            "per_scenario_ms",
            4,
            f"giskard/scenarist >= {TARGET_SPEEDUP:g}x",
            lambda _s, r: None if r is None else r >= TARGET_SPEEDUP,
        )
        row("a", "Suite(parallel=False), ms per scenario", "suite_serial_per_scenario_ms", 4)
        row(
            "a",
            "peak RSS, MiB",
            "peak_rss_mib",
            1,
            f"scenarist <= {TARGET_RSS_MIB:g} MiB",
            lambda sv, _r: None if sv is None else sv <= TARGET_RSS_MIB,
        )
    if "b" in wanted:
        row("b", "max_concurrency=100, wall s", "wall_s", 3)
        row("b", "  ideal s", "ideal_s", 3)
        row(
            "b",
            "  wall / ideal",
            "wall_over_ideal",
            2,
            f"scenarist <= {TARGET_WALL_OVER_IDEAL:g}x",
            lambda sv, _r: None if sv is None else sv <= TARGET_WALL_OVER_IDEAL,
        )
    if "c" in wanted:
        row(
            "c",
            "max_concurrency=None, wall s",
            "wall_s",
            3,
            f"scenarist <= {TARGET_UNBOUNDED_S:g} s",
            lambda sv, _r: None if sv is None else sv <= TARGET_UNBOUNDED_S,
        )
    if "d" in wanted:
        row(
            "d",
            "import cost, s (python -c minus startup)",
            "import_cost_median_s",
            3,
            f"scenarist <= {TARGET_IMPORT_S:g} s",
            lambda sv, _r: None if sv is None else sv <= TARGET_IMPORT_S,
        )
        row("d", "  -X importtime cumulative, s", "importtime_cumulative_s", 3)
    return rows


def render_table(rows: list[dict[str, Any]]) -> str:
    header = ["", "metric", "scenarist", "giskard-checks", "giskard/scenarist", "target", "status"]
    body = []
    for r in rows:
        d = r["digits"]
        ratio = r["ratio_giskard_over_scenarist"]
        body.append(
            [
                f"[{r['workload']}]",
                r["metric"],
                _num(r["scenarist"], d),
                _num(r["giskard"], d),
                "n/a" if ratio is None else f"{ratio:.1f}x",
                r["target"],
                _status(r["met"]) if r["target"] else "",
            ]
        )
    widths = [max(len(str(x)) for x in col) for col in zip(header, *body, strict=True)]
    right = {2, 3, 4}

    def fmt(cells: list[str]) -> str:
        out = []
        for i, (cell, w) in enumerate(zip(cells, widths, strict=True)):
            out.append(cell.rjust(w) if i in right else cell.ljust(w))
        return "  ".join(out).rstrip()

    lines = [fmt(header), fmt(["-" * w for w in widths])]
    lines.extend(fmt(b) for b in body)
    return "\n".join(lines)


def correctness_warnings(name: str, report: dict[str, Any] | None) -> list[str]:
    """Every scenario of every workload is built to pass; say so when one does not."""
    warnings = []
    for key in ("a_sequential", "b_parallel_max100", "c_parallel_unbounded"):
        section = (report or {}).get(key)
        if not section:
            continue
        if section.get("passed") != section.get("scenarios"):
            warnings.append(f"{name} {key}: passed {section.get('passed')}/{section['scenarios']}")
        if key == "a_sequential" and section.get("suite_passed") != section.get("scenarios"):
            warnings.append(
                f"{name} {key} suite: passed {section.get('suite_passed')}/{section['scenarios']}"
            )
    return warnings


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="smoke run: 300 scenarios, suites of 200")
    p.add_argument("--repeat", type=int, default=1, help="passed to the harness (median)")
    p.add_argument("--scenarios", type=int, help="scenarios in workload a (default 2000)")
    p.add_argument("--suite-size", type=int, help="suite size in workloads b, c (default 1000)")
    p.add_argument("--import-repeat", type=int, help="repeats of the import timing (default 7)")
    p.add_argument("--workloads", default="a,b,c,d", help="subset of a,b,c,d")
    p.add_argument("--giskard-python", help=f"interpreter with {GISKARD_REQUIREMENT}")
    p.add_argument("--scenarist-only", action="store_true", help="skip giskard-checks")
    p.add_argument(
        "--json",
        dest="json_path",
        default=str(BENCH_DIR / "results" / "latest.json"),
        help="write raw numbers here (default: bench/results/latest.json)",
    )
    p.add_argument("--no-json", action="store_true", help="do not write JSON")
    p.add_argument("-v", "--verbose", action="store_true", help="echo the harness output")
    args = p.parse_args(argv)

    if args.scenarios is None:
        args.scenarios = 300 if args.quick else 2000
    if args.suite_size is None:
        args.suite_size = 200 if args.quick else 1000
    if args.import_repeat is None:
        args.import_repeat = 3 if args.quick else 7
    wanted = [w.strip() for w in args.workloads.split(",") if w.strip()]
    unknown = [w for w in wanted if w not in WORKLOAD_KEYS]
    if unknown:
        p.error(f"unknown workloads: {unknown}")

    notes: list[str] = []
    giskard_python: str | None = None
    if args.scenarist_only:
        notes.append("giskard-checks skipped (--scenarist-only); ratios are n/a")
    else:
        giskard_python, where = find_giskard_python(args.giskard_python)
        if giskard_python is None:
            notes.append(f"NOTE: giskard-checks not available: {where}")
            notes.append("      running scenarist alone; ratios are n/a")
            notes.append(
                f"      (pass --giskard-python, set ${ENV_VAR}, or make a Python >= 3.12.2"
                " available)"
            )
            for line in notes:
                _log(line)
        else:
            notes.append(f"giskard-checks: {where}")

    impls: list[tuple[str, str]] = [(SCENARIST, sys.executable)]
    if giskard_python:
        impls.append((GISKARD, giskard_python))

    reports: dict[str, dict[str, Any]] = {name: {} for name, _ in impls}
    order: list[str] = []
    started = dt.datetime.now(dt.UTC)
    for i, workload in enumerate(wanted):
        # Alternate which implementation goes first, to spread machine noise.
        sequence = impls if i % 2 == 0 else list(reversed(impls))
        for name, python in sequence:
            _log(f"[{workload}] {name} ...")
            rep = run_harness(python, name, workload, args)
            _log(f"[{workload}] {name} done in {rep['harness_wall_s']:.1f} s")
            order.append(f"{workload}:{name}")
            merged = reports[name]
            for key, value in rep.items():
                if key in WORKLOAD_KEYS.values():
                    merged[key] = value
                elif key == "harness_wall_s":
                    merged.setdefault("harness_wall_s", {})[workload] = value
                else:
                    merged[key] = value

    s_report = reports[SCENARIST]
    g_report = reports.get(GISKARD)
    rows = build_rows(s_report, g_report, set(wanted))

    sizes = (
        f"a: {args.scenarios} scenarios x 5 interactions x 3 checks; "
        f"b/c: suites of {args.suite_size}, target sleeps 20 ms; repeat {args.repeat}"
    )
    print(
        f"scenarist python {s_report.get('python')}"
        + (f" | giskard-checks python {g_report.get('python')}" if g_report else "")
        + f" | {os.cpu_count()} CPUs | {platform.platform()}"
    )
    print(sizes + (" (--quick: targets are for the full sizes)" if args.quick else ""))
    for line in notes:
        print(line)
    print()
    print(render_table(rows))
    warnings = correctness_warnings("scenarist", s_report) + correctness_warnings(
        "giskard-checks", g_report
    )
    for w in warnings:
        print(f"WARNING: not all scenarios passed: {w}")
    if "d" in wanted:
        heavy = s_report.get("d_import", {}).get("heaviest_top_level", [])[:6]
        if heavy:
            print(
                "\nscenarist heaviest imports: "
                + ", ".join(f"{h['module']} {h['cumulative_s']:.3f}s" for h in heavy)
            )
    print("\nwall-clock numbers; shared machines are noisy -- use --repeat and compare ratios.")

    if not args.no_json:
        out = Path(args.json_path)
        out.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "started_utc": started.isoformat(timespec="seconds"),
            "command": shlex.join([sys.executable, *sys.argv]),
            "quick": args.quick,
            "sizes": {
                "scenarios": args.scenarios,
                "interactions": 5,
                "suite_size": args.suite_size,
                "repeat": args.repeat,
                "import_repeat": args.import_repeat,
            },
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "scenarist_python": sys.executable,
            "giskard_python": giskard_python,
            "notes": notes,
            "run_order": order,
            "summary": [{k: v for k, v in r.items() if k != "digits"} for r in rows],
            "warnings": warnings,
            "results": reports,
        }
        out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"raw numbers: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
