"""Server numbers (not a test): run-log ingest time and dashboard page latency.

(a) Ingest of a real 1,000-scenario run log (5 checks each, traces included, made by
running a real ``Suite``): through the HTTP API (``POST /api/runs`` on uvicorn on
127.0.0.1) and through ``SqlStore.ingest_run_log`` directly, into the seeded store and
into an empty one. Spec 07 §1 target: ≤ 1 s on SQLite.

(b) p50/p95 of the overview (also filtered by suite and by dates), a run page, a
scenario-history page, a suite page, the run's compare page (default baseline), the trace
list (``/traces``, and with ``q=`` a rare order number: the text search's worst case) and
``/projects``, HTML and JSON twin,
over ``--requests`` sequential requests each against a store seeded by
``server_seed.py`` with ``--check-results`` check results (default 1,000,000), on SQLite
and on PostgreSQL (a throw-away PostgreSQL 15 cluster on a free loopback port, stopped with
``pg_ctl`` at the end). Target: p95 < 200 ms.

    .venv/bin/python bench/server_bench.py [--check-results N] [--requests N]
        [--backends sqlite,postgresql] [--json PATH] [--fresh]

The seeded SQLite file is kept in ``bench/results/`` and reused by later runs (pending
migrations are applied when the store opens); ``--fresh`` seeds again.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent))

from server_seed import SUITES, seed

from scenarist import Equals, Scenario, Suite
from scenarist.formats.runlog import RunLog, run_log_from_suite_result
from scenarist.server.app import create_app
from scenarist.server.threaded import ThreadedServer, free_port
from scenarist.store.sql.store import SqlStore

HERE = Path(__file__).resolve().parent
PGBIN = Path("/usr/lib/postgresql/15/bin")
TARGET_INGEST_S = 1.0
TARGET_P95_MS = 200.0
TRACE_QUERY = "order+31337"
"""The trace list's text search: one order number (of 90,000 the seeder draws), so a
handful of traces match and the search reads every document: the worst case."""
# How long `scenarist serve` may take to start before it is called hung (not a figure).
START_LIMIT_S = 600.0


def _as_postgres(*command: str) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else list(command)


class PgCluster:
    """A throw-away cluster (as tests/server/conftest.py starts one)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.data = Path(tempfile.mkdtemp(prefix="scenarist-bench-pg-"))

    def _run(self, *command: str) -> None:
        subprocess.run(command, check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        if os.geteuid() == 0:
            shutil.chown(self.data, "postgres", "postgres")
        self._run(
            *_as_postgres(
                str(PGBIN / "initdb"), "-D", str(self.data), "-U", "scenarist",
                "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8",
            )
        )  # fmt: skip
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.data} -c fsync=off"
        self._run(
            *_as_postgres(
                str(PGBIN / "pg_ctl"), "-D", str(self.data), "-l",
                str(self.data / "server.log"), "-w", "-o", options, "start",
            )
        )  # fmt: skip

    def createdb(self, name: str) -> str:
        self._run(
            str(PGBIN / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "scenarist",
            name,
        )  # fmt: skip
        return f"postgresql://scenarist@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        subprocess.run(
            _as_postgres(str(PGBIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "stop"),
            capture_output=True,
            timeout=60,
            check=False,
        )
        shutil.rmtree(self.data, ignore_errors=True)


def live_server(url: str) -> ThreadedServer:
    """The app over ``url`` served by uvicorn in a thread on a free loopback port."""
    return ThreadedServer(create_app(url), start_timeout_s=START_LIMIT_S)


@contextlib.contextmanager
def served(url: str) -> Iterator[str]:
    """``scenarist serve`` over ``url`` in its own process (as an exporter meets it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "SCENARIST_HOME": home}
        command = [sys.executable, "-m", "scenarist.cli", "serve", "--port", str(port)]
        log = open(Path(home) / "serve.log", "w+")  # noqa: SIM115 - closed below
        server = subprocess.Popen(
            [*command, "--database-url", url], env=env, stdout=log, stderr=subprocess.STDOUT
        )
        base = f"http://127.0.0.1:{port}"
        try:
            # Started is what is waited for, not how fast (600 tries of >= 0.1 s gave it
            # about a minute, then went on as if it had started): the limit is for a hang.
            deadline = time.monotonic() + START_LIMIT_S
            while True:
                if server.poll() is not None:
                    log.seek(0)
                    raise RuntimeError(f"scenarist serve exited:\n{log.read()}")
                try:
                    if httpx2.get(base + "/api/health", timeout=60).status_code == 200:
                        break
                except httpx2.TransportError:
                    pass
                if time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(f"scenarist serve did not start:\n{log.read()}")
                time.sleep(0.1)
            yield base
        finally:
            server.terminate()
            try:
                server.wait(timeout=START_LIMIT_S)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            log.close()


@contextlib.contextmanager
def in_thread(url: str) -> Iterator[str]:
    """The app on uvicorn in a thread of this process (shares the GIL with the client)."""
    with live_server(url) as server:
        yield server.url


def big_run_log(scenarios: int = 1000, checks: int = 5) -> RunLog:
    """A real run log: ``scenarios`` scenarios of ``checks`` checks each, with traces."""
    items = []
    for i in range(scenarios):
        scenario = Scenario(f"ingest/case-{i:04d}", tags=["bench", f"group-{i % 10}"]).interact(
            f"question {i}: where is my refund?",
            lambda inputs: f"answer to {inputs}: it was issued on Monday",
        )
        for c in range(checks):
            expected = "nope" if (i + c) % 37 == 0 else None
            scenario = scenario.check(
                Equals(
                    expected_value=expected
                    or f"answer to question {i}: where is my refund?: it was issued on Monday",
                    target_key="trace.last.outputs",
                    name=f"check {c}",
                )
            )
        items.append(scenario)
    result = Suite(name="ingest-bench", scenarios=items).run_sync()
    return run_log_from_suite_result(result, run_id="ingest-template")


def with_run_id(log: RunLog, run_id: str) -> RunLog:
    return log.model_copy(update={"header": log.header.model_copy(update={"run_id": run_id})})


def ingest_direct(url: str, log: RunLog, repeat: int) -> list[float]:
    async def go() -> list[float]:
        store = SqlStore(url, pooled=True)
        times = []
        try:
            await store.engine()
            for _ in range(repeat):
                copy = with_run_id(log, "ingest-" + uuid.uuid4().hex)
                began = time.perf_counter()
                result = await store.ingest_run_log(copy)
                times.append(time.perf_counter() - began)
                assert result.created
                assert result.check_count == 5 * len(log.scenarios)
        finally:
            await store.close()
        return times

    return asyncio.run(go())


def ingest_http(base: str, log: RunLog, repeat: int) -> list[float]:
    template = log.model_dump(mode="json", fallback=str)
    times = []
    with httpx2.Client(base_url=base, timeout=60) as client:
        for _ in range(repeat):
            body = json.dumps(
                {**template, "header": {**template["header"], "run_id": uuid.uuid4().hex}}
            ).encode()
            began = time.perf_counter()
            response = client.post(
                "/api/runs", content=body, headers={"content-type": "application/json"}
            )
            times.append(time.perf_counter() - began)
            assert response.status_code == 201, response.text[:500]
    return times


def measure_pages(
    base: str, paths: dict[str, str], requests: int, warmup: int = 3, budget_s: float = 1e9
) -> dict[str, dict[str, float]]:
    """``requests`` timed GETs of each page after ``warmup`` ones; a page stops early once
    its samples took ``budget_s`` (a page far over the target says so in fewer samples)."""
    out: dict[str, dict[str, float]] = {}
    with httpx2.Client(base_url=base, timeout=60) as client:
        for label, path in paths.items():
            headers = {"accept": "application/json" if label.endswith("json") else "text/html"}
            for _ in range(warmup):
                assert client.get(path, headers=headers).status_code == 200, path
            samples: list[float] = []
            for _ in range(requests):
                if sum(samples) > budget_s * 1000:
                    break
                began = time.perf_counter()
                response = client.get(path, headers=headers)
                samples.append((time.perf_counter() - began) * 1000)
                assert response.status_code == 200, (path, response.status_code)
            samples.sort()
            out[label] = {
                "p50_ms": statistics.median(samples),
                "p95_ms": samples[min(len(samples) - 1, round(0.95 * len(samples)) - 1)],
                "max_ms": samples[-1],
                "bytes": len(response.content),
                "samples": len(samples),
            }
    return out


def page_paths(summary_run_id: str, scenario: str) -> dict[str, str]:
    return {
        "overview html": "/",
        "overview json": "/index.json",
        "run html": f"/runs/{summary_run_id}",
        "run json": f"/runs/{summary_run_id}.json",
        "history html": f"/scenarios/{scenario}",
        "history json": f"/scenarios/{scenario}.json",
        "overview by suite json": f"/index.json?suite={next(iter(SUITES))}",
        "overview by dates json": "/index.json?since=2000-01-01&until=2100-12-31",
        "suite html": f"/suites/{next(iter(SUITES))}",
        "suite json": f"/suites/{next(iter(SUITES))}.json",
        "compare html": f"/runs/{summary_run_id}/compare",
        "compare json": f"/runs/{summary_run_id}/compare.json",
        "traces html": "/traces",
        "traces json": "/traces.json",
        "traces q html": f"/traces?q={TRACE_QUERY}",
        "traces q json": f"/traces.json?q={TRACE_QUERY}",
        "projects html": "/projects",
        "projects json": "/projects.json",
    }


def bench_backend(
    backend: str, url: str, log: RunLog, args: argparse.Namespace, seeded: dict[str, Any]
) -> list[dict[str, Any]]:
    """One result per server mode: pages measured against ``scenarist serve`` in its own
    process (as a browser meets it), and/or the app in a thread of this process."""
    results = []
    run_id = seeded["newest_run_ids"]["search"]
    scenario = seeded["history_scenario"]
    for where in args.server:
        result: dict[str, Any] = {"backend": backend, "server": where, "seed": seeded}
        server = served(url) if where == "process" else in_thread(url)
        with server as base:
            paths = {
                label: path
                for label, path in page_paths(run_id, scenario).items()
                if not args.pages or any(p in label for p in args.pages)
            }
            result["pages"] = measure_pages(base, paths, args.requests, budget_s=args.page_budget_s)
            result["ingest_http_s"] = ingest_http(base, log, args.ingest_repeat)
        results.append(result)
    results[0]["ingest_direct_seeded_s"] = ingest_direct(url, log, args.ingest_repeat)
    return results


def sqlite_store(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    path = args.results_dir / f"server-seed-{args.check_results}.db"
    meta = path.with_suffix(".json")
    url = f"sqlite:///{path}"
    if not args.fresh and path.exists():  # a seed made by server_seed.py gets checkpointed
        for leftover in path.parent.glob(path.name + "-*"):
            leftover.unlink()
    if args.fresh or not path.exists() or not meta.exists():
        for leftover in path.parent.glob(path.name + "*"):
            leftover.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        summary = asyncio.run(seed(url, args.check_results))
        meta.write_text(json.dumps(summary.__dict__, default=str))
    # measure on a copy: the ingest runs must not pile up in the kept seed
    work = path.with_name(path.stem + "-work.db")
    for leftover in path.parent.glob(work.name + "*"):
        leftover.unlink()
    shutil.copyfile(path, work)
    return f"sqlite:///{work}", json.loads(meta.read_text())


def empty_sqlite_ingest(log: RunLog, repeat: int) -> list[float]:
    with tempfile.TemporaryDirectory() as folder:
        return ingest_direct(f"sqlite:///{folder}/empty.db", log, repeat)


def git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], capture_output=True, text=True, cwd=HERE
        )
        return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except OSError:
        return "?"


def fmt_times(values: list[float]) -> str:
    return f"median {statistics.median(values):.3f} s, max {max(values):.3f} s"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check-results", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument(
        "--page-budget-s",
        type=float,
        default=60.0,
        help="stop timing a page once its samples took this long (fewer samples then)",
    )
    parser.add_argument(
        "--pages",
        default="",
        help="only the pages whose label contains one of these (comma-separated), e.g. 'traces q'",
    )
    parser.add_argument("--ingest-repeat", type=int, default=3)
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--fresh", action="store_true", help="seed the SQLite file again")
    parser.add_argument(
        "--server",
        default="process,thread",
        help="where the server runs: process (`scenarist serve`, as a browser meets it), "
        "thread (uvicorn in a thread of this process, sharing its GIL and its collector "
        "with the client and the bench's own data), or both (default)",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the raw numbers here")
    parser.add_argument("--scenarios", type=int, default=1000, help="scenarios in the run log")
    parser.add_argument(
        "--results-dir", type=Path, default=HERE / "results", help="where the seed is kept"
    )
    args = parser.parse_args(argv)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    args.server = [s.strip() for s in args.server.split(",") if s.strip()]
    args.pages = [p.strip() for p in args.pages.split(",") if p.strip()]
    if not args.server or set(args.server) - {"process", "thread"}:
        parser.error("--server takes process, thread or process,thread")

    print(f"building a {args.scenarios:,}-scenario run log (5 checks each, traces) ...", flush=True)
    log = big_run_log(args.scenarios)
    report: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": git_commit(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        "python": platform.python_version(),
        "check_results": args.check_results,
        "requests": args.requests,
        "run_log_bytes": len(log.model_dump_json(fallback=str)),
        "results": [],
    }
    report["ingest_direct_empty_sqlite_s"] = empty_sqlite_ingest(log, args.ingest_repeat)
    for backend in backends:
        cluster: PgCluster | None = None
        try:
            if backend == "sqlite":
                print("seeding / opening the SQLite store ...", flush=True)
                url, seeded = sqlite_store(args)
            elif backend == "postgresql":
                if not (PGBIN / "initdb").exists():
                    print(f"PostgreSQL binaries not found in {PGBIN}; skipped")
                    continue
                cluster = PgCluster()
                cluster.start()
                url = cluster.createdb("bench")
                print(f"seeding PostgreSQL on port {cluster.port} ...", flush=True)
                seeded = asyncio.run(seed(url, args.check_results)).__dict__
            else:
                parser.error(f"unknown backend {backend!r}")
            seeded["history_scenario"] = seeded["flaky_scenarios"][0]
            print(f"measuring {backend} ...", flush=True)
            report["results"].extend(bench_backend(backend, url, log, args, seeded))
        finally:
            if cluster is not None:
                cluster.stop()
            for work in args.results_dir.glob("server-seed-*-work.db*"):
                work.unlink()  # the measured copy (~1 GB at 1,000,000 check results)

    print()
    print(f"Server bench · {report['date']} · commit {report['commit']} · {report['machine']}")
    print(
        f"run log: {args.scenarios:,} scenarios x 5 checks, "
        f"{report['run_log_bytes'] / 1e6:.1f} MB JSON; "
        f"store: {args.check_results:,} check results ({', '.join(SUITES)}); "
        f"{args.requests} requests per page"
    )
    print()
    print(f"{f'ingest ({args.scenarios:,} scenarios)':<40} {'time':>34}  target ≤ 1 s (SQLite)")
    rows = [("store, empty SQLite", report["ingest_direct_empty_sqlite_s"])]
    for r in report["results"]:
        if "ingest_direct_seeded_s" in r:
            rows.append((f"store, seeded {r['backend']}", r["ingest_direct_seeded_s"]))
        rows.append(
            (f"HTTP POST /api/runs, seeded {r['backend']} ({r['server']})", r["ingest_http_s"])
        )
    for label, values in rows:
        if not values:  # --ingest-repeat 0
            continue
        ok = "ok" if statistics.median(values) <= TARGET_INGEST_S else "MISS"
        print(f"{label:<40} {fmt_times(values):>34}  {ok}")
    print()
    print(
        f"{'page':<22} {'backend':<11} {'server':<8} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}"
        f" {'n':>4}  target p95<200"
    )
    for r in report["results"]:
        for label, stats in r["pages"].items():
            ok = "ok" if stats["p95_ms"] < TARGET_P95_MS else "MISS"
            print(
                f"{label:<22} {r['backend']:<11} {r['server']:<8} {stats['p50_ms']:>8.1f} "
                f"{stats['p95_ms']:>8.1f} {stats['max_ms']:>8.1f} {stats['samples']:>4}  {ok}"
            )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2, default=str))
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
