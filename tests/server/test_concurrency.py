"""Many clients posting at once: nothing lost, nothing doubled (counted after)."""

from __future__ import annotations

import anyio
import httpx2
import pytest
from tests.server.conftest import LiveServer, make_run_log, run_log_json

from scenarist.store.sql.store import SqlStore

pytestmark = pytest.mark.anyio


async def test_concurrent_ingests_neither_lose_nor_duplicate(
    app_client: httpx2.AsyncClient,
) -> None:
    logs = [run_log_json(make_run_log(f"c-{i}", outcomes={"a": True, "b": i % 2 == 0}))
            for i in range(12)]  # fmt: skip
    statuses: list[int] = []

    async def post(body: dict[str, object]) -> None:
        statuses.append((await app_client.post("/api/runs", json=body)).status_code)

    async with anyio.create_task_group() as group:
        for body in logs * 3:  # every run posted three times, all at once
            group.start_soon(post, body)
    assert sorted(statuses) == [200] * 24 + [201] * 12
    store: SqlStore = app_client.app.state.store  # type: ignore[attr-defined]
    assert await store.count_runs() == 12
    for body in logs:
        detail = await store.get_run(str(body["header"]["run_id"]))  # type: ignore[index]
        assert detail is not None and len(detail.scenarios) == 2


def test_concurrent_clients_over_real_sockets(live_server: LiveServer, database_url: str) -> None:
    logs = [run_log_json(make_run_log(f"s-{i}", outcomes={"a": True})) for i in range(8)]
    statuses: list[int] = []

    async def main() -> None:
        async def post(body: dict[str, object]) -> None:
            async with httpx2.AsyncClient(base_url=live_server.url, timeout=30) as client:
                statuses.append((await client.post("/api/runs", json=body)).status_code)

        async with anyio.create_task_group() as group:
            for body in logs * 2:
                group.start_soon(post, body)

    anyio.run(main)
    assert sorted(statuses) == [200] * 8 + [201] * 8

    async def count() -> int:
        store = SqlStore(database_url)
        try:
            return await store.count_runs()
        finally:
            await store.close()

    assert anyio.run(count) == 8
