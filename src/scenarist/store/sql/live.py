"""Runs that arrive while they run: a run log sent in parts.

A client posts the header first (``POST /api/runs`` with no scenarios and no footer: an
incomplete run), then scenario records in batches, then the footer
(``POST /api/runs/{id}/records``, :meth:`LiveRunQueries.append_run_records`). Until the
footer comes the run is incomplete and its page shows what has arrived; a run whose client
died keeps what it sent. ``ingested_at`` is the time the last part arrived (the page stops
calling a run "running" when nothing came for a while). The whole log again (``POST
/api/runs``, complete) still replaces an incomplete run, so a client that lost parts can
send everything at the end.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from sqlalchemy import func, select, update

from scenarist.errors import UserError
from scenarist.model.status import pass_rate
from scenarist.store.sql._rows import run_log_rows
from scenarist.store.sql.engine import Database
from scenarist.store.sql.models import CheckResultRow, RunRow, ScenarioResultRow, table_of

if TYPE_CHECKING:
    from scenarist.formats.runlog import RunLog

__all__ = ["AppendResult", "LiveRunQueries", "RunClosed", "RunNotFound"]

_RUNS = table_of(RunRow)
_SCENARIOS = table_of(ScenarioResultRow)
_CHECKS = table_of(CheckResultRow)
_BATCH = 2000


class RunNotFound(Exception):
    """No run of this id in the store's project."""


class RunClosed(Exception):
    """The run cannot take more records: complete already, or not a suite run."""


class AppendResult(BaseModel):
    run_id: str
    added: int
    """Scenario records stored by this part."""
    scenario_count: int
    """Scenario records the run holds now."""
    complete: bool


class LiveRunQueries(Database):
    """Appending to an incomplete run (mixed into :class:`~.store.SqlStore`)."""

    async def run_header(self, run_id: str) -> dict[str, Any]:
        """The stored header of an incomplete suite run of this project (to decode the
        next part against). Raises :class:`RunNotFound` or :class:`RunClosed`."""
        query = select(_RUNS.c.kind, _RUNS.c.complete, _RUNS.c.document).where(
            _RUNS.c.project == self.project, _RUNS.c.run_id == run_id
        )
        async with self._read() as connection:
            row = (await connection.execute(query)).first()
        if row is None:
            raise RunNotFound(f"no run {run_id!r}: post its header first (POST /api/runs)")
        if row.kind != "suite":
            raise RunClosed(f"run {run_id!r} is a scenario run: it takes no records")
        if row.complete:
            raise RunClosed(f"run {run_id!r} is complete: it takes no more records")
        header: dict[str, Any] = json.loads(row.document).get("header") or {}
        return header

    async def append_run_records(self, log: RunLog) -> AppendResult:
        """Store ``log``'s scenario records (and its footer, which completes the run) in
        the incomplete run of the same id, in one transaction; the run's counts are
        recounted from its rows (the footer's, once it comes)."""
        now = datetime.now(UTC)
        run, scenarios, checks = run_log_rows(log, now)
        project, run_id = self.project, run["run_id"]
        for row in (*scenarios, *checks):
            row["project"] = project
        mine = (_RUNS.c.project == project) & (_RUNS.c.run_id == run_id)
        async with self._write() as connection:
            found = (
                await connection.execute(select(_RUNS.c.kind, _RUNS.c.complete).where(mine))
            ).first()
            if found is None:
                raise RunNotFound(f"no run {run_id!r}: post its header first (POST /api/runs)")
            if found.complete or found.kind != "suite":
                raise RunClosed(f"run {run_id!r} is complete: it takes no more records")
            positions = [s["position"] for s in scenarios]
            if positions:
                taken = (
                    await connection.scalars(
                        select(_SCENARIOS.c.position).where(
                            _SCENARIOS.c.project == project,
                            _SCENARIOS.c.run_id == run_id,
                            _SCENARIOS.c.position.in_(positions[:900]),
                        )
                    )
                ).first()
                if taken is not None:
                    raise UserError(
                        f"scenarios[].index: run {run_id!r} already holds scenario index "
                        f"{taken}; each record needs its own index"
                    )
            for table, rows in ((_SCENARIOS, scenarios), (_CHECKS, checks)):
                for start in range(0, len(rows), _BATCH):
                    await connection.execute(table.insert(), rows[start : start + _BATCH])
            totals = (
                await connection.execute(
                    select(
                        _SCENARIOS.c.status,
                        func.count(),
                        func.sum(_SCENARIOS.c.cost_usd),
                        func.count(_SCENARIOS.c.cost_usd),
                        func.sum(_SCENARIOS.c.tokens_in),
                        func.sum(_SCENARIOS.c.tokens_out),
                    )
                    .where(_SCENARIOS.c.project == project, _SCENARIOS.c.run_id == run_id)
                    .group_by(_SCENARIOS.c.status)
                )
            ).all()
            counts = {status: int(n) for status, n, *_ in totals}
            priced = sum(int(row[3]) for row in totals)
            values: dict[str, Any] = {
                "total_count": sum(counts.values()),
                "passed_count": counts.get("pass", 0),
                "failed_count": counts.get("fail", 0),
                "errored_count": counts.get("error", 0),
                "skipped_count": counts.get("skip", 0),
                "pass_rate": pass_rate(
                    counts.get("pass", 0),
                    counts.get("pass", 0) + counts.get("fail", 0) + counts.get("error", 0),
                ),
                "cost_usd": sum(float(row[2] or 0) for row in totals) if priced else None,
                "tokens_in": sum(int(row[4] or 0) for row in totals),
                "tokens_out": sum(int(row[5] or 0) for row in totals),
                "ingested_at": now,
            }
            if log.footer is not None:
                footer_columns = (
                    "ended_at", "duration_ms", "passed_count", "failed_count", "errored_count",
                    "skipped_count", "pass_rate", "cost_usd", "tokens_in", "tokens_out",
                    "complete", "document",
                )  # fmt: skip
                values.update({name: run[name] for name in footer_columns})
            await connection.execute(update(_RUNS).where(mine).values(**values))
        return AppendResult(
            run_id=run_id,
            added=len(scenarios),
            scenario_count=values["total_count"],
            complete=log.footer is not None,
        )
