"""Projects are tenants in the store: ids are unique per project, and every read, write,
delete, pin, prune and snapshot operation sees the store's own project only. An id taken
in another project answers as a free id would, and the other project's rows stay as they
were. On SQLite and PostgreSQL; ``test_tenancy_routes.py`` checks the same over HTTP."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from tests.server.conftest import make_run_log, minutes_ago

from scenarist.model.items import ScenarioItem, ScenarioRunRecord
from scenarist.model.record import TraceRecord
from scenarist.replay.snapshots import SnapshotData
from scenarist.store.sql import dashboard as queries
from scenarist.store.sql.compare import CompareError, compare_stored_runs
from scenarist.store.sql.migrate import current_revision, head_revision
from scenarist.store.sql.store import SqlStore

pytestmark = pytest.mark.anyio

OLD = datetime.now(UTC) - timedelta(days=100)


def _stores(database_url: str) -> tuple[SqlStore, SqlStore]:
    return SqlStore(database_url, project="alpha"), SqlStore(database_url, project="beta")


def _scenario_run(run_id: str, *, passed: bool = True) -> ScenarioRunRecord:
    return ScenarioRunRecord(
        run_id=run_id, scenario_name="refund", started_at=minutes_ago(1),
        ended_at=minutes_ago(0), duration_ms=5.0, passed=passed,
        pass_count=1 if passed else 0, fail_count=0 if passed else 1,
    )  # fmt: skip


def _snapshot(trace_id: str, step: str) -> SnapshotData:
    return SnapshotData.model_validate(
        {"name": "golden", "trace_id": trace_id, "steps": [{"name": step, "kind": "tool"}]}
    )


async def test_one_run_id_in_two_projects_keeps_two_runs(database_url: str) -> None:
    alpha, beta = _stores(database_url)
    try:
        incomplete = make_run_log("shared", outcomes={"refund": True})
        incomplete.footer = None
        taken = await beta.ingest_run_log(incomplete)
        free = await alpha.ingest_run_log(make_run_log("free"))
        # a complete log with beta's id under alpha: alpha's own new run, as a free id is
        mine = await alpha.ingest_run_log(make_run_log("shared"))
        assert mine.model_dump(exclude={"run_id"}) == free.model_dump(exclude={"run_id"})
        assert mine.created and taken.created
        beta_run, alpha_run = await beta.get_run("shared"), await alpha.get_run("shared")
        assert beta_run is not None and alpha_run is not None
        assert not beta_run.complete and [s.scenario_name for s in beta_run.scenarios] == ["refund"]
        assert alpha_run.complete and len(alpha_run.scenarios) == 2
        assert [c.status for c in beta_run.scenarios[0].checks] == ["pass"]
        assert [c.status for c in alpha_run.scenarios[1].checks] == ["fail"]
        # alpha's own id again: stored once
        assert not (await alpha.ingest_run_log(make_run_log("shared"))).created
        # beta completes its own run: replaced in beta, alpha's untouched
        assert (await beta.ingest_run_log(make_run_log("shared"))).created
        beta_run = await beta.get_run("shared")
        assert beta_run is not None and beta_run.complete and len(beta_run.scenarios) == 2
        assert (await alpha.get_run("shared")) == alpha_run
        assert [r.run_id for r in (await beta.list_runs()).items] == ["shared"]
    finally:
        await alpha.close()


async def test_a_scenario_run_with_another_projects_run_id_is_its_own(database_url: str) -> None:
    alpha, beta = _stores(database_url)
    try:
        incomplete = make_run_log("shared", outcomes={})
        incomplete.footer = None  # an interrupted run with no scenario yet
        await beta.ingest_run_log(incomplete)
        before = await beta.get_run("shared")
        await alpha.save_scenario_run(_scenario_run("shared"))
        await alpha.save_scenario_run(_scenario_run("shared", passed=False))  # replaces its own
        assert await beta.get_run("shared") == before
        assert before is not None and before.scenarios == []
        mine = await alpha.get_run("shared")
        assert mine is not None and mine.kind == "scenario"
        assert [s.status for s in mine.scenarios] == ["fail"]
        assert [r.passed for r in await alpha.list_scenario_runs("refund")] == [False]
        assert await beta.list_scenario_runs("refund") == []
        assert (await beta.scenario_history("refund")).points == []
        assert await queries.scenario_result(beta, "shared", 0) is None
        found = await queries.scenario_result(alpha, "shared", 0)
        assert found is not None and found.run_kind == "scenario"
        # beta posts its own scenario run under the id alpha now uses: its own again
        await beta.save_scenario_run(_scenario_run("other"))
        await alpha.save_scenario_run(_scenario_run("other", passed=False))
        beta_other = await beta.get_run("other")
        assert beta_other is not None and beta_other.passed_count == 1
    finally:
        await alpha.close()


async def test_one_trace_id_in_two_projects_keeps_two_traces(database_url: str) -> None:
    alpha, beta = _stores(database_url)
    try:
        await beta.save_trace(TraceRecord(trace_id="t1", agent_name="beta-bot"))
        await alpha.save_trace(TraceRecord(trace_id="t1", agent_name="alpha-bot"))
        await alpha.save_traces(
            [TraceRecord(trace_id="t2", agent_name="alpha-2"), TraceRecord(trace_id="t1")]
        )
        await beta.save_traces([TraceRecord(trace_id="t2", agent_name="beta-2")])
        beta_t1, alpha_t1 = await beta.get_trace("t1"), await alpha.get_trace("t1")
        assert beta_t1 is not None and beta_t1.agent_name == "beta-bot"
        assert alpha_t1 is not None and alpha_t1.agent_name == ""  # alpha's last save
        got = await alpha.get_traces(["t1", "t2", "t3"])
        assert {k: v.agent_name for k, v in got.items()} == {"t1": "", "t2": "alpha-2"}
        assert {k: v.agent_name for k, v in (await beta.get_traces(["t2"])).items()} == {
            "t2": "beta-2"
        }
        listed = await beta.search_traces()
        assert sorted(t.trace_id for t in listed.items) == ["t1", "t2"]
        assert await SqlStore(database_url, project="gamma").get_trace("t1") is None
    finally:
        await alpha.close()


async def test_pins_and_items_of_another_project_are_not_found(database_url: str) -> None:
    alpha, beta = _stores(database_url)
    try:
        await beta.ingest_run_log(make_run_log("r-beta"))
        await beta.save_trace(TraceRecord(trace_id="t-beta"))
        for what, object_id in (("run", "r-beta"), ("trace", "t-beta")):
            assert not await alpha.set_pinned(what, object_id)  # type: ignore[arg-type]
            assert not await alpha.set_pinned(what, "free-id")  # type: ignore[arg-type]
        assert await beta.set_pinned("run", "r-beta")
        assert not await alpha.set_pinned("run", "r-beta", False)
        beta_id = await beta.add_item("s", ScenarioItem(name="b", input="hi"))
        item = ScenarioItem(name="a", input="x")
        assert not await alpha.replace_item("s", beta_id, item)
        assert not await alpha.delete_item("s", beta_id)
        assert [i.name for i in await beta.get_items("s")] == ["b"]
        # compare: another project's run is as missing as a free id
        await alpha.ingest_run_log(make_run_log("r-alpha"))
        for baseline in ("r-beta", "free-id"):
            with pytest.raises(CompareError, match=f"no run '{baseline}'"):
                await compare_stored_runs(alpha, "r-alpha", baseline)
        with pytest.raises(CompareError, match="no run 'r-beta'"):
            await compare_stored_runs(alpha, "r-beta", "r-alpha")
    finally:
        await alpha.close()


async def test_snapshots_belong_to_one_project(database_url: str) -> None:
    alpha, beta = _stores(database_url)
    try:
        beta_first = _snapshot("t-beta", "beta-step")
        await beta.save_snapshot("golden", beta_first)
        assert await alpha.get_snapshot("golden") is None
        assert (await alpha.list_snapshots()).items == []
        await alpha.save_snapshot("golden", _snapshot("t-alpha", "alpha-step"))
        await alpha.save_snapshot("golden", _snapshot("t-alpha", "alpha-2"))
        beta_snapshot, alpha_snapshot = (
            await beta.get_snapshot("golden"),
            await alpha.get_snapshot("golden"),
        )
        assert beta_snapshot is not None and beta_snapshot.steps[0].name == "beta-step"
        assert alpha_snapshot is not None and alpha_snapshot.steps[0].name == "alpha-2"
        listed = {p: (await s.list_snapshots()).items for p, s in (("a", alpha), ("b", beta))}
        assert [(i.name, i.version, i.trace_id) for i in listed["a"]] == [("golden", 2, "t-alpha")]
        assert [(i.name, i.version, i.trace_id) for i in listed["b"]] == [("golden", 1, "t-beta")]
        # the same content saved again is one version, in each project alike
        await beta.save_snapshot("golden", beta_first, pinned=True)
        assert [(i.version, i.pinned) for i in (await beta.list_snapshots()).items] == [(1, True)]
        assert [i.pinned for i in (await alpha.list_snapshots()).items] == [False]
    finally:
        await alpha.close()


async def test_pruning_keeps_a_trace_only_for_its_own_projects_references(
    database_url: str,
) -> None:
    alpha, beta = _stores(database_url)
    try:
        for store in (alpha, beta):
            for trace_id in ("snap", "item", "pinned"):
                await store.save_trace(TraceRecord(trace_id=trace_id, started_at=OLD))
            await store.ingest_run_log(make_run_log("old-run", started_at=OLD))
        await alpha.save_snapshot("golden", _snapshot("snap", "x"))
        await alpha.save_items("s", [ScenarioItem(name="i", trace_id="item")])
        await alpha.set_pinned("trace", "pinned")
        await alpha.set_pinned("run", "old-run")
        result = await alpha.prune(datetime.now(UTC) - timedelta(days=30), every_project=True)
        assert (result.runs_deleted, result.traces_deleted) == (1, 3)
        assert sorted(t.trace_id for t in (await alpha.search_traces()).items) == [
            "item",
            "pinned",
            "snap",
        ]
        assert (await beta.search_traces()).items == []
        assert await alpha.get_run("old-run") is not None
        assert await beta.get_run("old-run") is None
    finally:
        await alpha.close()


async def test_pruning_one_project_leaves_the_others(database_url: str) -> None:
    alpha, beta = _stores(database_url)
    try:
        for store in (alpha, beta):
            await store.save_trace(TraceRecord(trace_id="old", started_at=OLD))
            await store.ingest_run_log(make_run_log("old-run", started_at=OLD))
        result = await alpha.prune_older_than_days(30)
        assert (result.runs_deleted, result.traces_deleted) == (1, 1)
        assert await alpha.get_trace("old") is None and await alpha.get_run("old-run") is None
        assert await beta.get_trace("old") is not None
        kept = await beta.get_run("old-run")
        assert kept is not None and len(kept.scenarios) == 2
    finally:
        await alpha.close()


async def test_dashboard_queries_read_their_project_only(database_url: str) -> None:
    alpha, beta = _stores(database_url)
    try:
        await beta.ingest_run_log(make_run_log("shared", outcomes={"refund": False}))
        await alpha.ingest_run_log(make_run_log("shared", outcomes={"refund": True}))
        beta_result = await queries.scenario_result(beta, "shared", 0)
        alpha_result = await queries.scenario_result(alpha, "shared", 0)
        assert beta_result is not None and beta_result.result.status == "fail"
        assert alpha_result is not None and alpha_result.result.status == "pass"
        assert [c.status for c in alpha_result.result.checks] == ["pass"]
        assert [m.run_id for m in await queries.failure_messages(beta, "refund")] == ["shared"]
        assert await queries.failure_messages(alpha, "refund") == []
        history = await alpha.scenario_history("refund")
        assert [(p.run_id, p.status) for p in history.points] == [("shared", "pass")]
        run = _scenario_run("veval-run").model_dump()
        run["items"] = [{"name": "i", "passed": True, "trace_id": "t1"}]
        await beta.save_scenario_run(ScenarioRunRecord.model_validate(run))
        assert await queries.item_verdicts(alpha, "t1", run_id="veval-run") == []
        assert len(await queries.item_verdicts(beta, "t1", run_id="veval-run")) == 1
    finally:
        await alpha.close()


def _diff(connection: Connection) -> list[object]:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from scenarist.store.sql.models import Base

    return list(compare_metadata(MigrationContext.configure(connection), Base.metadata))


def _downgrade_to(connection: Connection, revision: str) -> None:
    from alembic import command

    from scenarist.store.sql.migrate import alembic_config

    command.downgrade(alembic_config(connection), revision)


async def test_a_populated_0005_database_upgrades_with_each_row_in_its_project(
    database_url: str,
) -> None:
    """A database at 0005 (global ids) with runs, results, checks, traces, items, pins and
    snapshots in two projects, and one scenario result that a Veval run of alpha wrote
    into beta's run (0005 let it): after the upgrade every row is in its project, the
    stray result is gone, snapshots are in ``default``, and ids are per project."""
    from scenarist.store.sql import migrate

    alpha, beta = _stores(database_url)
    default = SqlStore(database_url)
    try:
        incomplete = make_run_log("run-b", outcomes={"refund": False})
        incomplete.footer = None
        await beta.ingest_run_log(incomplete)
        await alpha.ingest_run_log(make_run_log("run-a"))
        await alpha.set_pinned("run", "run-a")
        await alpha.save_trace(TraceRecord(trace_id="t-a", agent_name="alpha-bot"))
        await beta.save_trace(TraceRecord(trace_id="t-b", agent_name="beta-bot"))
        await alpha.set_pinned("trace", "t-a")
        await alpha.save_items("s", [ScenarioItem(name="i", trace_id="t-a")])
        await default.save_snapshot("golden", _snapshot("t-a", "one"))
        await default.save_snapshot("golden", _snapshot("t-a", "two"))
        engine = await default.engine()
        async with engine.begin() as connection:
            await connection.run_sync(_downgrade_to, "0005")
        async with engine.begin() as connection:  # what 0005 let alpha's Veval run write
            await connection.execute(
                text(
                    "INSERT INTO scenario_results SELECT run_id, 7, scenario_name, status, "
                    "sort_at, duration_ms, cost_usd, tokens_in, tokens_out, tags, "
                    "runs_executed, flaky, check_count, no_checks, document, 'alpha' "
                    "FROM scenario_results WHERE run_id = 'run-b' AND position = 0"
                )
            )
            columns = await connection.run_sync(
                lambda c: [col["name"] for col in inspect(c).get_columns("snapshots")]
            )
        assert await current_revision(engine) == "0005" and "project" not in columns

        await migrate.upgrade(engine)

        assert await current_revision(engine) == head_revision() == "0010"
        async with engine.connect() as connection:  # the schema is the models', exactly
            assert await connection.run_sync(_diff) == []
        beta_run, alpha_run = await beta.get_run("run-b"), await alpha.get_run("run-a")
        assert beta_run is not None and not beta_run.complete
        assert [(s.position, [c.status for c in s.checks]) for s in beta_run.scenarios] == [
            (0, ["fail"])
        ]
        assert alpha_run is not None and alpha_run.complete and len(alpha_run.scenarios) == 2
        assert sum(len(s.checks) for s in alpha_run.scenarios) == 2
        assert await alpha.get_run("run-b") is None and await beta.get_run("run-a") is None
        t_a, t_b = await alpha.get_trace("t-a"), await beta.get_trace("t-b")
        assert t_a is not None and t_a.agent_name == "alpha-bot"
        assert t_b is not None and await alpha.get_trace("t-b") is None
        assert [i.trace_id for i in await alpha.get_items("s")] == ["t-a"]
        assert [(i.name, i.version) for i in (await default.list_snapshots()).items] == [
            ("golden", 2)
        ]
        assert (await alpha.list_snapshots()).items == []
        # ids are now per project: alpha stores its own run-b beside beta's
        assert (await alpha.ingest_run_log(make_run_log("run-b"))).created
        kept = await beta.get_run("run-b")
        assert kept is not None and not kept.complete
        # pins kept: pruning everything spares alpha's pinned run and trace
        await alpha.prune(datetime.now(UTC) + timedelta(days=1), every_project=True)
        assert await alpha.get_run("run-a") is not None and await alpha.get_trace("t-a")
        assert await beta.get_trace("t-b") is None
        async with engine.begin() as connection:  # no default project at the SQL level
            with pytest.raises(IntegrityError):
                await connection.execute(
                    text(
                        "INSERT INTO snapshots (name, version, created_at, pinned, document) "
                        "VALUES ('x', 1, '2026-01-01', false, '{}')"
                    )
                )
    finally:
        await default.close()
