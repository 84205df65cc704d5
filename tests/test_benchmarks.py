"""Every benchmark in ``bench/`` runs, at tiny sizes, so none of them can rot.

Smoke runs only: each script runs as committed (``python bench/NAME.py ...``) in a child
process and must exit 0 and print its report with every scenario passing. Nothing here
looks at a time: the numbers at these sizes mean nothing, and the machine is shared.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.limits import HANG_S

BENCH = Path(__file__).resolve().parents[1] / "bench"


def run_bench(script: str, *args: str, cwd: Path | None = None) -> str:
    env = {**os.environ, "GISKARD_TELEMETRY_DISABLED": "1", "DO_NOT_TRACK": "1"}
    proc = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        capture_output=True,
        text=True,
        timeout=HANG_S,  # a hang only: the scripts take minutes on a loaded machine
        env=env,
        cwd=cwd,
    )
    assert proc.returncode == 0, f"{script} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def test_every_benchmark_has_a_smoke_test() -> None:
    scripts = {p.name for p in BENCH.glob("*.py")}
    covered = {
        "compare.py",
        "scenario_overhead.py",  # the harness compare.py runs
        "scenario_floor.py",  # the floor module compare.py runs through the harness
        "peer_pydantic_evals.py",  # the harness API on pydantic-evals, a peer compare.py runs
        "llm_capture_overhead.py",
        "replay_throughput.py",
        "replay_at_scale.py",
        "tracing_overhead.py",
        "store_writes.py",
        "server_seed.py",
        "server_bench.py",
        "otlp_ingest.py",
        "otlp_flood.py",
        "server_load.py",
        "ray_executor.py",  # on the Ray tests' own Ray: tests/distributed/test_ray_bench.py
        "rate_limiter.py",
        "suite_scale.py",
        "guard_write_cost.py",
    }
    assert scripts == covered, "a benchmark was added or removed: give it a smoke test here"


def test_compare_runs_scenarist_and_the_floor_on_every_workload(tmp_path: Path) -> None:
    out_json = tmp_path / "compare.json"
    out = run_bench(
        "compare.py",
        "--scenarist-only",
        "--scenarios", "6",
        "--suite-size", "4",
        "--import-repeat", "1",
        "--json", str(out_json),
    )  # fmt: skip
    assert "scenarist/floor" in out
    assert "[a]  sequential, ms per scenario" in out
    assert "WARNING" not in out
    report = json.loads(out_json.read_text())
    for run in ("scenarist", "floor"):
        results = report["results"][run]
        assert results["a_sequential"]["passed"] == 6
        assert results["a_sequential"]["suite_passed"] == 6
        assert results["b_parallel_max100"]["passed"] == 4
        assert results["c_parallel_unbounded"]["passed"] == 4
        assert results["d_import"]["modules_imported"] >= 1
    ratios = [r["ratio_scenarist_over_floor"] for r in report["summary"]]
    assert all(r is not None and r > 0 for r in ratios)


def test_floor_module_fails_a_scenario_whose_check_fails() -> None:
    """The floor does the checks' work for real: a wrong expectation fails the scenario."""
    sys.path.insert(0, str(BENCH))
    try:
        import scenario_floor as floor
    finally:
        sys.path.remove(str(BENCH))
    import asyncio

    scenario = floor.Scenario("s").interact("q", "answer ok")
    passing = scenario.check(floor.Equals(name="eq", expected_value="answer ok"))
    assert asyncio.run(passing.run()).status.value == "pass"
    failing = (
        floor.Scenario("t")
        .interact("q", "answer")
        .check(floor.StringMatching(name="sm", keyword="ok"))
    )
    result = asyncio.run(failing.run())
    assert result.status.value == "fail"
    assert result.results[0].message == "'ok' not found"


def test_llm_capture_overhead_runs() -> None:
    out = run_bench("llm_capture_overhead.py", "--calls", "2", "--rounds", "1")
    for case in ("httpx2 JSON", "httpx2 SSE stream", "openai SDK JSON", "openai SDK stream"):
        assert case in out
    assert "CPU overhead" in out
    assert "in process (httpx2, the recorded answer, no socket), JSON: CPU overhead" in out
    assert "recording work alone (LLMCall, no HTTP), JSON" in out


def test_replay_throughput_runs() -> None:
    out = run_bench("replay_throughput.py", "--calls", "3", "--rounds", "1")
    assert "httpx2 sync, JSON" in out
    assert "openai SDK, stream" in out
    assert "floor: httpx2 MockTransport, JSON" in out


