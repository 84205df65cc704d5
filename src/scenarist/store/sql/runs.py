"""Runs: run-log ingestion and the queries over runs, scenario results and history."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, delete, func, or_, select

from scenarist.model.results import StepError
from scenarist.model.status import pass_rate_of
from scenarist.store.sql._bulk import insert_rows
from scenarist.store.sql._paging import cursor_time, keyset, page_of
from scenarist.store.sql._rows import run_log_rows, scenario_run_rows
from scenarist.store.sql._subset import USUAL_WINDOW, is_subset
from scenarist.store.sql.engine import Database
from scenarist.store.sql.models import CheckResultRow, RunRow, ScenarioResultRow, table_of
from scenarist.store.sql.projects import ensure_project
from scenarist.store.sql.records import (
    CheckResultView,
    HistoryPoint,
    IngestResult,
    Page,
    RunDetail,
    RunSummary,
    ScenarioHistory,
    ScenarioResultView,
    decode_cursor,
    encode_cursor,
)

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

    from scenarist.formats.runlog import RunLog
    from scenarist.model.items import ScenarioRunRecord

__all__ = ["RunQueries"]

_RUNS = table_of(RunRow)
_SCENARIOS = table_of(ScenarioResultRow)
_CHECKS = table_of(CheckResultRow)
_SUMMARY_COLUMNS = [_RUNS.c[name] for name in RunSummary.model_fields]


class RunQueries(Database):
    """Ingestion and queries for runs (mixed into :class:`~.store.SqlStore`)."""

    async def ingest_run_log(self, log: RunLog) -> IngestResult:
        """Store a whole run log in one transaction, idempotently.

        The same run id again stores nothing (``created=False``), except that a complete
        log (with a footer) replaces an incomplete one of the same id: an interrupted run
        uploaded first and re-sent once finished ends up complete, never doubled.
        """
        run, scenarios, checks = run_log_rows(log, datetime.now(UTC))
        project = log.header.project or self.project
        for row in (run, *scenarios, *checks):
            row["project"] = project
        result = IngestResult(
            run_id=run["run_id"],
            created=True,
            scenario_count=len(scenarios),
            check_count=len(checks),
        )
        async with self._write() as connection:
            await ensure_project(self, connection, project)
            if not run["subset"] and run["name"] is not None:
                run["subset"] = await _fewer_than_usual(connection, project, run)
            inserted = await connection.execute(
                self._insert(_RUNS)
                .values(run)
                .on_conflict_do_nothing(index_elements=["project", "run_id"])
                .returning(_RUNS.c.run_id)
            )
            if inserted.first() is None:
                existing = (
                    await connection.execute(
                        select(_RUNS.c.complete, _RUNS.c.pinned).where(
                            _RUNS.c.project == project, _RUNS.c.run_id == run["run_id"]
                        )
                    )
                ).first()
                if existing is None or existing.complete or not run["complete"]:
                    return result.model_copy(update={"created": False})
                await self._delete_run(connection, project, run["run_id"])
                await connection.execute(_RUNS.insert(), [{**run, "pinned": existing.pinned}])
            await insert_rows(connection, _SCENARIOS, scenarios)
            await insert_rows(connection, _CHECKS, checks)
        return result

    async def _delete_run(self, connection: AsyncConnection, project: str, run_id: str) -> None:
        for table in (_CHECKS, _SCENARIOS, _RUNS):
            await connection.execute(
                delete(table).where(table.c.project == project, table.c.run_id == run_id)
            )

    async def save_scenario_run(
        self, run: ScenarioRunRecord, *, extra: dict[str, Any] | None = None
    ) -> None:
        """Store (or replace) the summary of one Veval-style scenario run."""
        run_row, result_row = scenario_run_rows(run, datetime.now(UTC), extra)
        run_row["project"] = result_row["project"] = self.project
        upserts = [
            (self._upsert(_RUNS, run_row, ("project", "run_id")), run_row),
            (self._upsert(_SCENARIOS, result_row, ("project", "run_id", "position")), result_row),
        ]

        async def write(connection: AsyncConnection) -> None:
            await ensure_project(self, connection, run_row["project"])
            for statement, row in upserts:
                await connection.execute(statement, row)

        await self._batched(write)

    async def scenario_runs_page(
        self, scenario_name: str, *, cursor: str | None = None, limit: int = 100
    ) -> Page[ScenarioRunRecord]:
        """Veval-style runs of ``scenario_name``, oldest first."""
        from scenarist.model.items import ScenarioRunRecord

        query = select(_RUNS.c.document, _RUNS.c.sort_at, _RUNS.c.run_id).where(
            _RUNS.c.kind == "scenario",
            _RUNS.c.name == scenario_name,
            _RUNS.c.project == self.project,
        )
        query = keyset(query, _RUNS.c.sort_at, _RUNS.c.run_id, cursor, limit, newest_first=False)
        async with self._read() as connection:
            rows = (await connection.execute(query)).all()
        return page_of(
            rows,
            limit,
            lambda row: ScenarioRunRecord.model_validate_json(row.document),
            lambda row: (row.sort_at, row.run_id),
        )

    async def list_scenario_runs(self, scenario_name: str) -> list[ScenarioRunRecord]:
        """Every Veval-style run of ``scenario_name``, oldest first (the Store protocol)."""
        runs: list[ScenarioRunRecord] = []
        cursor: str | None = None
        while True:
            page = await self.scenario_runs_page(scenario_name, cursor=cursor, limit=1000)
            runs.extend(page.items)
            if page.next_cursor is None:
                return runs
            cursor = page.next_cursor

    async def list_runs(
        self,
        *,
        cursor: str | None = None,
        limit: int = 50,
        kind: str | None = None,
        name: str | None = None,
    ) -> Page[RunSummary]:
        """Runs, newest first, optionally of one ``kind`` and suite/scenario ``name``."""
        query = select(*_SUMMARY_COLUMNS, _RUNS.c.sort_at).where(_RUNS.c.project == self.project)
        if kind is not None:
            query = query.where(_RUNS.c.kind == kind)
        if name is not None:
            query = query.where(_RUNS.c.name == name)
        query = keyset(query, _RUNS.c.sort_at, _RUNS.c.run_id, cursor, limit)
        async with self._read() as connection:
            rows = (await connection.execute(query)).all()
        return page_of(
            rows,
            limit,
            lambda row: RunSummary.model_validate(row._mapping, from_attributes=False),
            lambda row: (row.sort_at, row.run_id),
        )

    async def count_runs(self) -> int:
        async with self._read() as connection:
            count = select(func.count()).select_from(_RUNS).where(_RUNS.c.project == self.project)
            return int(await connection.scalar(count) or 0)

    async def get_run(self, run_id: str) -> RunDetail | None:
        """One run with its scenario results and their check verdicts."""
        async with self._read() as connection:
            run = (
                await connection.execute(
                    select(*_SUMMARY_COLUMNS, _RUNS.c.document).where(
                        _RUNS.c.run_id == run_id, _RUNS.c.project == self.project
                    )
                )
            ).first()
            if run is None:
                return None
            scenarios = (
                await connection.execute(
                    select(_SCENARIOS)
                    .where(_SCENARIOS.c.project == self.project, _SCENARIOS.c.run_id == run_id)
                    .order_by(_SCENARIOS.c.position)
                )
            ).all()
            checks = (
                await connection.execute(
                    select(_CHECKS)
                    .where(_CHECKS.c.project == self.project, _CHECKS.c.run_id == run_id)
                    .order_by(_CHECKS.c.position, _CHECKS.c.step_index, _CHECKS.c.check_index)
                )
            ).all()
        by_position: dict[int, list[CheckResultView]] = {}
        for check in checks:
            by_position.setdefault(check.position, []).append(
                CheckResultView.model_validate(dict(check._mapping))
            )
        views = []
        for row in scenarios:
            data = dict(row._mapping)
            data["tags"] = json.loads(data["tags"])
            data["checks"] = by_position.get(row.position, [])
            if row.status == "error":  # a scenario the budget did not start is an ERROR
                data["outcome"] = _outcome(data["document"])
                data["error"] = step_error(data["document"])
            views.append(ScenarioResultView.model_validate(data))
        data = dict(run._mapping)
        data["document"] = json.loads(data["document"])
        return RunDetail.model_validate({**data, "scenarios": views})

    async def run_log_text(self, run_id: str) -> str | None:
        """The run log of suite run ``run_id`` rebuilt from what the store keeps (JSON
        Lines: its header, each scenario's full record, its footer when it finished), as
        ``scenarist run`` wrote it; ``None`` when this project holds no such run. A
        Veval-style run has no run log: a :class:`~scenarist.errors.UserError` says so."""
        from scenarist.errors import UserError

        async with self._read() as connection:
            run = (
                await connection.execute(
                    select(_RUNS.c.kind, _RUNS.c.document).where(
                        _RUNS.c.run_id == run_id, _RUNS.c.project == self.project
                    )
                )
            ).first()
            if run is None:
                return None
            if run.kind != "suite":
                raise UserError(
                    f"run {run_id!r} is a {run.kind} run (items), not a suite run: it has no "
                    "run log; open it in the dashboard"
                )
            documents = (
                await connection.execute(
                    select(_SCENARIOS.c.document)
                    .where(_SCENARIOS.c.project == self.project, _SCENARIOS.c.run_id == run_id)
                    .order_by(_SCENARIOS.c.position)
                )
            ).scalars()
            scenarios = [document for document in documents if document]
        stored = json.loads(run.document)
        lines = [json.dumps(stored["header"], ensure_ascii=False, separators=(",", ":"))]
        lines.extend(scenarios)
        if stored.get("footer") is not None:
            lines.append(json.dumps(stored["footer"], ensure_ascii=False, separators=(",", ":")))
        return "".join(line + "\n" for line in lines)

    async def scenario_suites(self, scenario_name: str, *, limit: int = 100) -> list[str]:
        """The suites that hold a scenario named ``scenario_name`` (``""``: Veval-style
        runs and unnamed suites), by name: a scenario is known by (project, suite, name).
        Read from the ``(project, scenario_name, suite_name, sort_at)`` index alone."""
        query = (
            select(_SCENARIOS.c.suite_name)
            .where(
                _SCENARIOS.c.project == self.project, _SCENARIOS.c.scenario_name == scenario_name
            )
            .distinct()
            .order_by(_SCENARIOS.c.suite_name)
            .limit(limit)
        )
        async with self._read() as connection:
            return [str(s) for s in (await connection.execute(query)).scalars()]

    async def scenario_history(
        self,
        scenario_name: str,
        *,
        suite: str | None = None,
        cursor: str | None = None,
        limit: int = 100,
    ) -> ScenarioHistory:
        """The results of the scenario ``scenario_name`` of suite ``suite`` (``""``: its
        Veval-style runs and unnamed suites; ``None``: every suite, as the budget's cost
        estimate reads it) across runs, newest first; ``pass_rate`` is over the returned
        points that passed, failed or errored."""
        query = (
            select(_SCENARIOS, _RUNS.c.kind, _RUNS.c.subset)
            .join(
                _RUNS,
                and_(
                    _RUNS.c.project == _SCENARIOS.c.project,
                    _RUNS.c.run_id == _SCENARIOS.c.run_id,
                ),
            )
            .where(
                _SCENARIOS.c.project == self.project, _SCENARIOS.c.scenario_name == scenario_name
            )
        )
        if suite is not None:
            query = query.where(_SCENARIOS.c.suite_name == suite)
        if cursor is not None:
            at, run_id, position = decode_cursor(cursor, size=3, kinds=(str, str, int))
            before = cursor_time(at, cursor)
            query = query.where(
                or_(
                    _SCENARIOS.c.sort_at < before,
                    and_(_SCENARIOS.c.sort_at == before, _SCENARIOS.c.run_id < run_id),
                    and_(
                        _SCENARIOS.c.sort_at == before,
                        _SCENARIOS.c.run_id == run_id,
                        _SCENARIOS.c.position < position,
                    ),
                )
            )
        query = query.order_by(
            _SCENARIOS.c.sort_at.desc(), _SCENARIOS.c.run_id.desc(), _SCENARIOS.c.position.desc()
        ).limit(limit + 1)
        async with self._read() as connection:
            rows = (await connection.execute(query)).all()
        more = len(rows) > limit
        rows = rows[:limit]
        points = [
            HistoryPoint(
                run_id=row.run_id,
                run_kind=row.kind,
                started_at=row.sort_at,
                status=row.status,
                duration_ms=row.duration_ms,
                cost_usd=row.cost_usd,
                flaky=row.flaky,
                repeats_passed=row.repeats_passed,
                repeats_total=row.repeats_total,
                rate_verdict=row.rate_verdict,
                suite_name=row.suite_name,
                subset=row.subset,
            )
            for row in rows
        ]
        rate = pass_rate_of(p.status for p in points)
        last = rows[-1] if rows and more else None
        return ScenarioHistory(
            scenario_name=scenario_name,
            suite_name=suite,
            points=points,
            pass_rate=rate,
            next_cursor=encode_cursor(last.sort_at, last.run_id, last.position) if last else None,
        )


async def _fewer_than_usual(connection: AsyncConnection, project: str, run: dict[str, Any]) -> bool:
    """Whether the run has fewer scenarios than its suite's usual set (``_subset``): the
    counts of the suite's newest earlier full runs, a range read on ``(kind, name,
    sort_at)``."""
    earlier = (
        select(_RUNS.c.total_count)
        .where(
            _RUNS.c.kind == "suite",
            _RUNS.c.name == run["name"],
            _RUNS.c.project == project,
            _RUNS.c.sort_at < run["sort_at"],
            _RUNS.c.subset.is_(False),
            _RUNS.c.run_id != run["run_id"],
        )
        .order_by(_RUNS.c.sort_at.desc())
        .limit(USUAL_WINDOW)
    )
    counts = [int(n) for n in (await connection.execute(earlier)).scalars()]
    return is_subset(run["total_count"], counts)


def step_error(document: str | None) -> str | None:
    """The first step error of a stored scenario record, described, if it has one."""
    if not document:
        return None
    try:
        steps = json.loads(document).get("result", {}).get("steps") or []
        error = next(step["error"] for step in steps if step.get("error"))
        return StepError.model_validate(error).describe()
    except (ValueError, AttributeError, TypeError, KeyError, StopIteration):
        return None  # not a suite scenario's record (a Veval-style run), or none


def _outcome(document: str | None) -> str | None:
    """A stored scenario record's ``outcome`` (``"budget"``), read only for errored rows."""
    try:
        found = json.loads(document or "{}").get("outcome")
    except (ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None
