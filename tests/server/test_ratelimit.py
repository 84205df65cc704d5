"""Rate limits on ingest (429 + Retry-After, honoured by RemoteStore), and a bounded load
test: many clients posting runs at once on SQLite and PostgreSQL, then counting."""

from __future__ import annotations

import random
import time
from typing import Any

import anyio
import httpx2
import pytest
from tests.server.conftest import LiveServer, make_run_log, run_log_json

from scenarist._sync import run_sync
from scenarist.errors import UserError
from scenarist.server.app import create_app
from scenarist.server.ratelimit import RateLimit, RateLimited, RateLimiter
from scenarist.store.remote import RemoteStore
from scenarist.store.sql.store import SqlStore
from scenarist.tracing.record import TraceRecord


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_rate_limit_parses_rates_and_rejects_nonsense() -> None:
    assert RateLimit.parse("20/s") == RateLimit(20.0, 40)
    assert RateLimit.parse("600/min", burst=5) == RateLimit(10.0, 5)
    assert RateLimit.parse("3600/h").rate_per_s == 1.0
    assert RateLimit.parse("0.5").burst == 1
    for bad in ("fast", "10/day", "-1/s", "0"):
        with pytest.raises(UserError, match="cannot read the rate limit"):
            RateLimit.parse(bad)
    with pytest.raises(UserError):
        RateLimit.parse("5/s", burst=0)


def test_token_bucket_allows_a_burst_then_the_rate() -> None:
    clock = Clock()
    limiter = RateLimiter(RateLimit(rate_per_s=2.0, burst=3), clock=clock)
    for _ in range(3):
        limiter.take("a")
    with pytest.raises(RateLimited) as over:
        limiter.take("a")
    assert over.value.retry_after_s == pytest.approx(0.5)
    limiter.take("b")  # another key has its own bucket
    clock.now = 0.5
    limiter.take("a")
    with pytest.raises(RateLimited):
        limiter.take("a")
    clock.now = 100.0
    for _ in range(3):  # refilled to the burst, not beyond
        limiter.take("a")
    with pytest.raises(RateLimited):
        limiter.take("a")
    assert limiter.rejected == 3


@pytest.mark.anyio
async def test_ingest_over_the_limit_is_429_with_retry_after(database_url: str) -> None:
    app = create_app(database_url, rate_limit=RateLimit(rate_per_s=0.5, burst=2))
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://t") as client:
            trace = {"trace_id": "t1"}
            assert (await client.post("/v1/traces", json=trace)).status_code == 201
            assert (await client.post("/v1/traces", json=trace)).status_code == 201
            limited = await client.post("/v1/traces", json=trace)
            assert limited.status_code == 429
            assert limited.headers["retry-after"] == "2"
            assert 0 < int(limited.headers["x-retry-after-ms"]) <= 2000
            assert limited.json()["error"]["code"] == "rate_limited"
            assert (await client.get("/v1/traces/t1")).status_code == 200  # reads are free
            _, key = await app.state.store.create_api_key(["ingest"])
            keyed = await client.post(
                "/v1/traces", json=trace, headers={"Authorization": f"Bearer {key}"}
            )
            assert keyed.status_code == 201  # a key has its own bucket


class SteppingClock(Clock):
    """Half a token passes at 10/s between two requests, however fast they come: every
    request right after an accepted one is refused, whatever the machine's speed."""

    def __call__(self) -> float:
        self.now += 0.05
        return self.now


def test_remote_store_waits_out_429s_instead_of_failing(database_url: str) -> None:
    app = create_app(database_url, rate_limit="10/s")  # burst 20
    limit = RateLimit(rate_per_s=10.0, burst=1)
    app.state.rate_limiter = RateLimiter(limit, clock=SteppingClock())
    with LiveServer(app) as server:
        store = RemoteStore(server.url, retries=5)
        for i in range(4):
            run_sync(store.save_trace, TraceRecord(trace_id=f"t{i}"))
    assert store.spooled == []
    assert app.state.rate_limiter.rejected >= 1
    stored = SqlStore(database_url)
    assert all(run_sync(stored.get_trace, f"t{i}") is not None for i in range(4))


def test_load_many_clients_for_a_bounded_time_lose_and_double_nothing(
    database_url: str,
) -> None:
    """16 clients post run logs for 2 s (new runs, and re-posts of acknowledged ones)
    against uvicorn with a rate limit below what they ask for (so 429s happen even on a
    slow machine); then every acknowledged run is there exactly once."""
    clients, seconds = 16, 2.0
    app = create_app(database_url, rate_limit=RateLimit(rate_per_s=30.0, burst=5))
    template = run_log_json(make_run_log("template", outcomes={"a": True, "b": False}))
    acknowledged: set[str] = set()
    statuses: dict[int, int] = {}
    missing_retry_after: list[int] = []

    def body(run_id: str) -> dict[str, Any]:
        return {**template, "header": {**template["header"], "run_id": run_id}}

    async def worker(number: int) -> None:
        rng = random.Random(number)
        deadline = time.monotonic() + seconds
        sequence = 0
        async with httpx2.AsyncClient(base_url=server.url, timeout=30) as http:
            while time.monotonic() < deadline:
                if acknowledged and rng.random() < 0.2:
                    run_id = rng.choice(sorted(acknowledged))  # a duplicate upload
                else:
                    run_id, sequence = f"load-{number}-{sequence}", sequence + 1
                response = await http.post("/api/runs", json=body(run_id))
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                if response.status_code in (200, 201):
                    acknowledged.add(run_id)
                elif response.status_code == 429:
                    if "retry-after" not in response.headers:
                        missing_retry_after.append(number)
                    await anyio.sleep(int(response.headers["x-retry-after-ms"]) / 1000)

    with LiveServer(app) as server:

        async def main() -> None:
            async with anyio.create_task_group() as group:
                for number in range(clients):
                    group.start_soon(worker, number)

        anyio.run(main)

    assert set(statuses) <= {200, 201, 429}, statuses
    assert statuses.get(201, 0) == len(acknowledged) >= 20
    assert statuses.get(429, 0) > 0 and not missing_retry_after  # the limit did bite

    async def stored_ids() -> list[str]:
        store = SqlStore(database_url)
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

    ids = anyio.run(stored_ids)
    assert len(ids) == len(set(ids)) == len(acknowledged)  # no duplicate, none lost
    assert set(ids) == acknowledged
