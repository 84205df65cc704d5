"""Rate limits on ingest (429 + Retry-After, honoured by RemoteStore), and a bounded load
test: many clients posting runs at once on SQLite and PostgreSQL, then counting.

Every limiter here runs on an injected clock (a ``Clock`` set by hand, or one that moves a
fixed step per request): what is allowed never depends on how fast the machine is."""

from __future__ import annotations

import random
from typing import Any

import anyio
import anyio.lowlevel
import httpx2
import pytest
from tests.server.conftest import LiveServer, make_run_log, run_log_json

from scenarist._sync import run_sync
from scenarist.errors import UserError
from scenarist.model.record import TraceRecord
from scenarist.server.app import create_app
from scenarist.server.ratelimit import RateLimit, RateLimited, RateLimiter
from scenarist.store.remote import RemoteStore
from scenarist.store.sql.store import SqlStore


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def with_limiter(app: Any, limit: RateLimit, clock: Any) -> RateLimiter:
    """Give ``app`` a limiter on ``clock`` (``create_app`` builds one on the real clock)."""
    app.state.rate_limiter = RateLimiter(limit, clock=clock)
    return app.state.rate_limiter


def ticking(step_s: float) -> Any:
    """A clock that moves ``step_s`` each time it is read: one read per request."""
    ticks = iter(range(1_000_000))
    return lambda: next(ticks) * step_s


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
    app = create_app(database_url)
    clock = Clock()
    with_limiter(app, RateLimit(rate_per_s=0.5, burst=2), clock)
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            trace = {"trace_id": "t1"}
            assert (await client.post("/v1/traces", json=trace)).status_code == 201
            assert (await client.post("/v1/traces", json=trace)).status_code == 201
            limited = await client.post("/v1/traces", json=trace)
            assert limited.status_code == 429
            assert limited.headers["retry-after"] == "2"
            assert limited.headers["x-retry-after-ms"] == "2000"
            assert limited.json()["error"]["code"] == "rate_limited"
            clock.now = 1.0  # half a token back: one more second to wait
            later = await client.post("/v1/traces", json=trace)
            assert later.status_code == 429
            assert (later.headers["retry-after"], later.headers["x-retry-after-ms"]) == (
                "1",
                "1000",
            )
            clock.now = 2.0
            assert (await client.post("/v1/traces", json=trace)).status_code == 201
            assert (await client.get("/v1/traces/t1")).status_code == 200  # reads are free
            _, key = await app.state.store.create_api_key(["ingest"])
            keyed = await client.post(
                "/v1/traces", json=trace, headers={"Authorization": f"Bearer {key}"}
            )
            assert keyed.status_code == 201  # a key has its own bucket


def test_remote_store_waits_out_429s_instead_of_failing(database_url: str) -> None:
    app = create_app(database_url, rate_limit="10/s")
    assert app.state.rate_limiter.limit == RateLimit(rate_per_s=10.0, burst=20)
    # A clock that moves 0.05 s per request, whatever the machine's speed: with 10/s and a
    # burst of 1, every other request finds its bucket empty (a 429 the store waits out).
    with_limiter(app, RateLimit(rate_per_s=10.0, burst=1), ticking(0.05))
    with LiveServer(app) as server:
        store = RemoteStore(server.url, retries=5)
        for i in range(4):
            run_sync(store.save_trace, TraceRecord(trace_id=f"t{i}"))
    assert store.spooled == []
    assert app.state.rate_limiter.rejected >= 1
    stored = SqlStore(database_url)
    assert all(run_sync(stored.get_trace, f"t{i}") is not None for i in range(4))


