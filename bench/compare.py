#!/usr/bin/env python3
"""Run the scenario-overhead benchmark for scenarist and giskard-checks side by side.

One command::

    .venv/bin/python bench/compare.py [--quick] [--repeat N] [--json PATH]

giskard-checks 1.0.6 runs with its own interpreter (``--giskard-python``, else
``$SCENARIST_BENCH_GISKARD_PYTHON``, else ``bench/.venv-giskard/bin/python``, created on
first use from a Python >= 3.12.2). The interpreter version matters a lot (CPython 3.13
runs scenarist's sequential workload about twice as fast as 3.11), so scenarist is
measured with the *same* interpreter version as giskard-checks: ``--scenarist-python``,
else ``bench/.venv-scenarist/bin/python``, created on first use from the base interpreter
of giskard's venv with an editable install of this working tree. The ratios and target
statuses come from that same-interpreter pair. scenarist is also measured with the
interpreter running this script (the project's CI interpreter), shown as an extra column
when its version differs. All runs go through the same harness
(``bench/scenario_overhead.py``), one workload at a time, alternating which side goes
first, so that machine noise is spread. Raw numbers go to a JSON file.

A peer runs beside them on the same interpreter version: pydantic-evals (through
``bench/peer_pydantic_evals.py``, in ``bench/.venv-pydantic-evals``, created on first use
from the base interpreter of the paired scenarist run; ``--pydantic-evals-python`` to
give one, ``--no-peers`` to skip). Its columns are for reading, not for the targets.
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
REPO_ROOT = BENCH_DIR.parent
HARNESS = BENCH_DIR / "scenario_overhead.py"
GISKARD_VENV = BENCH_DIR / ".venv-giskard"
SCENARIST_VENV = BENCH_DIR / ".venv-scenarist"
GISKARD_REQUIREMENT = "giskard-checks==1.0.6"
GISKARD_VERSION = "1.0.6"
MIN_GISKARD_PYTHON = (3, 12, 2)  # giskard-checks fails to import on 3.12.1
ENV_VAR = "SCENARIST_BENCH_GISKARD_PYTHON"

SCENARIST = "scenarist"
GISKARD = "giskard.checks"
FLOOR = "scenario_floor"  # bench/scenario_floor.py: the same work in plain Python
PYDANTIC_EVALS = "peer_pydantic_evals"  # bench/peer_pydantic_evals.py: the harness API on it
PYDANTIC_EVALS_VENV = BENCH_DIR / ".venv-pydantic-evals"
PYDANTIC_EVALS_REQUIREMENT = "pydantic-evals==2.62.0"
BENCH_MODULES = (FLOOR, PYDANTIC_EVALS)  # modules of bench/, found on PYTHONPATH

# Keys of the runs (and of "results" in the JSON).
RUN_SCENARIST = "scenarist"  # same interpreter version as giskard-checks (primary)
RUN_SCENARIST_CURRENT = "scenarist_current"  # the interpreter running this script
RUN_GISKARD = "giskard.checks"
RUN_FLOOR = "floor"  # plain Python, on the interpreter of the primary scenarist run
RUN_PYDANTIC_EVALS = "pydantic_evals"  # a peer, on the same interpreter version

WORKLOAD_KEYS = {
    "a": "a_sequential",
    "b": "b_parallel_max100",
    "c": "c_parallel_unbounded",
    "d": "d_import",
}

# Targets: spec 07-quality §1, as issue 15 tightened them (spec: 1.25x ideal, 0.15 s).
TARGET_SPEEDUP = 20.0
TARGET_OVER_FLOOR = 10.0
TARGET_RSS_MIB = 60.0
TARGET_WALL_OVER_IDEAL = 1.2
TARGET_UNBOUNDED_S = 0.1
TARGET_IMPORT_S = 0.2


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _bench_env(impl: str = SCENARIST) -> dict[str, str]:
    env = dict(os.environ)
    env["GISKARD_TELEMETRY_DISABLED"] = "1"
    env["DO_NOT_TRACK"] = "1"
    if impl in BENCH_MODULES:  # the floor and the peers' adapters live next to this script
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BENCH_DIR), env.get("PYTHONPATH")]))
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
# scenarist on the same interpreter as giskard-checks
# --------------------------------------------------------------------------


def _interpreter_info(python: str) -> dict[str, str] | None:
    """Version and base interpreter (outside any venv) of ``python``, or None."""
    code = (
        "import json, platform, sys; print('@@I@@' + json.dumps({"
        "'version': platform.python_version(), "
        "'implementation': platform.python_implementation(), "
        "'executable': sys.executable, "
        "'base_executable': getattr(sys, '_base_executable', sys.executable)}))"
    )
    try:
        proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    for line in proc.stdout.splitlines():
        if line.startswith("@@I@@"):
            info: dict[str, str] = json.loads(line[len("@@I@@") :])
            return info
    return None


def _current_interpreter_info() -> dict[str, str]:
    return {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
        "base_executable": getattr(sys, "_base_executable", sys.executable),
    }


def _scenarist_location(python: str) -> Path | None:
    """Directory of the ``scenarist`` package that ``python`` imports, or None."""
    code = "import scenarist; print('@@L@@' + scenarist.__file__)"
    try:
        proc = subprocess.run(
            [python, "-c", code], capture_output=True, text=True, timeout=120, cwd=BENCH_DIR
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    for line in proc.stdout.splitlines():
        if line.startswith("@@L@@"):
            return Path(line[len("@@L@@") :].strip()).resolve().parent
    return None


def _is_working_tree(location: Path | None) -> bool:
    return location is not None and location.is_relative_to(REPO_ROOT / "src")


def _create_scenarist_venv(base: str, version: str) -> tuple[str | None, str]:
    """(Re)create bench/.venv-scenarist from ``base`` with ``pip install -e .``."""
    python = SCENARIST_VENV / "bin" / "python"
    existing = _interpreter_info(str(python)) if python.exists() else None
    action = f"reinstalled scenarist into {SCENARIST_VENV}"
    try:
        if existing is None or existing["version"] != version:
            action = f"created {SCENARIST_VENV} from {base}"
            if SCENARIST_VENV.exists():
                _log(f"removing {SCENARIST_VENV} (not Python {version})")
                shutil.rmtree(SCENARIST_VENV)
            _log(f"creating {SCENARIST_VENV} with {base} (Python {version})")
            subprocess.run([base, "-m", "venv", str(SCENARIST_VENV)], check=True)
        _log(f"installing the working tree into {SCENARIST_VENV} (pip install -e .)")
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", "."],
            check=True,
            cwd=REPO_ROOT,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        return None, f"could not create {SCENARIST_VENV} with {base}: {exc}"
    if not _is_working_tree(_scenarist_location(str(python))):
        return None, f"{python} does not import scenarist from {REPO_ROOT / 'src'}"
    return str(python), f"{python} ({action})"


def _compile_bytecode(python: str) -> None:
    """Compile scenarist's sources (and the floor's) for ``python``, as an install does.

    giskard-checks is measured as pip installed it, bytecode included; an editable
    scenarist under ``PYTHONDONTWRITEBYTECODE=1`` (set here, in some containers) would
    otherwise compile each module again in every child process, inside the timings of
    the import and of the first run. ``compileall`` writes the caches whatever that says.
    """
    subprocess.run(
        [python, "-m", "compileall", "-q", str(REPO_ROOT / "src"), str(BENCH_DIR)],
        check=False,
        capture_output=True,
        timeout=600,
    )


def find_scenarist_python(
    explicit: str | None, giskard: dict[str, str] | None
) -> tuple[str | None, str]:
    """Interpreter for the same-interpreter scenarist run, and a note.

    ``explicit`` (``--scenarist-python``) wins. Otherwise, with giskard-checks available,
    the current interpreter if it has the same version, else bench/.venv-scenarist made
    from giskard's base interpreter. None (and why) when there is nothing to compare with
    or the venv cannot be made.
    """
    if explicit:
        explicit = os.path.abspath(explicit)  # not resolve(): keep the venv's own path
        location = _scenarist_location(explicit)
        if location is None:
            return None, f"{explicit} (from --scenarist-python) cannot import scenarist"
        note = f"{explicit} (from --scenarist-python), scenarist from {location}"
        if not _is_working_tree(location):
            note += f" -- WARNING: not this working tree ({REPO_ROOT / 'src'})"
        return explicit, note
    if giskard is None:
        return None, "no giskard-checks interpreter to match"
    version = giskard["version"]
    if version == platform.python_version():
        return sys.executable, f"{sys.executable} (current interpreter, same version)"
    python = SCENARIST_VENV / "bin" / "python"
    if python.exists():
        info = _interpreter_info(str(python))
        if (
            info is not None
            and info["version"] == version
            and _is_working_tree(_scenarist_location(str(python)))
        ):
            return str(python), f"{python} (from {SCENARIST_VENV})"
    return _create_scenarist_venv(giskard["base_executable"], version)


# --------------------------------------------------------------------------
# the peers
# --------------------------------------------------------------------------


def _imports(python: str, module: str) -> bool:
    try:
        proc = subprocess.run(
            [python, "-c", f"import {module}"], capture_output=True, timeout=300, env=_bench_env()
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def find_pydantic_evals_python(
    explicit: str | None, base: dict[str, str]
) -> tuple[str | None, str]:
    """Interpreter with pydantic-evals, and a note: ``explicit``, else
    bench/.venv-pydantic-evals, made on first use from ``base`` (the paired scenarist
    run's interpreter, so the peer runs on the same version)."""
    if explicit:
        python, source = os.path.abspath(explicit), "--pydantic-evals-python"
    else:
        python, source = str(PYDANTIC_EVALS_VENV / "bin" / "python"), str(PYDANTIC_EVALS_VENV)
        info = _interpreter_info(python) if Path(python).exists() else None
        if (
            info is None
            or info["version"] != base["version"]
            or not _imports(python, "pydantic_evals")
        ):
            _log(f"creating {PYDANTIC_EVALS_VENV} with {base['base_executable']}")
            shutil.rmtree(PYDANTIC_EVALS_VENV, ignore_errors=True)
            try:
                subprocess.run(
                    [base["base_executable"], "-m", "venv", str(PYDANTIC_EVALS_VENV)], check=True
                )
                subprocess.run(
                    [
                        python,
                        "-m",
                        "pip",
                        "install",
                        "-q",
                        "--disable-pip-version-check",
                        PYDANTIC_EVALS_REQUIREMENT,
                    ],
                    check=True,
                )
            except (OSError, subprocess.CalledProcessError) as exc:
                shutil.rmtree(PYDANTIC_EVALS_VENV, ignore_errors=True)
                return None, f"could not install {PYDANTIC_EVALS_REQUIREMENT}: {exc}"
            source = f"created {PYDANTIC_EVALS_VENV}"
    if not _imports(python, "pydantic_evals"):
        return None, f"{python} (from {source}) cannot import pydantic_evals"
    return python, f"{python} (from {source})"


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
        proc = subprocess.run(cmd, capture_output=True, text=True, env=_bench_env(impl))
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
    s: dict[str, Any],
    s_current: dict[str, Any] | None,
    g: dict[str, Any] | None,
    wanted: set[str],
    floor: dict[str, Any] | None = None,
    pydantic_evals: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Summary rows. ``s`` is the scenarist run paired with ``g`` (ratios, statuses);
    ``s_current`` the extra scenarist run on the current interpreter, if any; ``floor`` the
    plain-Python floor on the interpreter of ``s`` (the scenarist/floor column);
    ``pydantic_evals`` the peer on the interpreter version of ``s``."""
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
        fv = _get(floor, workload, field)
        pv = _get(pydantic_evals, workload, field)
        ratio = _ratio(gv, sv)
        ok = None if check is None else check(sv, ratio)
        rows.append(
            {
                "workload": workload,
                "metric": metric,
                "field": field,
                "scenarist": sv,
                "scenarist_current": _get(s_current, workload, field),
                "giskard": gv,
                "ratio_giskard_over_scenarist": ratio,
                "pydantic_evals": pv,
                "ratio_pydantic_evals_over_scenarist": _ratio(pv, sv),
                "floor": fv,
                "ratio_scenarist_over_floor": _ratio(sv, fv),
                "target": target,
                "met": ok,
                "digits": digits,
            }
        )

    fa = _get(floor, "a", "per_scenario_ms")
    if "a" in wanted:
        row(
            "a",
            "sequential, ms per scenario",
            "per_scenario_ms",
            4,
            f"giskard/scenarist >= {TARGET_SPEEDUP:g}x",
            lambda _s, r: None if r is None else r >= TARGET_SPEEDUP,
        )
        row(
            "a",
            "  scenarist / floor",
            "per_scenario_ms",
            4,
            f"scenarist <= {TARGET_OVER_FLOOR:g}x the floor",
            lambda sv, _r: None if sv is None or fa is None else sv <= TARGET_OVER_FLOOR * fa,
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


def render_table(rows: list[dict[str, Any]], labels: dict[str, str]) -> str:
    """``labels`` names the value columns: scenarist, [scenarist_current,] giskard, ratio,
    [pydantic_evals, pydantic_evals_ratio,] [floor, floor_ratio]."""
    value_keys = [k for k in ("scenarist", "scenarist_current", "giskard") if k in labels]
    peer_keys = ["pydantic_evals", "pydantic_evals_ratio"] if "pydantic_evals" in labels else []
    floor_keys = ["floor", "floor_ratio"] if "floor" in labels else []
    header = [
        "",
        "metric",
        *(labels[k] for k in value_keys),
        labels["ratio"],
        *(labels[k] for k in peer_keys),
        *(labels[k] for k in floor_keys),
        "target",
        "status",
    ]
    body = []
    for r in rows:
        d = r["digits"]
        ratio = r["ratio_giskard_over_scenarist"]
        floor_ratio = r.get("ratio_scenarist_over_floor")
        floor_cells = [_num(r.get("floor"), d), _times(floor_ratio)] if floor_keys else []
        peer_cells = (
            [_num(r.get("pydantic_evals"), d), _times(r.get("ratio_pydantic_evals_over_scenarist"))]
            if peer_keys
            else []
        )
        body.append(
            [
                f"[{r['workload']}]",
                r["metric"],
                *(_num(r[k], d) for k in value_keys),
                _times(ratio),
                *peer_cells,
                *floor_cells,
                r["target"],
                _status(r["met"]) if r["target"] else "",
            ]
        )
    widths = [max(len(str(x)) for x in col) for col in zip(header, *body, strict=True)]
    right = set(range(2, 3 + len(value_keys) + len(peer_keys) + len(floor_keys)))

    def fmt(cells: list[str]) -> str:
        out = []
        for i, (cell, w) in enumerate(zip(cells, widths, strict=True)):
            out.append(cell.rjust(w) if i in right else cell.ljust(w))
        return "  ".join(out).rstrip()

    lines = [fmt(header), fmt(["-" * w for w in widths])]
    lines.extend(fmt(b) for b in body)
    return "\n".join(lines)


def _times(ratio: float | None) -> str:
    return "n/a" if ratio is None else f"{ratio:.1f}x"


def _short_versions(versions: list[str]) -> dict[str, str]:
    """'3.13.0' -> '3.13', unless two different versions would then look the same."""
    short = {v: ".".join(v.split(".")[:2]) for v in versions}
    if len(set(short.values())) < len(set(versions)):
        return {v: v for v in versions}
    return short


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
    p.add_argument(
        "--scenarist-python",
        help="interpreter for the scenarist run paired with giskard-checks "
        f"(default: {SCENARIST_VENV.relative_to(REPO_ROOT)}/bin/python, made from the base "
        "interpreter of giskard's venv, or this interpreter if its version is the same)",
    )
    p.add_argument(
        "--scenarist-only",
        action="store_true",
        help="skip giskard-checks, and the peers unless one is given by its interpreter",
    )
    p.add_argument(
        "--no-floor", action="store_true", help="skip the plain-Python floor (scenario_floor.py)"
    )
    p.add_argument("--no-peers", action="store_true", help="skip pydantic-evals")
    p.add_argument(
        "--pydantic-evals-python",
        help=f"interpreter with {PYDANTIC_EVALS_REQUIREMENT} (default: "
        f"{PYDANTIC_EVALS_VENV.relative_to(REPO_ROOT)}/bin/python, made on first use)",
    )
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
    giskard_info: dict[str, str] | None = None
    if args.scenarist_only:
        notes.append("giskard-checks skipped (--scenarist-only); ratios are n/a")
    else:
        giskard_python, where = find_giskard_python(args.giskard_python)
        if giskard_python is not None:
            giskard_info = _interpreter_info(giskard_python)
            if giskard_info is None:
                giskard_python, where = None, f"{giskard_python}: cannot query its version"
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

    # The scenarist run paired with giskard-checks (same interpreter version).
    current_info = _current_interpreter_info()
    paired_python: str | None = None
    paired_info: dict[str, str] | None = None
    if args.scenarist_python or giskard_info is not None:
        paired_python, where = find_scenarist_python(args.scenarist_python, giskard_info)
        if paired_python is not None:
            paired_info = _interpreter_info(paired_python)
        if paired_python is None or paired_info is None:
            if args.scenarist_python:
                raise SystemExit(f"--scenarist-python: {where}")
            paired_python, paired_info = None, None
            wanted_version = giskard_info["version"] if giskard_info else "?"
            msg = (
                f"WARNING: no scenarist on Python {wanted_version}"
                f" ({where}); ratios compare DIFFERENT interpreters"
            )
            notes.append(msg)
            _log(msg)
        else:
            notes.append(f"scenarist: {where}")
            if giskard_info is not None and paired_info["version"] != giskard_info["version"]:
                msg = (
                    f"WARNING: scenarist on Python {paired_info['version']} but giskard-checks "
                    f"on {giskard_info['version']}; ratios compare DIFFERENT interpreters"
                )
                notes.append(msg)
                _log(msg)
    current_python: str | None = None
    if paired_python is None or paired_info is None:
        # One scenarist column, on the current interpreter.
        paired_python, paired_info = sys.executable, current_info
    elif paired_info["version"] != current_info["version"]:
        current_python = sys.executable
        notes.append(
            f"scenarist (current interpreter, for reference): {sys.executable}"
            f" -- not used for ratios or statuses"
        )

    # (run key, harness --impl, interpreter). The paired scenarist and giskard-checks run
    # next to each other; which side goes first alternates from one workload to the next.
    runs: list[tuple[str, str, str]] = [(RUN_SCENARIST, SCENARIST, paired_python)]
    if giskard_python:
        runs.append((RUN_GISKARD, GISKARD, giskard_python))
    if current_python:
        runs.append((RUN_SCENARIST_CURRENT, SCENARIST, current_python))
    if not args.no_floor:  # next to the primary scenarist run, on its interpreter
        runs.insert(1, (RUN_FLOOR, FLOOR, paired_python))
    pydantic_evals_info: dict[str, str] | None = None
    # --scenarist-only skips the peers too, unless one is given by its interpreter.
    if not args.no_peers and (args.pydantic_evals_python or not args.scenarist_only):
        pe_python, where = find_pydantic_evals_python(args.pydantic_evals_python, paired_info)
        pe_info = _interpreter_info(pe_python) if pe_python else None
        if pe_python is None or pe_info is None:
            notes.append(f"NOTE: pydantic-evals not available: {where}")
            _log(notes[-1])
        else:
            pydantic_evals_info = pe_info
            notes.append(f"pydantic-evals: {where}")
            if pe_info["version"] != paired_info["version"]:
                notes.append(
                    f"WARNING: pydantic-evals on Python {pe_info['version']} but scenarist on "
                    f"{paired_info['version']}; its ratios compare DIFFERENT interpreters"
                )
            runs.append((RUN_PYDANTIC_EVALS, PYDANTIC_EVALS, pe_python))

    for _, impl, python in runs:
        if impl != GISKARD:
            _compile_bytecode(python)
    reports: dict[str, dict[str, Any]] = {key: {} for key, _, _ in runs}
    order: list[str] = []
    started = dt.datetime.now(dt.UTC)
    for i, workload in enumerate(wanted):
        # Alternate the order, to spread machine noise.
        sequence = runs if i % 2 == 0 else list(reversed(runs))
        for key, impl, python in sequence:
            _log(f"[{workload}] {key} ...")
            rep = run_harness(python, impl, workload, args)
            _log(f"[{workload}] {key} done in {rep['harness_wall_s']:.1f} s")
            order.append(f"{workload}:{key}")
            merged = reports[key]
            for k, value in rep.items():
                if k in WORKLOAD_KEYS.values():
                    merged[k] = value
                elif k == "harness_wall_s":
                    merged.setdefault("harness_wall_s", {})[workload] = value
                else:
                    merged[k] = value

    s_report = reports[RUN_SCENARIST]
    c_report = reports.get(RUN_SCENARIST_CURRENT)
    g_report = reports.get(RUN_GISKARD)
    f_report = reports.get(RUN_FLOOR)
    p_report = reports.get(RUN_PYDANTIC_EVALS)
    rows = build_rows(s_report, c_report, g_report, set(wanted), f_report, p_report)

    versions: dict[str, str | None] = {
        "scenarist": paired_info["version"],
        "scenarist_current": current_info["version"] if current_python else None,
        "giskard": giskard_info["version"] if giskard_info else None,
    }
    short = _short_versions([v for v in versions.values() if v])
    s_short = short[paired_info["version"]]
    labels = {"scenarist": f"scenarist ({s_short})"}
    if current_python:
        labels["scenarist_current"] = f"scenarist ({short[current_info['version']]})"
    if giskard_info:
        g_short = short[giskard_info["version"]]
        labels["giskard"] = f"giskard ({g_short})"
        if giskard_info["version"] == paired_info["version"]:
            labels["ratio"] = f"giskard/scenarist ({s_short})"
        else:
            labels["ratio"] = f"giskard {g_short}/scenarist {s_short}"
    else:
        labels["giskard"] = "giskard-checks"
        labels["ratio"] = "giskard/scenarist"
    if pydantic_evals_info is not None:
        p_short = ".".join(pydantic_evals_info["version"].split(".")[:2])
        labels["pydantic_evals"] = f"pydantic-evals ({p_short})"
        labels["pydantic_evals_ratio"] = f"pydantic-evals/scenarist ({s_short})"
    if f_report is not None:
        labels["floor"] = f"floor ({s_short})"
        labels["floor_ratio"] = f"scenarist/floor ({s_short})"

    sizes = (
        f"a: {args.scenarios} scenarios x 5 interactions x 3 checks; "
        f"b/c: suites of {args.suite_size}, target sleeps 20 ms; repeat {args.repeat}"
    )
    pythons = f"scenarist python {versions['scenarist']}"
    if versions["scenarist_current"]:
        pythons += f" + {versions['scenarist_current']} (current)"
    if versions["giskard"]:
        pythons += f" | giskard-checks python {versions['giskard']}"
    print(f"{pythons} | {os.cpu_count()} CPUs | {platform.platform()}")
    print(sizes + (" (--quick: targets are for the full sizes)" if args.quick else ""))
    for line in notes:
        print(line)
    if versions["giskard"]:
        print(
            f"ratios and statuses: from the {labels['scenarist']} and {labels['giskard']} columns"
        )
    print()
    print(render_table(rows, labels))
    warnings = correctness_warnings(labels["scenarist"], s_report)
    if c_report is not None:
        warnings += correctness_warnings(labels["scenarist_current"], c_report)
    warnings += correctness_warnings("giskard-checks", g_report)
    warnings += correctness_warnings("floor", f_report)
    warnings += correctness_warnings("pydantic-evals", p_report)
    for w in warnings:
        print(f"WARNING: not all scenarios passed: {w}")
    if "d" in wanted:
        for key, report in ((RUN_SCENARIST, s_report), (RUN_SCENARIST_CURRENT, c_report)):
            heavy = (report or {}).get("d_import", {}).get("heaviest_top_level", [])[:6]
            if heavy:
                label = labels["scenarist" if key == RUN_SCENARIST else "scenarist_current"]
                print(
                    f"\n{label} heaviest imports: "
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
            "scenarist_python": paired_python,
            "scenarist_python_version": versions["scenarist"],
            "scenarist_current_python": current_python,
            "scenarist_current_python_version": versions["scenarist_current"],
            "giskard_python": giskard_python,
            "giskard_python_version": versions["giskard"],
            "current_python_version": current_info["version"],
            "same_interpreter_version": versions["giskard"] is not None
            and versions["giskard"] == versions["scenarist"],
            "columns": dict(labels),
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