def test_replay_at_scale_runs(tmp_path: Path) -> None:
    """Records then replays through the real CLI; the script itself fails unless every
    scenario passes with every call replayed and none live."""
    out_json = tmp_path / "scale.json"
    out = run_bench(
        "replay_at_scale.py", "--n", "6", "--parallel", "2", "--repeat", "1", "--top", "3",
        "--json", str(out_json),
    )  # fmt: skip
    assert "scenarios/s" in out
    assert "floor (openai SDK + MockTransport, no scenarist)" in out
    report = json.loads(out_json.read_text())
    assert report["scenarios"] == 6
    assert set(report["profile_seconds"]) >= {"scenarist", "SDK stack"}


def test_tracing_overhead_runs() -> None:
    out = run_bench("tracing_overhead.py", "--spans", "50", "--items", "3")
    assert "[span] with step():" in out
    assert "passed 3" in out


def test_store_writes_runs() -> None:
    out = run_bench(
        "store_writes.py", "--items", "3", "--agent-ms", "1", "--concurrency", "2",
        "--scenarios", "3", "--repeat", "1",
    )  # fmt: skip
    report = json.loads(out)
    assert report["runlog"]["scenarios"] == 3
    assert set(report["items"]) >= {"default", "memory"}  # the default store and MemoryStore


def test_server_seed_runs(tmp_path: Path) -> None:
    out = run_bench("server_seed.py", f"sqlite:///{tmp_path / 'seed.db'}", "--check-results", "1")
    assert "check results" in out
    assert (tmp_path / "seed.db").exists()


def test_server_bench_runs_on_sqlite(tmp_path: Path) -> None:
    out = run_bench(
        "server_bench.py", "--backends", "sqlite", "--check-results", "4000", "--requests", "1",
        "--ingest-repeat", "1", "--scenarios", "3", "--results-dir", str(tmp_path),
        "--json", str(tmp_path / "server.json"),
    )  # fmt: skip
    assert "overview html          sqlite      process" in out
    assert "overview html          sqlite      thread" in out
    report = json.loads((tmp_path / "server.json").read_text())
    assert [(r["backend"], r["server"]) for r in report["results"]] == [
        ("sqlite", "process"),
        ("sqlite", "thread"),
    ]
    pages = set(report["results"][0]["pages"])
    assert pages >= {"overview html", "run json", "history json", "suite html", "compare html"}
    assert pages >= {"traces html", "traces json", "traces q json", "projects html"}


def test_otlp_ingest_runs_on_sqlite() -> None:
    out = run_bench("otlp_ingest.py", "--spans", "64", "--batch", "16", "--backends", "sqlite")
    report = json.loads(out[out.index("{\n") :])
    assert report["sqlite"]["spans"] == 64
    assert report["export"]["spans"] > 0


def test_otlp_flood_runs() -> None:
    out = run_bench(
        "otlp_flood.py", "--spans", "60", "--cap", "20", "--per-trace", "10", "--idle-s", "0.2"
    )
    assert "over the cap: 413" in out
    assert "at the cap: 200" in out
    assert "health p99, worst phase" in out


def test_server_load_loses_and_doubles_nothing_on_sqlite(tmp_path: Path) -> None:
    out_json = tmp_path / "load.json"
    run_bench(
        "server_load.py",
        "--threads", "2",
        "--uploads", "3",
        "--rate-limit", "1000/s",
        "--backends", "sqlite",
        "--json", str(out_json),
    )  # fmt: skip
    sqlite = json.loads(out_json.read_text())["sqlite"]
    assert sqlite["acknowledged"] == sqlite["stored"] == 6
    assert sqlite["lost"] == sqlite["duplicated"] == sqlite["errors"] == 0


def test_rate_limiter_accuracy_runs(tmp_path: Path) -> None:
    out_json = tmp_path / "limiter.json"
    out = run_bench("rate_limiter.py", "--rpm", "240", "--seconds", "2", "--json", str(out_json))
    assert "configured rpm  requests  achieved rpm" in out
    (row,) = json.loads(out_json.read_text())
    assert row["requests"] == 8
    assert row["configured_rpm"] == 240


def test_suite_scale_runs_every_mode_and_every_scenario_passes(tmp_path: Path) -> None:
    out_json = tmp_path / "scale.json"
    out = run_bench("suite_scale.py", "--sizes", "5,12", "--json", str(out_json))
    assert "peak RSS MiB" in out
    assert "WARNING" not in out
    rows = json.loads(out_json.read_text())
    assert [(r["mode"], r["scenarios"]) for r in rows] == [
        (mode, n) for n in (5, 12) for mode in ("list", "stream", "iter")
    ]
    assert all(r["passed"] == r["scenarios"] for r in rows)


