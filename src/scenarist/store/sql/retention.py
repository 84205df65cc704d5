"""Retention: pins, and pruning runs and traces older than a cutoff.

What pruning never deletes: a pinned run or trace; a trace that a scenario item of its
own project refers to (``scenario_items.trace_id``, a trace-backed item would stop
replaying) or that a snapshot of its own project was taken from (``snapshots.trace_id``,
any version). A reference from another project keeps nothing: ids are per project, so
it names that project's trace. Items and snapshots are never pruned: they are curated by
people, not produced by runs. Pruning covers the store's project, or every project when
the server applies its retention policy (at start, ``scenarist db prune``).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from typing import Literal

from pydantic import BaseModel
from sqlalchemy import delete, exists, select, update

from scenarist.errors import UserError
from scenarist.store.sql._batches import batches
from scenarist.store.sql.engine import Database
from scenarist.store.sql.models import (
    CheckResultRow,
    RunRow,
    ScenarioItemRow,
    ScenarioResultRow,
    SnapshotRow,
    TraceRow,
    table_of,
)

__all__ = ["PruneResult", "RetentionQueries", "retention_days_from_env"]

_RUNS = table_of(RunRow)
_SCENARIOS = table_of(ScenarioResultRow)
_CHECKS = table_of(CheckResultRow)
_TRACES = table_of(TraceRow)
_ITEMS = table_of(ScenarioItemRow)
_SNAPSHOTS = table_of(SnapshotRow)


class PruneResult(BaseModel):
    """What one pruning pass removed (``cutoff`` is ``None`` when retention is off)."""

    cutoff: datetime | None
    runs_deleted: int = 0
    traces_deleted: int = 0


def retention_days_from_env() -> float | None:
    """``SCENARIST_RETENTION_DAYS`` as a number of days; ``None`` (keep everything) when
    unset, empty, ``0`` or ``off``."""
    raw = os.environ.get("SCENARIST_RETENTION_DAYS", "").strip().lower()
    if raw in ("", "0", "off", "none", "never"):
        return None
    try:
        days = float(raw)
    except ValueError:
        days = -1.0
    if days <= 0:
        raise UserError(
            f"SCENARIST_RETENTION_DAYS={raw!r} is not a positive number of days; set e.g. "
            "90, or leave it unset to keep everything"
        )
    return days


class RetentionQueries(Database):
    """Pins and pruning (mixed into :class:`~.store.SqlStore`)."""

    async def set_pinned(
        self, what: Literal["run", "trace"], object_id: str, pinned: bool = True
    ) -> bool:
        """Pin (or unpin) a run or a trace; false when there is no such row."""
        table, column = (_RUNS, _RUNS.c.run_id) if what == "run" else (_TRACES, _TRACES.c.trace_id)
        async with self._write() as connection:
            done = await connection.execute(
                update(table)
                .where(column == object_id, table.c.project == self.project)
                .values(pinned=pinned)
            )
        return bool(done.rowcount)

    async def prune(self, older_than: datetime, *, every_project: bool = False) -> PruneResult:
        """Delete runs and traces of this project whose time (``sort_at``) is before
        ``older_than``, except pinned ones and traces that items or snapshots of the same
        project refer to (one transaction). ``every_project``: the same in every project
        (the server's start and ``scenarist db prune``: the retention policy is the
        server's), each trace still kept only for its own project's references."""
        old_runs = select(_RUNS.c.project, _RUNS.c.run_id).where(
            _RUNS.c.sort_at < older_than, _RUNS.c.pinned.is_(False)
        )
        old_traces = [_TRACES.c.sort_at < older_than, _TRACES.c.pinned.is_(False)]
        if not every_project:
            old_runs = old_runs.where(_RUNS.c.project == self.project)
            old_traces.append(_TRACES.c.project == self.project)
        referenced = [
            exists().where(
                table.c.project == _TRACES.c.project, table.c.trace_id == _TRACES.c.trace_id
            )
            for table in (_ITEMS, _SNAPSHOTS)
        ]
        async with self._write() as connection:
            runs = [tuple(row) for row in (await connection.execute(old_runs)).all()]
            by_project: dict[str, list[str]] = {}
            for project, run_id in runs:
                by_project.setdefault(project, []).append(run_id)
            for project, run_ids in by_project.items():
                for batch in batches(run_ids):  # under the drivers' argument limits
                    for table in (_CHECKS, _SCENARIOS, _RUNS):
                        await connection.execute(
                            delete(table).where(
                                table.c.project == project, table.c.run_id.in_(batch)
                            )
                        )
            traces = await connection.execute(
                delete(_TRACES).where(*old_traces, *(~found for found in referenced))
            )
        return PruneResult(
            cutoff=older_than, runs_deleted=len(runs), traces_deleted=traces.rowcount or 0
        )

    async def prune_older_than_days(
        self, days: float | None, *, every_project: bool = False
    ) -> PruneResult:
        """:meth:`prune` with a cutoff ``days`` ago; nothing when ``days`` is ``None``."""
        if days is None:
            return PruneResult(cutoff=None)
        cutoff = datetime.now(UTC) - timedelta(days=days)
        return await self.prune(cutoff, every_project=every_project)