def test_load_many_clients_lose_and_double_nothing(database_url: str) -> None:
    """16 clients post 8 run logs each at once (new runs, and re-posts of acknowledged
    ones) against uvicorn with a rate limit below what they ask for; then every
    acknowledged run is there exactly once. The limiter's clock moves 0.05 s per request
    (half a token at 10/s), so about every other request is refused however fast the
    machine is, and the number refused is the limiter's own count."""
    clients, requests_each = 16, 8
    app = create_app(database_url)
    limiter = with_limiter(app, RateLimit(rate_per_s=10.0, burst=5), ticking(0.05))
    template = run_log_json(make_run_log("template", outcomes={"a": True, "b": False}))
    acknowledged: set[str] = set()
    statuses: dict[int, int] = {}
    missing_retry_after: list[int] = []

    def body(run_id: str) -> dict[str, Any]:
        return {**template, "header": {**template["header"], "run_id": run_id}}

    async def worker(number: int) -> None:
        rng = random.Random(number)
        sequence = 0
        async with httpx2.AsyncClient(base_url=server.url, timeout=60) as http:
            for _ in range(requests_each):
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
                    await anyio.lowlevel.checkpoint()  # the clock is the limiter's

    with LiveServer(app) as server:

        async def main() -> None:
            async with anyio.create_task_group() as group:
                for number in range(clients):
                    group.start_soon(worker, number)

        anyio.run(main)

    assert set(statuses) <= {200, 201, 429}, statuses
    assert sum(statuses.values()) == clients * requests_each
    assert statuses.get(429, 0) == limiter.rejected >= clients * requests_each // 3
    assert not missing_retry_after  # the limit did bite, and said how long to wait
    assert statuses.get(201, 0) == len(acknowledged) >= 20

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


@pytest.mark.anyio
async def test_a_key_has_one_bucket_however_its_header_is_spelled(database_url: str) -> None:
    app = create_app(database_url)
    with_limiter(app, RateLimit(rate_per_s=0.01, burst=2), Clock())
    async with app.router.lifespan_context(app):
        _, key = await app.state.store.create_api_key(["ingest"])
        _, other = await app.state.store.create_api_key(["ingest"])
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            spellings = [
                f"Bearer {key}",
                "Bearer" + " " * 7 + key,
                f"bearer {key} ",
                f"BEARER {key}",
            ]
            statuses = []
            for number, header in enumerate(spellings):
                answer = await client.post(
                    "/v1/traces", json={"trace_id": f"t{number}"}, headers={"Authorization": header}
                )
                statuses.append(answer.status_code)
            assert statuses == [201, 201, 429, 429]  # one key, one bucket
            fresh = await client.post(
                "/v1/traces", json={"trace_id": "o"}, headers={"Authorization": f"Bearer {other}"}
            )
            assert fresh.status_code == 201  # another key: its own bucket


def _flood(url: str, forwarded_for: list[str]) -> list[int]:
    import httpx2 as http

    with http.Client(base_url=url) as client:
        return [
            client.post(
                "/v1/traces", json={"trace_id": f"x{n}"}, headers={"X-Forwarded-For": address}
            ).status_code
            for n, address in enumerate(forwarded_for)
        ]


def test_forwarded_for_is_ignored_unless_the_proxy_is_trusted(database_url: str) -> None:
    """As ``scenarist serve`` runs uvicorn: a client on loopback that makes up a new
    X-Forwarded-For for each request still has one bucket, unless 127.0.0.1 is configured
    as a trusted proxy (then each forwarded client has its own)."""
    from scenarist.server.cli import uvicorn_options

    limit = RateLimit(rate_per_s=0.01, burst=2)
    spoofed = [f"10.0.0.{n}" for n in range(1, 5)]
    app = create_app(database_url)
    with_limiter(app, limit, Clock())  # time stands still: no token comes back
    with LiveServer(app, **uvicorn_options(None)) as server:
        assert _flood(server.url, spoofed) == [201, 201, 429, 429]
    options = uvicorn_options(["127.0.0.1"])
    app = create_app(database_url)
    with_limiter(app, limit, Clock())
    with LiveServer(app, **options) as server:
        assert _flood(server.url, spoofed) == [201] * 4  # four clients behind the proxy
        # a client cannot hide behind an address it prepends: the proxy appends the real one
        assert _flood(server.url, [f"1.2.3.{n}, 10.0.0.9" for n in range(3)]) == [201, 201, 429]


def test_trusted_proxies_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from scenarist.server.cli import uvicorn_options

    monkeypatch.delenv("SCENARIST_TRUSTED_PROXIES", raising=False)
    assert uvicorn_options(None) == {"proxy_headers": False}
    monkeypatch.setenv("SCENARIST_TRUSTED_PROXIES", "10.1.2.3, 192.168.0.0/16")
    assert uvicorn_options(None) == {
        "proxy_headers": True,
        "forwarded_allow_ips": "10.1.2.3,192.168.0.0/16",
    }
    assert uvicorn_options(["127.0.0.1"])["forwarded_allow_ips"] == "127.0.0.1"