PYDANTIC_EVALS = "pydantic-evals==2.62.0"


def test_the_pydantic_evals_peer_runs_every_workload_and_passes_what_passes(
    tmp_path: Path,
) -> None:
    """The peer column is pydantic-evals doing the work: the harness drives it through
    ``peer_pydantic_evals`` in a side venv, every scenario built to pass passes."""
    from tests.helpers.side_venv import side_venv_python

    python = side_venv_python(PYDANTIC_EVALS)
    out_json = tmp_path / "peer.json"
    env = {**os.environ, "PYTHONPATH": str(BENCH)}
    proc = subprocess.run(
        [
            str(python), str(BENCH / "scenario_overhead.py"), "--impl", "peer_pydantic_evals",
            "--scenarios", "6", "--suite-size", "4", "--workloads", "a,b,c",
            "--json", str(out_json),
        ],
        capture_output=True, text=True, timeout=HANG_S, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads(out_json.read_text())
    assert report["a_sequential"]["passed"] == 6
    assert report["a_sequential"]["suite_passed"] == 6
    assert report["b_parallel_max100"]["passed"] == 4
    assert report["c_parallel_unbounded"]["passed"] == 4


def test_the_pydantic_evals_peer_fails_a_scenario_whose_check_fails() -> None:
    """A wrong expectation, or a task that raises, is a failed case in pydantic-evals'
    report and a failed scenario in the peer's column (no pass by accident)."""
    from tests.helpers.side_venv import side_venv_python

    python = side_venv_python(PYDANTIC_EVALS)
    program = """
import asyncio
import peer_pydantic_evals as m

async def main():
    ok = m.Scenario("a").interact("q", "yes ok").check(m.StringMatching(name="s", keyword="ok"))
    wrong = m.Scenario("b").interact("q", "nope").check(m.StringMatching(name="s", keyword="ok"))
    raises = m.Scenario("c").interact("q").check(m.Equals(name="e", expected_value="q"))
    suite = m.Suite(name="s")
    for s in (ok, wrong, raises):
        suite.append(s)
    serial = [r.status.value for r in (await suite.run()).results]
    alone = [(await s.run()).status.value for s in (ok, wrong, raises)]
    print(sorted(serial), alone)

asyncio.run(main())
"""
    env = {**os.environ, "PYTHONPATH": str(BENCH)}
    proc = subprocess.run(
        [str(python), "-c", program], capture_output=True, text=True, timeout=HANG_S, env=env
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.split("\n")[-2] == "['fail', 'fail', 'pass'] ['pass', 'fail', 'fail']"


def test_compare_prints_the_peer_beside_scenarist(tmp_path: Path) -> None:
    """The pydantic-evals columns: its figures and its ratio to scenarist, in the table
    and in the JSON, from a run of the peer on the interpreter given."""
    from tests.helpers.side_venv import side_venv_python

    python = side_venv_python(PYDANTIC_EVALS)
    out_json = tmp_path / "compare.json"
    out = run_bench(
        "compare.py", "--scenarist-only", "--no-floor", "--workloads", "a,c",
        "--scenarios", "6", "--suite-size", "4",
        "--pydantic-evals-python", str(python), "--json", str(out_json),
    )  # fmt: skip
    assert "pydantic-evals/scenarist" in out
    assert "WARNING" not in out
    report = json.loads(out_json.read_text())
    peer = report["results"]["pydantic_evals"]
    assert peer["a_sequential"]["passed"] == 6
    assert peer["c_parallel_unbounded"]["passed"] == 4
    rows = {r["metric"]: r for r in report["summary"]}
    row = rows["sequential, ms per scenario"]
    assert row["pydantic_evals"] == peer["a_sequential"]["per_scenario_ms"]
    assert row["ratio_pydantic_evals_over_scenarist"] == row["pydantic_evals"] / row["scenarist"]


def test_guard_write_cost_times_every_write() -> None:
    out = run_bench("guard_write_cost.py", "--n", "50", "--rounds", "3")
    lines = out.splitlines()
    assert lines[0].split() == ["write", "no", "guard", "added"]
    assert any(line.startswith("socket.send, 64 bytes") for line in lines)
    assert any(line.startswith("socket.send, a non-LLM request") for line in lines)
