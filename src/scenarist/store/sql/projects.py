"""The ``projects`` table: every project written to, for the dashboard's switcher.

A write to a project the process has not yet seen on a database adds its row (insert or
ignore, in the write's own transaction); after that the write costs nothing more. Which
project a store reads and writes is :attr:`Database.project` (:mod:`scenarist.store.projects`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel
from sqlalchemy import func, select

from scenarist.store.sql.engine import Database
from scenarist.store.sql.models import ProjectRow, RunRow, TraceRow, table_of

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

__all__ = ["ProjectActivity", "ProjectQueries", "ensure_project"]

_PROJECTS = table_of(ProjectRow)
_RUNS = table_of(RunRow)
_TRACES = table_of(TraceRow)


class ProjectActivity(BaseModel):
    """What a project holds: its runs and traces, and when the newest run started."""

    project: str
    runs: int = 0
    traces: int = 0
    last_run_at: datetime | None = None


_seen: set[tuple[str, str]] = set()  # (database URL, project) known to have their row


async def ensure_project(db: Database, connection: AsyncConnection, project: str) -> None:
    """The row of ``project`` exists once ``connection``'s transaction commits."""
    if (db.url, project) in _seen:
        return
    statement = db._insert(_PROJECTS).on_conflict_do_nothing(index_elements=["name"])
    await connection.execute(statement, [{"name": project, "created_at": datetime.now(UTC)}])
    _seen.add((db.url, project))


class ProjectQueries(Database):
    """Listing projects (mixed into :class:`~.store.SqlStore`)."""

    async def list_projects(self) -> list[str]:
        """Every project written to, by name (``default`` always among them)."""
        async with self._read() as connection:
            rows = await connection.scalars(select(_PROJECTS.c.name).order_by(_PROJECTS.c.name))
            return list(rows)

    async def project_activity(self, projects: list[str] | None = None) -> list[ProjectActivity]:
        """Each project's run and trace counts and newest run (every project, or those
        named), by name. Reads across projects: callers limit it to what the key opens."""
        runs = select(_RUNS.c.project, func.count(), func.max(_RUNS.c.sort_at)).group_by(
            _RUNS.c.project
        )
        traces = select(_TRACES.c.project, func.count()).group_by(_TRACES.c.project)
        if projects is not None:
            runs = runs.where(_RUNS.c.project.in_(projects))
            traces = traces.where(_TRACES.c.project.in_(projects))
        async with self._read() as connection:
            run_rows = (await connection.execute(runs)).all()
            trace_rows = (await connection.execute(traces)).all()
            names = list(await connection.scalars(select(_PROJECTS.c.name)))
        wanted = names if projects is None else projects  # a named one may hold nothing yet
        found = {name: ProjectActivity(project=name) for name in wanted}
        for name, count, last in run_rows:
            entry = found.setdefault(name, ProjectActivity(project=name))
            entry.runs, entry.last_run_at = int(count), last
        for name, count in trace_rows:
            found.setdefault(name, ProjectActivity(project=name)).traces = int(count)
        return [found[name] for name in sorted(found)]
