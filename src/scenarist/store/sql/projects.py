"""The ``projects`` table: every project written to, for the dashboard's switcher.

A write to a project the process has not yet seen on a database adds its row (insert or
ignore, in the write's own transaction); after that the write costs nothing more. Which
project a store reads and writes is :attr:`Database.project` (:mod:`scenarist.store.projects`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sqlalchemy import select

from scenarist.store.sql.engine import Database
from scenarist.store.sql.models import ProjectRow, table_of

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

__all__ = ["ProjectQueries", "ensure_project"]

_PROJECTS = table_of(ProjectRow)
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
