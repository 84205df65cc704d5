"""A scenario is (project, suite, name) wherever history is computed, and a run that ran
part of its suite is marked a subset (issue 31, item 5), on SQLite and PostgreSQL; a
database from before migration 0010 gets both when it upgrades."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy.engine import Connection
from tests.server.triage_data import BROKEN, SUPPORT, T0, run_log, seed_triage

from scenarist.store.sql import dashboard as queries
from scenarist.store.sql import migrate
from scenarist.store.sql.migrate import current_revision
from scenarist.store.sql.store import SqlStore

pytestmark = pytest.mark.anyio


def _downgrade_to(connection: Connection, revision: str) -> None:
    from alembic import command

    from scenarist.store.sql.migrate import alembic_config

    command.downgrade(alembic_config(connection), revision)


async def _subsets(store: SqlStore) -> dict[str, bool]:
    page = await store.list_runs(limit=200)
    return {run.run_id: run.subset for run in page.items}


async def test_one_name_in_two_suites_is_two_scenarios(database_url: str) -> None:
    store = SqlStore(database_url)
    try:
        await seed_triage(store)
        assert await store.scenario_suites("refund_status") == ["pytest", SUPPORT]
        support = await store.scenario_history("refund_status", suite=SUPPORT)
        assert {p.status for p in support.points} == {"fail"}
        assert {p.suite_name for p in support.points} == {SUPPORT}
        pytest_history = await store.scenario_history("refund_status", suite="pytest")
        assert [p.status for p in pytest_history.points] == ["pass"] * 4
        merged = await store.scenario_history("refund_status")  # every suite: 4 + 5
        assert len(merged.points) == 9
        recent = await queries.broken_and_flaky(store)
        # merged by name, refund_status flipped pass/fail 8 times: never flaky, never broke
        assert [f.scenario_name for f in recent.flaky] == []
        assert "refund_status" not in {b.scenario_name for b in recent.broken}
        failures = await queries.failure_messages(store, "refund_status", suite="pytest")
        assert failures == []
        assert len(await queries.failure_messages(store, "refund_status", suite=SUPPORT)) == 5
    finally:
        await store.close()


async def test_broken_lists_say_how_many_there_are_beyond_the_first_ten(
    database_url: str,
) -> None:
    store = SqlStore(database_url)
    try:
        await seed_triage(store)
        recent = await queries.broken_and_flaky(store)
        assert len(recent.broken) == 10
        assert recent.broken_total == BROKEN
        everything = await queries.broken_and_flaky(store, limit=None)
        assert len(everything.broken) == BROKEN
        assert {b.suite_name for b in everything.broken} == {"many", SUPPORT}
    finally:
        await store.close()


async def test_runs_of_part_of_a_suite_are_subsets(database_url: str) -> None:
    store = SqlStore(database_url)
    try:
        await seed_triage(store)
        subsets = await _subsets(store)
        assert subsets["support-subset"] is True  # 3 scenarios where 6 is usual
        assert subsets["support-selected"] is True  # all 6, but chosen with -k
        assert subsets["support-0"] is False  # the first run: nothing to compare with
        assert not any(subsets[f"support-{h}"] for h in range(4))
        assert not any(subsets[f"pytest-{h}"] for h in range(4))
        # a full run after the subsets is compared with the full runs only
        later = run_log(
            "support-later", SUPPORT, {"refund_status": True, "greeting": True}, T0 + timedelta(6)
        )
        await store.ingest_run_log(later)
        assert (await _subsets(store))["support-later"] is True
    finally:
        await store.close()


async def test_runs_stored_before_0010_get_suites_and_subsets_on_upgrade(
    database_url: str,
) -> None:
    store = SqlStore(database_url)
    try:
        await seed_triage(store)
        engine = await store.engine()
        async with engine.begin() as connection:
            await connection.run_sync(_downgrade_to, "0009")
        assert await current_revision(engine) == "0009"
        await migrate.upgrade(engine)
        subsets = await _subsets(store)
        assert subsets["support-subset"] is True
        assert subsets["support-selected"] is False  # its selection was not in a column
        assert not any(subsets[f"support-{h}"] for h in range(4))
        assert await store.scenario_suites("refund_status") == ["pytest", SUPPORT]
        history = await store.scenario_history("refund_status", suite="pytest")
        assert [p.status for p in history.points] == ["pass"] * 4
    finally:
        await store.close()
