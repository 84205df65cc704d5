"""Comparing two stored runs: the classification of :mod:`scenarist.model.comparison` (fixed,
broken, still failing, new, removed, skipped, flaky changes, pass rates, significant
regressions) computed from the ``scenario_results`` rows, so a run is compared without
loading its documents.

``baseline`` is a run id, or ``"previous"``: the newest older run of the same kind and
name (the run page's "previous run"). A plain function over a
:class:`~.engine.Database`, like :mod:`.dashboard`; the API route and the dashboard's
compare page both call :func:`compare_stored_runs`.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel
from sqlalchemy import and_, or_, select

from scenarist.model.comparison import RunComparison, ScenarioOutcome, compare_outcomes
from scenarist.model.stats import ALPHA
from scenarist.store.sql.engine import Database
from scenarist.store.sql.models import RunRow, ScenarioResultRow, table_of

__all__ = ["PREVIOUS", "CompareError", "ComparedRun", "StoredComparison", "compare_stored_runs"]

PREVIOUS = "previous"
_RUNS = table_of(RunRow)
_SCENARIOS = table_of(ScenarioResultRow)


class CompareError(Exception):
    """A run to compare is not stored (or has no previous run): a 404."""


class ComparedRun(BaseModel):
    """One side of a comparison."""

    run_id: str
    kind: str
    name: str | None
    started_at: datetime | None
    scenario_count: int
    pass_rate: float | None


class StoredComparison(BaseModel):
    """``run`` against ``baseline``: what changed, scenario by scenario."""

    run: ComparedRun
    baseline: ComparedRun
    comparison: RunComparison
    has_regressions: bool


async def _previous_run_id(db: Database, run_id: str) -> str | None:
    async with db._read() as connection:
        row = (
            await connection.execute(
                select(_RUNS.c.kind, _RUNS.c.name, _RUNS.c.sort_at).where(
                    _RUNS.c.run_id == run_id, _RUNS.c.project == db.project
                )
            )
        ).first()
        if row is None or row.name is None:
            return None
        previous: str | None = await connection.scalar(
            select(_RUNS.c.run_id)
            .where(
                _RUNS.c.project == db.project,
                _RUNS.c.kind == row.kind,
                _RUNS.c.name == row.name,
                or_(
                    _RUNS.c.sort_at < row.sort_at,
                    and_(_RUNS.c.sort_at == row.sort_at, _RUNS.c.run_id < run_id),
                ),
            )
            .order_by(_RUNS.c.sort_at.desc(), _RUNS.c.run_id.desc())
            .limit(1)
        )
    return previous


async def _outcomes(db: Database, run_id: str) -> tuple[ComparedRun, list[ScenarioOutcome]]:
    async with db._read() as connection:
        run = (
            await connection.execute(
                select(_RUNS.c.run_id, _RUNS.c.kind, _RUNS.c.name, _RUNS.c.started_at).where(
                    _RUNS.c.run_id == run_id, _RUNS.c.project == db.project
                )
            )
        ).first()
        if run is None:
            raise CompareError(f"no run {run_id!r}")
        rows = (
            await connection.execute(
                select(
                    _SCENARIOS.c.scenario_name,
                    _SCENARIOS.c.status,
                    _SCENARIOS.c.flaky,
                    _SCENARIOS.c.repeats_passed,
                    _SCENARIOS.c.repeats_total,
                )
                .where(_SCENARIOS.c.project == db.project, _SCENARIOS.c.run_id == run_id)
                .order_by(_SCENARIOS.c.position)
            )
        ).all()
    outcomes = [
        ScenarioOutcome(
            scenario_name=row.scenario_name,
            status_text=row.status,
            is_flaky=bool(row.flaky),
            repeats_passed=row.repeats_passed,
            repeats_total=row.repeats_total,
        )
        for row in rows
    ]
    decided = [o for o in outcomes if o.status_text != "skip"]
    rate = sum(o.status_text == "pass" for o in decided) / len(decided) if decided else None
    side = ComparedRun(
        run_id=run.run_id,
        kind=run.kind,
        name=run.name,
        started_at=run.started_at,
        scenario_count=len(outcomes),
        pass_rate=rate,
    )
    return side, outcomes


async def compare_stored_runs(
    db: Database, run_id: str, baseline: str, *, alpha: float = ALPHA
) -> StoredComparison:
    """``run_id`` compared with ``baseline`` (a run id or ``"previous"``); raises
    :class:`CompareError` when either run is missing. ``alpha``: the level at which a
    scenario's drop in pass rate counts as a regression (one-sided Fisher exact test on
    its repeats' pass counts, kept in ``scenario_results`` since migration 0008)."""
    current, after = await _outcomes(db, run_id)
    if baseline == PREVIOUS:
        previous = await _previous_run_id(db, run_id)
        if previous is None:
            raise CompareError(
                f"run {run_id!r} has no previous run of the same name to compare with; "
                "pass a run id as baseline"
            )
        baseline = previous
    base, before = await _outcomes(db, baseline)
    comparison = compare_outcomes(
        before, after, baseline_pass_rate=base.pass_rate, pass_rate=current.pass_rate, alpha=alpha
    )
    return StoredComparison(
        run=current,
        baseline=base,
        comparison=comparison,
        has_regressions=comparison.has_regressions,
    )
