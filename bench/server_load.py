"""Server load (not a test): many threads uploading run logs at once, then counting.

``--threads`` threads (default 20) each make ``--uploads`` uploads (default 50) of a
small real run log to ``POST /api/runs`` on uvicorn on 127.0.0.1 (run as ``scenarist
serve`` runs it), under a rate limit below what the threads ask for (``--rate-limit``,
default ``30/s`` with a burst of 5, so 429s happen): every fifth upload re-sends a run id
the server already acknowledged (as a retried or spooled upload does), the others are
new. A 429 is waited out (``X-Retry-After-Ms``) and retried until
acknowledged. Afterwards the stored run ids are listed and compared with the
acknowledged ones: the spec (07 §2) wants no status beyond 200, 201 and 429, none lost,
none stored twice. On SQLite and on a throw-away PostgreSQL 15 cluster.

    .venv/bin/python bench/server_load.py [--threads N] [--uploads N]
        [--rate-limit 30/s] [--burst N] [--backends sqlite,postgresql] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent))

from server_bench import PGBIN, PgCluster

from scenarist import Equals, Scenario, Suite
from scenarist.formats.runlog import run_log_from_suite_result
from scenarist.server.app import create_app
from scenarist.server.ratelimit import RateLimit
from scenarist.server.threaded import ThreadedServer
from scenarist.store.sql.store import SqlStore


def template() -> dict[str, Any]:
    scenarios = [
        Scenario(name)
        .interact("hello", lambda x: x)
        .check(Equals(expected_value="hello", target_key="trace.last.outputs"))
        for name in ("a", "b")
    ]
    log = run_log_from_suite_result(Suite(name="load", scenarios=scenarios).run_sync(), run_id="t")
    body: dict[str, Any] = json.loads(log.model_dump_json())
    return body


def rate_limited_server(url: str, limit: RateLimit) -> ThreadedServer:
    """The app over ``url`` with ``limit``, on uvicorn in a thread (as ``serve`` runs it)."""
    from scenarist.server.cli import uvicorn_options

    return ThreadedServer(create_app(url, rate_limit=limit), **uvicorn_options(None))


def load(url: str, threads: int, uploads: int, limit: RateLimit) -> dict[str, Any]:
    body = template()
    lock = threading.Lock()
    acknowledged: set[str] = set()
    statuses: dict[int, int] = {}

    def upload(http: httpx2.Client, run_id: str) -> None:
        payload = {**body, "header": {**body["header"], "run_id": run_id}}
        while True:
            answer = http.post("/api/runs", json=payload)
            with lock:
                statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
            if answer.status_code in (200, 201):
                with lock:
                    acknowledged.add(run_id)
                return
            if answer.status_code != 429:
                return  # counted as an error above
            time.sleep(int(answer.headers.get("x-retry-after-ms", "100")) / 1000)

    def worker(number: int) -> None:
        with httpx2.Client(base_url=server.url, timeout=60) as http:
            for sequence in range(uploads):
                with lock:
                    repeat = (
                        sorted(acknowledged)[sequence % len(acknowledged)]
                        if (acknowledged and sequence % 5 == 4)
                        else None
                    )
                upload(http, repeat or f"load-{number}-{sequence}")

    with rate_limited_server(url, limit) as server:
        started = time.perf_counter()
        pool = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
        seconds = time.perf_counter() - started

    async def stored() -> list[str]:
        store = SqlStore(url)
        try:
            ids: list[str] = []
            cursor = None
            while True:
                page = await store.list_runs(cursor=cursor, limit=500)
                ids.extend(run.run_id for run in page.items)
                if page.next_cursor is None:
                    return ids
                cursor = page.next_cursor
        finally:
            await store.close()

    ids = asyncio.run(stored())
    errors = sum(count for status, count in statuses.items() if status not in (200, 201, 429))
    return {
        "uploads": threads * uploads,
        "seconds": round(seconds, 2),
        "status_201": statuses.get(201, 0),
        "status_200": statuses.get(200, 0),
        "status_429": statuses.get(429, 0),
        "errors": errors,
        "acknowledged": len(acknowledged),
        "stored": len(ids),
        "lost": len(acknowledged - set(ids)),
        "duplicated": len(ids) - len(set(ids)),
        "unexpected": len(set(ids) - acknowledged),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=20)
    parser.add_argument("--uploads", type=int, default=50)
    parser.add_argument("--rate-limit", default="30/s")
    parser.add_argument("--burst", type=int, default=5)
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()
    limit = RateLimit.parse(options.rate_limit, options.burst)
    results: dict[str, Any] = {}
    for backend in options.backends.split(","):
        if backend == "sqlite":
            folder = tempfile.mkdtemp(prefix="scenarist-load-")
            results[backend] = load(
                f"sqlite:///{folder}/scenarist.db", options.threads, options.uploads, limit
            )
        elif backend == "postgresql":
            if not (PGBIN / "initdb").exists():
                print(f"postgresql: skipped, no binaries in {PGBIN}")
                continue
            cluster = PgCluster()
            cluster.start()
            try:
                results[backend] = load(
                    cluster.createdb("load"), options.threads, options.uploads, limit
                )
            finally:
                cluster.stop()
    columns = list(next(iter(results.values())).keys()) if results else []
    print(f"{options.threads} threads x {options.uploads} uploads, limit {options.rate_limit}")
    print(f"{'backend':<11}" + "".join(f"{c:>13}" for c in columns))
    for backend, row in results.items():
        print(f"{backend:<11}" + "".join(f"{row[c]!s:>13}" for c in columns))
    if options.json:
        options.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
