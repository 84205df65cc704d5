"""Projects in the store: runs, traces and items scoped per project, the projects table,
and a database from before projects upgrading with its data in ``default``."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection
from tests.server.conftest import make_run_log

from scenarist.errors import UserError
from scenarist.model.items import ScenarioItem
from scenarist.model.record import TraceRecord
from scenarist.store.projects import check_project, current_project, project_scope
from scenarist.store.sql.migrate import current_revision, head_revision
from scenarist.store.sql.store import SqlStore

pytestmark = pytest.mark.anyio


async def test_runs_traces_and_items_are_scoped_per_project(database_url: str) -> None:
    alpha, beta = SqlStore(database_url, project="alpha"), SqlStore(database_url).scoped("beta")
    try:
        await alpha.ingest_run_log(make_run_log("run-a"))
        await beta.ingest_run_log(make_run_log("run-b"))
        await alpha.save_trace(TraceRecord(trace_id="t-a", agent_name="bot"))
        await beta.save_trace(TraceRecord(trace_id="t-b", agent_name="bot"))
        await alpha.save_items("support", [ScenarioItem(name="a1", input="hi")])
        await beta.save_items("support", [ScenarioItem(name="b1"), ScenarioItem(name="b2")])

        assert [r.run_id for r in (await alpha.list_runs()).items] == ["run-a"]
        assert [r.run_id for r in (await beta.list_runs()).items] == ["run-b"]
        assert await alpha.count_runs() == 1
        assert await alpha.get_run("run-b") is None  # another project's run is not there
        assert (await beta.get_run("run-b")) is not None
        history = await alpha.scenario_history("refund")
        assert [p.run_id for p in history.points] == ["run-a"]
        assert await alpha.get_trace("t-b") is None
        assert [t.trace_id for t in (await beta.search_traces(agent_name="bot")).items] == ["t-b"]
        assert [i.name for i in await alpha.get_items("support")] == ["a1"]
        assert [i.name for i in await beta.get_items("support")] == ["b1", "b2"]
        await beta.save_items("support", [])  # replacing beta's items leaves alpha's
        assert [i.name for i in await alpha.get_items("support")] == ["a1"]
        # ids are per project: beta reusing alpha's trace id stores beta's own trace
        await beta.save_trace(TraceRecord(trace_id="t-a", agent_name="intruder"))
        kept, own = await alpha.get_trace("t-a"), await beta.get_trace("t-a")
        assert kept is not None and kept.agent_name == "bot"
        assert own is not None and own.agent_name == "intruder"
        assert await alpha.list_projects() == ["alpha", "beta", "default"]
        default = SqlStore(database_url)
        assert (await default.list_runs()).items == []  # nothing was written to "default"
    finally:
        await alpha.close()


async def test_a_run_log_names_its_own_project(database_url: str) -> None:
    store = SqlStore(database_url)
    log = make_run_log("run-x")
    log.header.project = "team-x"
    try:
        await store.ingest_run_log(log)
        assert (await store.list_runs()).items == []
        assert [r.run_id for r in (await store.scoped("team-x").list_runs()).items] == ["run-x"]
    finally:
        await store.close()


def test_project_names_are_checked_and_the_environment_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert check_project("support-bot.v2") == "support-bot.v2"
    for bad in ("", "-x", "a b", "x" * 65, "ünï", "a/b"):
        with pytest.raises(UserError, match="is not a project name; use 1-64 letters"):
            check_project(bad)
    monkeypatch.delenv("SCENARIST_PROJECT", raising=False)
    assert current_project() == "default"
    monkeypatch.setenv("SCENARIST_PROJECT", "from-env")
    assert current_project() == "from-env"
    assert SqlStore("sqlite:///x.db").project == "from-env"
    with project_scope("request"):  # a server request's project wins over the environment
        assert SqlStore("sqlite:///x.db").project == "request"
        assert SqlStore("sqlite:///x.db", project="given").project == "given"
    monkeypatch.setenv("SCENARIST_PROJECT", "no way")
    with pytest.raises(UserError, match="SCENARIST_PROJECT: 'no way' is not a project name"):
        current_project()
    with pytest.raises(UserError, match="is not a project name"):
        SqlStore("sqlite:///x.db", project="no way")


def _downgrade_to(connection: Connection, revision: str) -> None:
    from alembic import command

    from scenarist.store.sql.migrate import alembic_config

    command.downgrade(alembic_config(connection), revision)


def _columns(connection: Connection, table: str) -> list[str]:
    return [column["name"] for column in inspect(connection).get_columns(table)]


async def test_a_database_from_before_projects_upgrades_into_default(database_url: str) -> None:
    """Migrate to 0005, store a run, go back to 0004 (no projects), then up again: the
    run is kept, and it is in ``default``."""
    from scenarist.store.sql import migrate

    store = SqlStore(database_url)
    try:
        engine = await store.engine()
        await store.ingest_run_log(make_run_log("old-run"))
        await store.save_trace(TraceRecord(trace_id="old-trace"))
        async with engine.begin() as connection:
            await connection.run_sync(_downgrade_to, "0004")
        assert await current_revision(engine) == "0004"
        async with engine.connect() as connection:
            assert "project" not in await connection.run_sync(_columns, "runs")
        await migrate.upgrade(engine)
        assert await current_revision(engine) == head_revision() == "0010"
        async with engine.connect() as connection:
            projects = (await connection.execute(text("SELECT project FROM runs"))).scalars()
            assert list(projects) == ["default"]
        assert [r.run_id for r in (await store.list_runs()).items] == ["old-run"]
        assert await store.get_trace("old-trace") is not None
        assert await store.list_projects() == ["default"]
    finally:
        await store.close()
